#pragma once
// TopoOpt's alternating optimization (docs/optimizers.md): start from pure data parallelism;
// repeat { search the strategy with the topology fixed; derive its traffic; rebuild the
// topology with TopologyFinder } until the best iteration time has not improved for
// `patience` rounds or `max_rounds` are spent. Every round is recorded.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "toposweep/opt/strategy_search.hpp"
#include "toposweep/opt/topology_finder.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/workload/enumerate.hpp"
#include "toposweep/workload/workload.hpp"

namespace toposweep::opt {

struct AlternatingSettings {
  std::uint32_t servers = 0;
  FinderSettings finder;
  sim::SimOptions sim;
  SearchMethod search = SearchMethod::Mcmc;
  McmcStrategySettings mcmc;  // the seed is advanced by the round number
  StrategySpace space;
  std::uint32_t patience = 2;  // K: rounds without improvement before stopping
  std::uint32_t max_rounds = 10;
  // Wall-clock budget in seconds (0: none), checked after each round: the loop stops once it is
  // spent, so the last round may overrun it. A budget makes the number of rounds, and so the
  // result, depend on the machine; the rounds record says how far the search went.
  double time_budget_s = 0;
};

struct RoundRecord {
  std::uint32_t round = 0;      // 0: pure data parallelism on its TopologyFinder network
  double iteration_time_s = 0;  // this round's strategy on this round's network
  double best_time_s = 0;       // best so far (never increases)
  Strategy strategy;
  std::vector<std::uint32_t> strides;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> mp_links;
  std::uint32_t ring_ports = 0, mp_ports = 0;
  std::uint64_t simulations = 0;  // strategies simulated in this round's search
};

struct AlternatingResult {
  Strategy best_strategy;
  TopologyDesign best_design;
  double best_time_s = 0;
  double baseline_time_s = 0;  // round 0
  std::vector<RoundRecord> rounds;
  // Why the loop ended: "converged" (`patience` rounds without improvement), "max_rounds" or
  // "time_budget".
  std::string stop_reason;
};

// BadInput when pure data parallelism is not a valid strategy for the workload or does not
// fit, or when the finder settings are inconsistent.
AlternatingResult alternating_optimize(const Workload& workload, const AlternatingSettings& settings);

// The node-level traffic of `strategy` placed in rank order on `servers` servers.
TrafficDemand strategy_traffic(const Workload& workload, const Strategy& strategy, std::uint32_t servers,
                               std::uint32_t gpus_per_server);

}  // namespace toposweep::opt
