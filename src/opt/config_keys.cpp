#include "toposweep/opt/config_keys.hpp"

namespace toposweep::opt {

std::vector<KeySpec> config_keys() {
  return {
      {"optimize.target", "alternating", "what to optimize: bandwidth, topology, strategy or alternating"},
      {"optimize.objective", "time", "bandwidth target: time or time_x_cost"},
      {"optimize.total_bandwidth", "",
       "bandwidth target: budget on the sum of per-dimension bandwidths, e.g. 400GB/s (default: sum of "
       "topology.dim_bandwidth)"},
      {"optimize.cost_budget", "", "bandwidth target: network cost budget in US$ (plain number)"},
      {"optimize.dim_bandwidth_min", "", "bandwidth target: lower bound per dimension, e.g. 50GB/s,0GB/s"},
      {"optimize.dim_bandwidth_max", "", "bandwidth target: upper bound per dimension (0 = none)"},
      {"optimize.dim_order", "none", "bandwidth target: none, or descending (bw_0 >= bw_1 >= ...)"},
      {"optimize.tolerance", "1e-9", "bandwidth target: certified relative optimality gap"},
      {"optimize.search", "mcmc", "strategy search: mcmc or exhaustive (global 3-D strategies)"},
      {"optimize.mcmc_budget", "200", "MCMC proposals per strategy search (>= 1)"},
      {"optimize.mcmc_seed", "1", "MCMC seed (round r of the alternating loop uses seed + r)"},
      {"optimize.mcmc_temperature", "0.05", "Metropolis temperature, relative to the current time"},
      {"optimize.mcmc_restart", "50", "MCMC proposals without a new best before restarting from the best"},
      {"optimize.rounds", "2", "alternating: stop after this many rounds without improvement (K)"},
      {"optimize.max_rounds", "10", "alternating: at most this many rounds"},
      {"optimize.time_budget", "0s",
       "alternating: wall-clock budget, checked after each round (0s: none; results then depend on the machine)"},
      {"optimize.placement", "rank_order",
       "where GPU ranks run: rank_order, or metis (TP, else PP, groups on well-connected server sets)"},
      {"optimize.max_microbatches", "0", "strategy search: largest microbatch count tried (0: all)"},
      {"optimize.zero_stages", "0,1", "strategy search: ZeRO stages tried (any of 0, 1, 2, 3)"},
  };
}

}  // namespace toposweep::opt
