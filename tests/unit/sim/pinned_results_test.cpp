// Regression pins: iteration times of small real workloads, recorded with the event-driven
// engine before the analytical fast path and the flow-model speed-ups went in. Those were
// pure performance work, so the times must not move beyond floating-point noise (1e-12
// relative). The analytical fast path (simulate_analytical) must also equal run_engine's
// general path (simulate_iteration) exactly, breakdown included.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "sim_test_helpers.hpp"
#include "toposweep/collective/config_keys.hpp"
#include "toposweep/sim/config_keys.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/topology/config_keys.hpp"
#include "toposweep/workload/config_keys.hpp"
#include "toposweep/workload/iteration.hpp"

namespace toposweep::sim {
namespace {

// Recorded at commit 76f406e with simulate_iteration, i.e. run_engine; re-recorded when the
// training step became per-operator compute, NCCL's ring through every GPU of a group, shared
// server links for concurrent collective instances, scatter/gather pipeline sends and Megatron's
// optimizer-step traffic (issue 16; the commit message gives each change's share). GPT-3 on the
// fat-tree re-recorded when collective.routing became ecmp (issue 33): a data-parallel AllReduce
// between two servers of different pods (servers 0 and 4 here: a 37.5 + 12.5 GB/s pair of leaf
// uplinks each) went on one path through a 12.5 GB/s arc; split over the equal-cost paths it
// takes half the time (0.14 -> 0.07 s for 1 GB, `collective --ranks 0,4`). Was 0.55139243132654947
// (analytical) and 0.59910798818547506 (flow).
constexpr double kGpt3Analytical = 0.5349242175665494;
constexpr double kGpt3Flow = 0.56617156066547514;
// DLRM on topoopt re-recorded when auto's AllToAll became direct (issue 33): its embedding
// All-to-All was a relay over the multiring (p(p-1)/2 chunk-steps), now every pair at once on
// shortest paths (collective --op alltoall --bytes 1GB on the same 16-server topoopt: 0.600 s
// multiring -> 0.440 s direct). Was 0.033786553811465746 (analytical), 0.035014845011465741 (flow).
constexpr double kDlrmAnalytical = 0.03344000949146575;
constexpr double kDlrmFlow = 0.034362756371465741;

Config make_config(const std::vector<std::pair<std::string, std::string>>& settings) {
  return test::sim_config(settings);
}

// Radix 6 as recorded (the auto radix now takes 8, which keeps each server's 4 ports on one leaf).
Config gpt3_small(const std::string& model) {
  return make_config({{"topology.kind", "fattree"},
                      {"topology.fattree_radix", "6"},
                      {"topology.servers", "8"},
                      {"server.gpus", "4"},
                      {"topology.link_bandwidth", "100Gbps"},
                      {"model.name", "gpt3-1.3b"},
                      {"model.batch_per_gpu", "2"},
                      {"strategy.tp", "2"},
                      {"strategy.pp", "4"},
                      {"strategy.microbatches", "8"},
                      {"simulate.network_model", model}});
}

// Eight stages: data-parallel communication spreads over eight streams, so the breakdown's
// unions merge more chains than the linear scan handles (the heap path).
Config gpt3_eight_stages() {
  return make_config({{"topology.kind", "fattree"},
                      {"topology.servers", "8"},
                      {"server.gpus", "4"},
                      {"model.name", "gpt3-1.3b"},
                      {"model.batch_per_gpu", "2"},
                      {"strategy.pp", "8"},
                      {"strategy.microbatches", "16"},
                      {"simulate.network_model", "analytical"}});
}

Config dlrm_small(const std::string& model) {
  return make_config({{"topology.kind", "topoopt"},
                      {"topology.servers", "16"},
                      {"topology.degree", "4"},
                      {"topology.link_bandwidth", "100Gbps"},
                      {"server.gpus", "4"},
                      {"model.name", "dlrm"},
                      {"simulate.network_model", model}});
}

SimResult simulate(const Config& c) {
  const Network net = network_from_config(c);
  const IterationPlan plan = plan_iteration_from_config(c, net.gpu_count());
  return simulate_iteration(net, plan.graph, sim_options_from_config(c));
}

void expect_pinned(const char* what, double actual, double pinned) {
  EXPECT_NEAR(actual, pinned, 1e-12 * pinned) << what;
}

TEST(PinnedResults, Gpt3SmallAnalytical) {
  expect_pinned("gpt3 analytical", simulate(gpt3_small("analytical")).engine.makespan_s, kGpt3Analytical);
}
TEST(PinnedResults, Gpt3SmallFlow) {
  expect_pinned("gpt3 flow", simulate(gpt3_small("flow")).engine.makespan_s, kGpt3Flow);
}
TEST(PinnedResults, DlrmSmallAnalytical) {
  expect_pinned("dlrm analytical", simulate(dlrm_small("analytical")).engine.makespan_s, kDlrmAnalytical);
}
TEST(PinnedResults, DlrmSmallFlow) {
  expect_pinned("dlrm flow", simulate(dlrm_small("flow")).engine.makespan_s, kDlrmFlow);
}

void expect_same_job_times(const JobTimes& a, const JobTimes& b) {
  EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);
  EXPECT_EQ(a.compute_time_s, b.compute_time_s);
  EXPECT_EQ(a.exposed_comm_time_s, b.exposed_comm_time_s);
  EXPECT_EQ(a.bubble_time_s, b.bubble_time_s);
  EXPECT_EQ(a.critical_stage, b.critical_stage);
  EXPECT_EQ(a.comm_busy_s, b.comm_busy_s);
  EXPECT_EQ(a.comm_bytes, b.comm_bytes);
}

// The fast path against the general engine, on the same graphs, twice in a row (the second
// run replays the prepared state).
TEST(PinnedResults, AnalyticalFastPathEqualsEngine) {
  for (const Config& c : {gpt3_small("analytical"), dlrm_small("analytical"), gpt3_eight_stages()}) {
    const Network net = network_from_config(c);
    const IterationPlan plan = plan_iteration_from_config(c, net.gpu_count());
    const SimOptions o = sim_options_from_config(c);
    const SimResult general = test::engine_result(net, plan.graph, o);
    AnalyticalModel model(net, o.comm);
    for (int rep = 0; rep < 2; ++rep) {
      const SimResult fast = simulate_analytical(model, plan.graph, net.gpus_per_node());
      EXPECT_EQ(fast.engine.makespan_s, general.engine.makespan_s);
      expect_same_job_times(fast.job(), general.job());
      ASSERT_EQ(fast.engine.spans.at(0).size(), general.engine.spans.at(0).size());
      for (std::size_t i = 0; i < fast.engine.spans[0].size(); ++i) {
        EXPECT_EQ(fast.engine.spans[0][i].start_s, general.engine.spans[0][i].start_s) << i;
        EXPECT_EQ(fast.engine.spans[0][i].end_s, general.engine.spans[0][i].end_s) << i;
      }
    }
  }
}

}  // namespace
}  // namespace toposweep::sim
