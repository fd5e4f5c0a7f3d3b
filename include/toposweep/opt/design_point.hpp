#pragma once
// One design point optimized from its typed specs (settings.hpp): what `toposweep optimize` runs
// and what the point evaluator calls for sweep points that ask for optimization. The target chooses
// the optimizer: per-dimension bandwidth allocation (multidim), TopologyFinder for the
// configured strategy, strategy search on the configured network, the alternating loop, or the
// METIS placement of the configured strategy compared with rank order.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "toposweep/opt/alternating.hpp"
#include "toposweep/opt/bandwidth_allocation.hpp"
#include "toposweep/opt/settings.hpp"
#include "toposweep/topology/network.hpp"
#include "toposweep/util/collective_op.hpp"
#include "toposweep/workload/strategy.hpp"

namespace toposweep::opt {

// `--op allreduce --bytes 1GB`: optimize bandwidth for one collective over every dimension.
struct SingleCollective {
  CollectiveOp op = CollectiveOp::AllReduce;
  double bytes = 0;
  bool operator==(const SingleCollective&) const = default;
};

struct OptimizeResult {
  OptimizeTarget target = OptimizeTarget::Alternating;
  bool single_collective = false;
  double time_s = 0;           // iteration time (or the collective's time) of the result
  double baseline_time_s = 0;  // of the baseline named in `baseline`
  std::string baseline;        // what the baseline is, in words
  double cost_usd = 0;         // of the resulting network
  bool feasible = true;
  // The resulting design.
  Network network;
  Strategy strategy;
  std::vector<std::uint32_t> strides;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> mp_links;
  std::vector<std::uint32_t> position_of_node;   // server renumbering (TopologyFinder), may be empty
  std::optional<BandwidthAllocation> bandwidth;  // Bandwidth target
  std::string comm_model;                        // Bandwidth target: pipelined / sequential
  std::vector<RoundRecord> rounds;               // Alternating target
  std::string stop_reason;                       // Alternating: converged, max_rounds or time_budget
  std::string search_method;                     // Strategy / Alternating: what ran
  std::string search_requested;                  // "auto" when auto chose search_method
  std::vector<RankedStrategy> top;               // Strategy, exhaustive: the k best
  std::uint64_t candidates = 0, infeasible = 0, pruned = 0;  // Strategy: the search's counts
  std::uint64_t simulations = 0;
  // Placement target: METIS placement of the configured strategy against rank order.
  std::string placement_method;   // "metis", or "rank_order" when METIS found nothing better
  std::string placement_grouped;  // "tp", "pp" or "" (no group spans several servers)
  std::vector<std::vector<std::uint32_t>> placement_groups;  // servers of each mapped group
  double placement_internal_bandwidth_Bps = 0;
  double rank_order_internal_bandwidth_Bps = 0;
};

// Throws BadInput / InvalidDesign naming the key concerned ("key strategy.dp").
// Where an exhaustive strategy search reports progress (every 5 s; none by default). The command
// line sets it once from its log level; the hook is process-wide.
void set_strategy_search_progress(SearchProgress progress);
// The ranks an exhaustive strategy search (target strategy) is split over; null (the default):
// this process alone. Process-wide, set by the command line under an MPI launch; not owned.
void set_strategy_search_team(SearchTeam* team);

OptimizeResult optimize_design_point(const OptimizeProblem& problem, OptimizeTarget target,
                                     const std::optional<SingleCollective>& single = std::nullopt);

// The JSON object of `toposweep optimize --json` (names fixed by the user contract, docs/optimizers.md).
nlohmann::json optimize_result_to_json(const OptimizeResult& r);

}  // namespace toposweep::opt
