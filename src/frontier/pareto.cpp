#include "toposweep/frontier/pareto.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <set>

#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"

namespace toposweep::frontier {

std::vector<Objective> parse_objectives(const std::string& text, const std::string& where) {
  std::vector<Objective> out;
  std::set<std::string> seen;
  for (const auto& item : split_list(text)) {
    Objective o;
    std::string name = item;
    if (auto colon = item.find(':'); colon != std::string::npos) {
      const std::string sense = to_lower(trim(item.substr(0, colon)));
      if (sense == "max") {
        o.maximize = true;
      } else if (sense != "min") {
        throw BadInput("objective '" + item + "' has an unknown sense (use max:FIELD or min:FIELD)", where);
      }
      name = std::string(trim(item.substr(colon + 1)));
    }
    if (name.empty()) throw BadInput("empty objective name in '" + text + "'", where);
    for (char ch : name)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '.')
        throw BadInput("objective '" + name + "' is not a field name", where);
    if (!seen.insert(name).second) throw BadInput("objective '" + name + "' is listed twice", where);
    o.field = name;
    out.push_back(o);
  }
  if (out.empty()) throw BadInput("no objectives given", where);
  return out;
}

std::string spell_objectives(const std::vector<Objective>& objectives) {
  std::vector<std::string> parts;
  for (const auto& o : objectives) parts.push_back(o.spelled());
  return join(parts, ",");
}

ObjectiveMatrix oriented_values(const std::vector<std::vector<double>>& columns,
                                const std::vector<Objective>& objectives) {
  ObjectiveMatrix m;
  m.dims = columns.size();
  m.rows = columns.empty() ? 0 : columns.front().size();
  m.values.resize(m.rows * m.dims);
  for (std::size_t k = 0; k < m.dims; ++k) {
    const bool negate = k < objectives.size() && objectives[k].maximize;
    for (std::size_t r = 0; r < m.rows; ++r)
      m.values[r * m.dims + k] = negate ? -columns[k][r] : columns[k][r];
  }
  return m;
}

namespace {

bool row_has_nan(const ObjectiveMatrix& m, std::size_t r) {
  for (std::size_t k = 0; k < m.dims; ++k)
    if (std::isnan(m.at(r, k))) return true;
  return false;
}

std::vector<std::size_t> usable_rows(const ObjectiveMatrix& m) {
  std::vector<std::size_t> rows;
  rows.reserve(m.rows);
  for (std::size_t r = 0; r < m.rows; ++r)
    if (!row_has_nan(m, r)) rows.push_back(r);
  return rows;
}

void sort_lexicographic(const ObjectiveMatrix& m, std::vector<std::size_t>& rows) {
  std::sort(rows.begin(), rows.end(), [&](std::size_t a, std::size_t b) {
    for (std::size_t k = 0; k < m.dims; ++k) {
      const double x = m.at(a, k), y = m.at(b, k);
      if (x != y) return x < y;
    }
    return a < b;
  });
}

}  // namespace

bool dominates(const ObjectiveMatrix& m, std::size_t a, std::size_t b) {
  bool strictly = false;
  for (std::size_t k = 0; k < m.dims; ++k) {
    const double x = m.at(a, k), y = m.at(b, k);
    if (x > y) return false;
    if (x < y) strictly = true;
  }
  return strictly;
}

std::vector<std::size_t> pareto_front_brute_force(const ObjectiveMatrix& m) {
  const auto rows = usable_rows(m);
  std::vector<std::size_t> out;
  for (std::size_t b : rows) {
    bool dominated = false;
    for (std::size_t a : rows)
      if (dominates(m, a, b)) {
        dominated = true;
        break;
      }
    if (!dominated) out.push_back(b);
  }
  return out;
}

std::vector<std::size_t> pareto_front_2d(const ObjectiveMatrix& m) {
  if (m.dims != 2) throw RuntimeFailure("pareto_front_2d needs exactly two objectives");
  auto rows = usable_rows(m);
  sort_lexicographic(m, rows);
  std::vector<std::size_t> out;
  double best_y_before = INFINITY;  // min second objective over strictly smaller first values
  std::size_t i = 0;
  while (i < rows.size()) {
    const double x = m.at(rows[i], 0);
    const double group_min_y = m.at(rows[i], 1);  // sorted, so the group's first is its minimum
    std::size_t j = i;
    while (j < rows.size() && m.at(rows[j], 0) == x) {
      // Only the group's minimum-y rows can survive: any other is beaten by them at equal x.
      if (m.at(rows[j], 1) == group_min_y && group_min_y < best_y_before) out.push_back(rows[j]);
      ++j;
    }
    best_y_before = std::min(best_y_before, group_min_y);
    i = j;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::size_t> pareto_front_sort_filter(const ObjectiveMatrix& m) {
  auto rows = usable_rows(m);
  sort_lexicographic(m, rows);
  std::vector<std::size_t> kept;
  for (std::size_t r : rows) {
    bool dominated = false;
    for (std::size_t q : kept)
      if (dominates(m, q, r)) {
        dominated = true;
        break;
      }
    if (!dominated) kept.push_back(r);
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

std::vector<std::size_t> pareto_front(const ObjectiveMatrix& m) {
  if (m.dims == 0) throw RuntimeFailure("pareto_front needs at least one objective");
  if (m.dims == 2) return pareto_front_2d(m);
  return pareto_front_sort_filter(m);
}

}  // namespace toposweep::frontier
