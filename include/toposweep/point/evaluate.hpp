#pragma once
// One DesignPoint -> Evaluation function: the unit the sweep rows, `simulate`, `optimize` and the
// multi-job mode all call. What is shared between consecutive points (the network, resolved
// models and devices, the iteration plan, the analytical model's collective plans) lives in a
// PointCache keyed by spec equality, so a cached value is reused only for equal specs.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "toposweep/opt/compression.hpp"
#include "toposweep/opt/design_point.hpp"
#include "toposweep/point/design_point.hpp"
#include "toposweep/point/point_result.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/topology/cost.hpp"
#include "toposweep/topology/network.hpp"
#include "toposweep/util/config.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/workload/iteration.hpp"

namespace toposweep {

enum class Detail {
  Check,  // read and build what the evaluation needs, simulate nothing (a sweep's up-front check)
  Row,    // the PointResult a sweep stores
  Full,   // everything `simulate` and `optimize` print
};

struct MultiJobRun {
  JobSpec spec;
  IterationPlan plan;
  std::uint32_t first_server = 0;
};

struct Evaluation {
  PointResult row;
  // Detail::Full only.
  std::shared_ptr<const Network> network;
  IterationPlan plan;  // one job
  Placement placement;
  // optimize.placement as asked (rank_order / metis) and what was used: "metis" only when METIS
  // found server sets better connected than rank order's; placement_groups are those sets.
  std::string placement_requested = "rank_order";
  std::string placement_method = "rank_order";
  std::vector<std::vector<std::uint32_t>> placement_groups;
  topology::CostBreakdown cost;
  bool simulated = false;  // false when the plan does not fit in memory
  sim::SimResult sim;      // one job, or every job of the multi-job mode (sim.engine.jobs[j])
  std::optional<opt::OptimizeResult> optimized;  // when an optimizer ran
  std::vector<MultiJobRun> jobs;                 // multi-job mode
  std::optional<opt::SfbChoice> compression;     // strategy.compression = sfb: the per-layer choice
  // Detail::Row only: the design cannot exist and the cache knew it (its plan failed before);
  // the error evaluate throws at any other detail. `row` is then unset.
  std::optional<InvalidDesign> invalid;
};

// What a PointCache keeps at most: networks (each with its bisection, costs and analytical
// models) and their arcs over all of them, least recently used out first.
struct PointCacheLimits {
  std::size_t networks = 1024;
  std::size_t network_arcs = std::size_t{1} << 22;
};

class PointCache {
 public:
  PointCache();
  explicit PointCache(PointCacheLimits limits);
  ~PointCache();
  PointCache(PointCache&&) noexcept;
  PointCache& operator=(PointCache&&) noexcept;
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Throws BadInput for input that cannot be evaluated (a strategy needing more GPUs than the
// network holds, a multi-job point in a sweep, ...), InvalidDesign for a design that cannot exist;
// a memory-infeasible design is a row with status Infeasible. With Detail::Check, InvalidDesign
// is not thrown (a sweep counts such points infeasible when it evaluates them); with Detail::Row,
// an InvalidDesign the plan cache already holds is returned in Evaluation::invalid instead (a
// sweep meets it at every network of that strategy; throwing cost more than the row).
Evaluation evaluate(const DesignPoint& point, PointCache& cache, Detail detail);

// design_point_from_config, then evaluate; an error names the line that set the key (and is
// thrown at every detail, Evaluation::invalid included).
Evaluation evaluate_config(const Config& config, PointCache& cache, Detail detail,
                           std::optional<opt::OptimizeTarget> optimize = std::nullopt);

// A sweep's row of the point `config` (what evaluate_config(config, cache, Detail::Row).row
// gives), except that a design that cannot exist is an Infeasible row (invalid_design_result,
// the error's key at its origin) rather than an exception. Other errors are thrown as by
// evaluate_config.
PointResult evaluate_row(const Config& config, PointCache& cache);

// Bisection bandwidth when the family knows it in closed form, else NaN (exact bisection is
// too slow to compute per sweep point; `toposweep topology` reports it).
double network_bisection_Bps(const Network& network);

// Fills the row from a plan and (when feasible) its simulation.
PointResult make_point_result(const IterationPlan& plan, const sim::SimResult* sim, double cost_usd,
                              double bisection_Bps);

}  // namespace toposweep
