#pragma once
// Exact Pareto-frontier extraction over any number of objectives. A row is off the frontier only
// if another row is no worse in every objective and strictly better in one, so rows with equal
// objective values stay on the frontier together (duplicates included). Rows with a NaN in any
// objective do not take part. Pure algorithms, no I/O.
#include <cstddef>
#include <string>
#include <vector>

namespace toposweep::frontier {

// One objective: a field name and its sense. Written "cost_usd" (minimised) or
// "max:samples_per_s" (maximised).
struct Objective {
  std::string field;
  bool maximize = false;
  std::string spelled() const { return maximize ? "max:" + field : field; }
};

// Parse "cost_usd,max:samples_per_s". Throws BadInput naming `where` for an empty list, an empty
// name, an unknown prefix or a repeated field.
std::vector<Objective> parse_objectives(const std::string& text, const std::string& where);
std::string spell_objectives(const std::vector<Objective>& objectives);

// Objective values, row-major: row r, objective k is values[r * dims + k]. All minimised; negate
// a maximised column before calling (see oriented_values).
struct ObjectiveMatrix {
  std::size_t rows = 0;
  std::size_t dims = 0;
  std::vector<double> values;
  double at(std::size_t r, std::size_t k) const { return values[r * dims + k]; }
};

// Build a matrix from one column per objective, negating maximised ones.
ObjectiveMatrix oriented_values(const std::vector<std::vector<double>>& columns,
                                const std::vector<Objective>& objectives);

// Row numbers of the non-dominated rows, ascending. Dispatches to the O(N log N) sweep for two
// objectives and to sort-filter for more.
std::vector<std::size_t> pareto_front(const ObjectiveMatrix& m);
// Two objectives, O(N log N): sort by (first, second), keep group minima that beat every
// strictly smaller first value.
std::vector<std::size_t> pareto_front_2d(const ObjectiveMatrix& m);
// Any number of objectives: lexicographic sort, then each row is checked only against the rows
// kept so far (a dominator always sorts first; dominance is transitive). O(N log N + N·F·d).
std::vector<std::size_t> pareto_front_sort_filter(const ObjectiveMatrix& m);
// O(N²·d) reference used by the tests.
std::vector<std::size_t> pareto_front_brute_force(const ObjectiveMatrix& m);

// True when row a dominates row b (no worse in all, strictly better in one).
bool dominates(const ObjectiveMatrix& m, std::size_t a, std::size_t b);

}  // namespace toposweep::frontier
