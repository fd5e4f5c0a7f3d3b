#pragma once
// A design point as one typed value: the specs of every module (topology, workload, strategy,
// simulator, costs, optimizer), read from a Config once, here, at the edge. Below point/ nothing
// reads a Config; a point's evaluation, its caches and the optimizers work on these values.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "toposweep/opt/design_point.hpp"
#include "toposweep/opt/settings.hpp"
#include "toposweep/opt/strategy_placement.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/topology/cost.hpp"
#include "toposweep/topology/spec.hpp"
#include "toposweep/util/config.hpp"
#include "toposweep/util/key_origins.hpp"
#include "toposweep/workload/spec.hpp"

namespace toposweep {

// One job of simulate.jobs: MODEL:SERVERS[:tpT][:ppP][:mbM]. Data parallelism fills the job's
// GPUs: dp = SERVERS x server.gpus / (tp x pp).
struct JobSpec {
  std::string model;
  std::uint32_t servers = 0;
  std::uint32_t tp = 1, pp = 1, microbatches = 1;
  bool operator==(const JobSpec&) const = default;
};
// "dlrm:16,gpt3-13b:16:tp4:pp2:mb8" -> jobs; BadInput naming `where`.
std::vector<JobSpec> parse_job_list(const std::string& text, const std::string& where);

struct DesignPoint {
  topology::TopologySpec topology;
  WorkloadSpec workload;
  StrategySpec strategy;
  sim::SimOptions sim;
  topology::CostSpec costs;
  opt::PlacementKind placement = opt::PlacementKind::RankOrder;  // optimize.placement
  // point.optimize (a sweep point) or the optimize command's target: the optimizer that runs
  // first, with the settings it reads; nullopt: the design is evaluated as given.
  std::optional<opt::OptimizeTarget> optimize;
  std::optional<opt::OptimizeSettings> optimize_settings;  // set with `optimize`
  std::optional<opt::SingleCollective> single_collective;  // optimize --op/--bytes
  // Multi-job mode (simulate.jobs): several jobs share the network; every other model.* and
  // strategy.* setting applies to all of them. Jobs keep their own model's batch per GPU unless
  // the user set model.batch_per_gpu (`jobs_share_batch`).
  std::vector<JobSpec> jobs;
  bool jobs_share_batch = false;
  bool operator==(const DesignPoint&) const = default;
};

// Reads every key the point's evaluation uses, and only those (so keys no evaluation reads can
// be reported). `optimize` overrides point.optimize (the optimize command's target).
DesignPoint design_point_from_config(const Config& config,
                                     std::optional<opt::OptimizeTarget> optimize = std::nullopt);

// Where the config set each key, for errors raised while evaluating (strategy.zero errors name
// strategy.zero1 when the user wrote the deprecated alias).
KeyOrigins key_origins(const Config& config);
// key_origins(config).rethrow(e), looking up only the keys `e` can name.
[[noreturn]] void rethrow_at_origin(const Config& config, const BadInput& e);
// Where rethrow_at_origin would point `e`.
std::string located_at_origin(const Config& config, const BadInput& e);

// The optimizer's view of a point.
opt::OptimizeProblem optimize_problem(const DesignPoint& point);

}  // namespace toposweep
