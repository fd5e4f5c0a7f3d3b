#pragma once
// What the optimizers are asked to do, as one typed value read from the optimize.* keys (and,
// for the targets that build their own networks, the topology keys they build from) once, at the
// edge; and the problem an optimizer solves: a design point's specs plus these settings.
#include <cstdint>
#include <optional>
#include <vector>

#include "toposweep/opt/alternating.hpp"
#include "toposweep/opt/bandwidth_allocation.hpp"
#include "toposweep/opt/strategy_placement.hpp"
#include "toposweep/opt/strategy_search.hpp"
#include "toposweep/opt/topology_finder.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/topology/cost.hpp"
#include "toposweep/topology/spec.hpp"
#include "toposweep/util/config.hpp"
#include "toposweep/workload/enumerate.hpp"
#include "toposweep/workload/spec.hpp"

namespace toposweep::opt {

enum class OptimizeTarget { Bandwidth, Topology, Strategy, Alternating, Placement };
OptimizeTarget parse_optimize_target(const std::string& text, const std::string& where);
const char* optimize_target_name(OptimizeTarget t);

struct OptimizeSettings {
  // Bandwidth target.
  AllocationObjective objective = AllocationObjective::Time;
  std::optional<double> total_bandwidth_Bps;
  std::optional<double> cost_budget_usd;
  std::vector<double> dim_bandwidth_min_Bps, dim_bandwidth_max_Bps;  // empty: no bounds
  bool descending = false;
  double tolerance = 1e-9;
  // Topology and alternating targets: the ports, links and servers TopologyFinder builds with.
  std::uint32_t servers = 0;
  FinderSettings finder;
  // Strategy and alternating targets.
  SearchMethod search = SearchMethod::Auto;
  McmcStrategySettings mcmc;
  StrategySpace space;
  std::uint32_t top = 1;  // strategy target: the k best strategies reported
  // Strategy target, exhaustive: the branch and bound's lower bound (optimize.bound).
  BoundKind bound = BoundKind::Communication;
  PlacementKind placement = PlacementKind::RankOrder;
  // Alternating target.
  std::uint32_t patience = 2;
  std::uint32_t max_rounds = 10;
  double time_budget_s = 0;
  bool operator==(const OptimizeSettings&) const = default;
};

// Reads the keys the optimizer for `target` reads, and only those (so a key no optimizer of the
// point uses is reported as unused). BadInput naming the key for malformed values.
OptimizeSettings optimize_settings_from_config(const Config& config, OptimizeTarget target);

// The design point an optimizer starts from, and how to optimize it.
struct OptimizeProblem {
  topology::TopologySpec topology;
  WorkloadSpec workload;
  StrategySpec strategy;
  sim::SimOptions sim;
  topology::CostSpec costs;
  OptimizeSettings settings;
};

// Every spec a problem needs, from a configuration (the point module's DesignPoint is the
// usual source; this is the shorthand for callers holding a Config, such as tests).
OptimizeProblem optimize_problem_from_config(const Config& config, OptimizeTarget target);

}  // namespace toposweep::opt
