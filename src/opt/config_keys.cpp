#include "toposweep/opt/config_keys.hpp"

#include "toposweep/opt/design_point.hpp"
#include "toposweep/opt/strategy_placement.hpp"
#include "toposweep/util/config.hpp"
#include "toposweep/util/config_checks.hpp"
#include "toposweep/workload/strategy_knobs.hpp"

namespace toposweep::opt {
namespace {

void check_target(const std::string& value, const std::string& where) {
  parse_optimize_target(value, where);
}
void check_placement(const std::string& value, const std::string& where) {
  parse_placement_kind(value, where);
}

KeySpec search_key(KnobMember member) {
  return knob_search_key(*find_strategy_knob(member));
}

}  // namespace

std::vector<KeySpec> config_keys() {
  std::vector<KeySpec> keys = {
      {"optimize.target", "alternating", "what to optimize: bandwidth, topology, strategy or alternating",
       check_target},
      {"optimize.objective", "time", "bandwidth target: time or time_x_cost",
       checks::one_of({"time", "time_x_cost"})},
      {"optimize.total_bandwidth", "",
       "bandwidth target: budget on the sum of per-dimension bandwidths, e.g. 400GB/s (default: sum of "
       "topology.dim_bandwidth)",
       checks::optional(checks::quantity(Quantity::Bandwidth, true))},
      {"optimize.cost_budget", "", "bandwidth target: network cost budget in US$ (plain number)",
       checks::optional(checks::number_in(1e-9, 1e300))},
      {"optimize.dim_bandwidth_min", "", "bandwidth target: lower bound per dimension, e.g. 50GB/s,0GB/s",
       checks::optional(checks::quantity_list(Quantity::Bandwidth, false))},
      {"optimize.dim_bandwidth_max", "", "bandwidth target: upper bound per dimension (0 = none)",
       checks::optional(checks::quantity_list(Quantity::Bandwidth, false))},
      {"optimize.dim_order", "none", "bandwidth target: none, or descending (bw_0 >= bw_1 >= ...)",
       checks::one_of({"none", "descending"})},
      {"optimize.tolerance", "1e-9", "bandwidth target: certified relative optimality gap",
       checks::number_in(0, 1)},
      {"optimize.search", "auto",
       "strategy search: auto (exhaustive when the global strategies cover the model's choices, else mcmc), "
       "exhaustive (exact branch and bound over every knob list) or mcmc",
       checks::one_of({"auto", "mcmc", "exhaustive"})},
      {"optimize.top", "1", "strategy search: report the k best strategies (exhaustive)",
       checks::integer(1, 1 << 20)},
      {"optimize.bound", "communication",
       "exhaustive strategy search: the lower bound it prunes with: communication (compute plus the TP "
       "collectives and pipeline sends a strategy cannot avoid) or compute (compute alone; more simulations)",
       checks::one_of({"communication", "compute"})},
      {"optimize.mcmc_budget", "200", "MCMC proposals per strategy search (>= 1)",
       checks::integer(0, 1 << 30)},
      {"optimize.mcmc_seed", "1", "MCMC seed (round r of the alternating loop uses seed + r)",
       checks::integer(0)},
      {"optimize.mcmc_temperature", "0.05", "Metropolis temperature, relative to the current time",
       checks::number_in(0, 1e9)},
      {"optimize.mcmc_restart", "50", "MCMC proposals without a new best before restarting from the best",
       checks::integer(1, 1 << 30)},
      {"optimize.rounds", "2", "alternating: stop after this many rounds without improvement (K)",
       checks::integer(1, 1 << 20)},
      {"optimize.max_rounds", "10", "alternating: at most this many rounds", checks::integer(1, 1 << 20)},
      {"optimize.time_budget", "0s",
       "alternating: wall-clock budget, checked after each round (0s: none; results then depend on the "
       "machine)",
       checks::quantity(Quantity::Time, false)},
      {"optimize.placement", "rank_order",
       "where GPU ranks run: rank_order, or metis (TP, else PP, groups on well-connected server sets)",
       check_placement},
      {"optimize.max_microbatches", "0", "strategy search: largest microbatch count tried (0: all)",
       checks::integer(0, 1 << 20)},
  };
  // The knobs' value lists (kStrategyKnobs) and the degree lists, in their historical order: the
  // ZeRO stages first, the schedules before the chunk counts, the other knobs in table order.
  keys.push_back(search_key(&StrategyKnobs::zero));
  keys.insert(keys.end(),
              {
                  {"optimize.tp", "", "strategy search: tensor-parallel degrees tried (empty: every divisor)",
                   checks::optional(checks::integer_list(1, 1 << 30))},
                  {"optimize.pp", "", "strategy search: pipeline degrees tried (empty: every divisor)",
                   checks::optional(checks::integer_list(1, 1 << 30))},
                  {"optimize.microbatch_size", "",
                   "strategy search: samples per microbatch tried (empty: every divisor)",
                   checks::optional(checks::integer_list(1, 1 << 30))},
              });
  keys.push_back(search_key(&StrategyKnobs::schedule));
  keys.push_back({"optimize.virtual_stages", "",
                  "strategy search: interleaved chunks per device tried (empty: every valid count >= 2)",
                  checks::optional(checks::integer_list(2, 1 << 30))});
  for (const StrategyKnob& k : kStrategyKnobs)
    if (!k.search_key.empty() && k.member != KnobMember{&StrategyKnobs::zero} &&
        k.member != KnobMember{&StrategyKnobs::schedule})
      keys.push_back(knob_search_key(k));
  keys.push_back({"optimize.tp_across_servers", "false",
                  "strategy search: allow tensor parallelism across servers", checks::boolean()});
  return keys;
}

}  // namespace toposweep::opt
