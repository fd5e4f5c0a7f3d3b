#pragma once
// Parallelization-strategy search with the network fixed (TopoOpt's inner loop): the simulator
// is the cost. Exhaustive over the global 3-D strategies (memory-infeasible ones pruned by the
// workload's enumeration), or Metropolis over global strategies, per-layer degrees and
// embedding-table owners.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "toposweep/opt/metropolis.hpp"
#include "toposweep/opt/search_team.hpp"
#include "toposweep/opt/strategy_bound.hpp"
#include "toposweep/opt/strategy_placement.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/topology/network.hpp"
#include "toposweep/workload/enumerate.hpp"
#include "toposweep/workload/layer_cost.hpp"
#include "toposweep/workload/strategy.hpp"
#include "toposweep/workload/workload.hpp"

namespace toposweep::opt {

// Iteration time of strategies on one network, memoised. GPU rank r runs on network vertex
// position_of_node[r / gpus_per_node] (identity when empty: rank order).
class StrategyScorer {
 public:
  StrategyScorer(const Workload& workload, const Network& network, sim::SimOptions options,
                 std::vector<std::uint32_t> position_of_node = {});
  // nullopt when the strategy does not fit in memory; BadInput when it is invalid.
  std::optional<double> iteration_time(const Strategy& s);
  std::uint64_t simulations() const { return simulations_; }
  Placement placement_for(std::uint32_t gpus) const;
  // With METIS placement (optimize.placement = metis; only without a server renumbering) each
  // strategy runs where `simulate` would put it: its TP or PP groups on METIS's server sets when
  // those hold more internal bandwidth than rank order's, else in rank order.
  void use_placement(PlacementKind kind) { placement_kind_ = kind; }
  // The placement `iteration_time` simulated `s` with.
  Placement placement_of(const Strategy& s) const;
  std::uint32_t gpus() const { return network_->gpu_count(); }
  const Workload& workload() const { return *workload_; }
  const Network& network() const { return *network_; }
  const sim::SimOptions& options() const { return options_; }
  PlacementKind placement_kind() const { return placement_kind_; }

 private:
  const Workload* workload_;
  const Network* network_;
  sim::SimOptions options_;
  std::vector<std::uint32_t> position_of_node_;
  std::vector<std::uint16_t> device_of_server_;  // mixed servers: each server's device kind
  PlacementKind placement_kind_ = PlacementKind::RankOrder;
  std::map<std::string, std::optional<double>> memo_;
  LayerCostCache layer_costs_;  // strategies of one shape share their per-layer costs
  std::uint64_t simulations_ = 0;
};

// Auto: exhaustive (exact, branch and bound) when the global strategies cover the model's choices
// and are few enough, else MCMC (resolve_search_method).
enum class SearchMethod { Exhaustive, Mcmc, Auto };

// Exhaustive or Mcmc: Auto becomes MCMC for models with choices the global strategies do not
// cover (per-layer degrees of non-transformers, embedding-table owners) or with more than
// kAutoExhaustiveLimit feasible candidates, else exhaustive.
inline constexpr std::uint64_t kAutoExhaustiveLimit = 1'000'000;
SearchMethod resolve_search_method(SearchMethod method, const Workload& w, std::uint32_t gpus,
                                   const StrategySpace& space);

struct RankedStrategy {
  Strategy strategy;
  double iteration_time_s = 0;
};

struct StrategySearchResult {
  Strategy best;
  double iteration_time_s = 0;
  std::vector<RankedStrategy> top;  // the k best, fastest first (exhaustive; top[0] is `best`)
  std::uint64_t candidates = 0;     // canonical strategies of the space
  std::uint64_t evaluated = 0;      // strategies simulated
  std::uint64_t infeasible = 0;     // pruned for memory
  std::uint64_t pruned = 0;         // feasible, not simulated: their lower bound was no better
  // Exhaustive: new simulations (not memoised before the search) the serial search runs; split
  // over ranks, the ranks together may run a few more (simulated_by_team), which stay unreported
  // so the result is the same on any number of ranks.
  std::uint64_t simulations = 0;
  std::uint64_t simulated_by_team = 0;
  std::string method;  // "exhaustive" or "mcmc"
};

// Progress of a long search: simulated so far, at most how many remain, seconds elapsed.
using SearchProgress = std::function<void(std::uint64_t done, std::uint64_t left, double seconds)>;

// The k fastest strategies of `space`, exactly: candidates that fit in memory are sorted by their
// lower bound (opt/strategy_bound.hpp; `bound`) and simulated in that order until the next
// bound is no better than the k-th best time found, so the rest cannot enter the top k. Ties
// are broken by enumeration order, so the answer is the brute force's. BadInput when none fits.
// With a `team` of several ranks (a collective call on every rank, each with its own scorer of
// the same inputs) the simulations are split over the ranks in rounds and every rank returns the
// same result, equal to the serial one (docs/optimizers.md, "The search across ranks").
StrategySearchResult exhaustive_strategy_search(StrategyScorer& scorer, const Workload& w,
                                                const StrategySpace& space = {}, std::uint32_t top = 1,
                                                const SearchProgress& progress = {},
                                                SearchTeam* team = nullptr,
                                                BoundKind bound = BoundKind::Communication);

struct McmcStrategySettings {
  MetropolisSettings metropolis;
  bool global_moves = true;  // jump to another feasible global strategy
  bool layer_moves = true;   // change one layer's degree (non-transformer, tp = pp = 1)
  bool table_moves = true;   // move one embedding table to another GPU
  bool operator==(const McmcStrategySettings&) const = default;
};

// Metropolis from `start` (which must fit). BadInput when the budget is 0.
StrategySearchResult mcmc_strategy_search(StrategyScorer& scorer, const Workload& w, const Strategy& start,
                                          const McmcStrategySettings& settings,
                                          const StrategySpace& space = {});

// dp = gpus, tp = pp = microbatches = 1, default everything else.
Strategy pure_data_parallel(std::uint32_t gpus);

}  // namespace toposweep::opt
