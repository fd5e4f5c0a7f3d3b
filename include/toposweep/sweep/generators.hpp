#pragma once
// Generated axis values: bandwidth allocations on a simplex and every parallelization strategy
// of a GPU count.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace toposweep::sweep {

// Every way to write `parts` (≥ 1 each) summing to `total`, lexicographically ascending:
// C(total-1, parts-1) compositions.
std::vector<std::vector<std::int64_t>> compositions(std::int64_t total, std::int64_t parts);

// (Permutation sets come from topology::enumerate_stride_sets, so the sweep and the topology
// builder agree on what a stride set and its port count are.)

// Every allocation of total_Bps over `dims` dimensions in multiples of step_Bps, each > 0,
// formatted "a,b,c" with units. `where` names the key for errors (total not a multiple of step).
std::vector<std::string> simplex_allocations(double total_Bps, double step_Bps, std::int64_t dims,
                                             const std::string& where);

// A strategy axis value: the degrees, then optional knobs, each setting strategy.<name>
// ("dp2tp8pp4/schedule=interleaved/virtual_stages=3/recompute=selective"). Knob names are those of
// strategy_value_knobs(); their values are checked by the keys' own checks like any axis value.
struct StrategyTriple {
  std::int64_t dp = 1, tp = 1, pp = 1;
  std::vector<std::pair<std::string, std::string>> knobs;  // (name without "strategy.", value)
  std::string spelled() const;                             // "dp4tp2pp1[/name=value...]"
  bool operator==(const StrategyTriple&) const = default;
};
// The knobs a strategy axis value may set: the knob table's sweep knobs (kStrategyKnobs in
// workload/strategy_knobs.hpp), in its order, and strategy.microbatch_size after microbatches.
const std::vector<std::string>& strategy_value_knobs();
// Every (dp, tp, pp) with dp·tp·pp = gpus, tp ≤ max_tp, pp ≤ max_pp; ordered by dp, tp.
std::vector<StrategyTriple> all_strategies(std::int64_t gpus, std::int64_t max_tp, std::int64_t max_pp);
// Parse "dp4tp2pp1[/name=value...]"; throws BadInput naming `where`.
StrategyTriple parse_strategy(const std::string& text, const std::string& where);

// A generator written as an axis value, e.g. `topology.strides = permutations(4)`: its arguments,
// a way to read single-valued keys of the sub-space (or the base), and where to point errors.
struct GeneratorCall {
  std::vector<std::string> args;                               // empty for a bare name (`strategy = all`)
  std::function<std::string(const std::string& key)> context;  // BadInput when the key is missing or a list
  std::string where;
};

struct Generator {
  const char* name;      // "simplex": the value is NAME(...) (or the bare NAME when `bare`)
  const char* only_key;  // the axis key it generates for, or nullptr for any key
  bool bare;             // NAME without parentheses is allowed
  std::vector<std::string> (*values)(const GeneratorCall&);
  const char* help;
};

// The generator an axis value calls, or nullptr when the value is a plain list. The sweep's
// generators by name; adding one: its function here and one line in the table (generators.cpp).
const Generator* find_generator(const std::string& key, const std::string& value);
const std::vector<Generator>& generators();

}  // namespace toposweep::sweep
