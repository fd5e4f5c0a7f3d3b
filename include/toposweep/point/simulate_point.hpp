#pragma once
// One design point played in full: the network, the iteration plan, the simulation with its
// breakdown and timeline, and the PointResult row. The `simulate` command prints this; the
// PointEvaluator computes the same row with caching and without keeping the details.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "toposweep/point/point_result.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/topology/cost.hpp"
#include "toposweep/topology/network.hpp"
#include "toposweep/util/config.hpp"
#include "toposweep/workload/iteration.hpp"

namespace toposweep {

struct PointSimulation {
  std::shared_ptr<const Network> network;
  IterationPlan plan;
  Placement placement;
  // optimize.placement as asked (rank_order / metis) and what was used: "metis" only when METIS
  // found server sets better connected than rank order's; placement_groups are those sets.
  std::string placement_requested = "rank_order";
  std::string placement_method = "rank_order";
  std::vector<std::vector<std::uint32_t>> placement_groups;
  sim::SimOptions options;
  topology::CostBreakdown cost;
  bool simulated = false;  // false when the plan does not fit in memory
  sim::SimResult sim;
  PointResult result;
};

// Throws BadInput for an inconsistent design (including a strategy needing more GPUs than the
// topology holds); a memory-infeasible strategy yields result.status Infeasible.
// `record_link_loads`: keep the flow model's link-load timeline (for traces).
PointSimulation simulate_point(const Config& config, bool record_link_loads = false);

// Several jobs on one topology (simulate.jobs = MODEL:SERVERS,...): each job runs pure data
// parallelism over its servers, placed on consecutive servers in list order; every other
// model.* / server.* / strategy.* key applies to all jobs.
// One job of simulate.jobs: MODEL:SERVERS[:tpT][:ppP][:mbM]. Data parallelism fills the job's
// GPUs: dp = SERVERS x server.gpus / (tp x pp).
struct JobSpec {
  std::string model;
  std::uint32_t servers = 0;
  std::uint32_t tp = 1, pp = 1, microbatches = 1;
};
std::vector<JobSpec> parse_job_list(const Config& config);  // BadInput naming simulate.jobs

struct MultiJobRun {
  JobSpec spec;
  IterationPlan plan;
  std::uint32_t first_server = 0;
};
struct MultiJobSimulation {
  std::shared_ptr<const Network> network;
  sim::SimOptions options;
  std::vector<MultiJobRun> jobs;
  sim::SimResult sim;  // sim.engine.jobs[j] belongs to jobs[j]
  topology::CostBreakdown cost;
};
MultiJobSimulation simulate_multijob(const Config& config, bool record_link_loads = false);

// Bisection bandwidth when the family knows it in closed form, else NaN (exact bisection is
// too slow to compute per sweep point; `toposweep topology` reports it).
double network_bisection_Bps(const Network& network);

// Fills the row from a plan and (when feasible) its simulation.
PointResult make_point_result(const IterationPlan& plan, const sim::SimResult* sim, double cost_usd,
                              double bisection_Bps);

}  // namespace toposweep
