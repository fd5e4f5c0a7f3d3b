// The interleaved 1F1B schedule through the simulator: the analytical fast path and the
// event-driven engine agree on its graph (extra wrap-around send streams included), and with
// ample bandwidth interleaving shortens the iteration by shrinking the bubble, while its PP
// traffic is (pp v - 1)/(pp - 1) times 1F1B's.
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

Config make_config(const std::vector<std::pair<std::string, std::string>>& settings) {
  return test::sim_config(settings);
}

Config gpt3(const std::string& schedule, const std::string& v, const std::string& bandwidth) {
  return make_config({{"topology.kind", "fattree"},
                      {"topology.servers", "8"},
                      {"server.gpus", "4"},
                      {"topology.link_bandwidth", bandwidth},
                      {"model.name", "gpt3-1.3b"},
                      {"model.batch_per_gpu", "2"},
                      {"strategy.tp", "2"},
                      {"strategy.pp", "4"},
                      {"strategy.microbatches", "8"},
                      {"strategy.schedule", schedule},
                      {"strategy.virtual_stages", v},
                      {"simulate.network_model", "analytical"}});
}

double pp_bytes(const TaskGraph& g) {
  double b = 0;
  for (const auto& t : g.tasks)
    if (t.purpose == CommPurpose::PipelineParallel) b += t.bytes * t.repeat;
  return b;
}

TEST(ScheduleInterleaved, FastPathEqualsEngine) {
  const Config c = gpt3("interleaved", "2", "100Gbps");
  const Network net = network_from_config(c);
  const IterationPlan plan = plan_iteration_from_config(c, net.gpu_count());
  const SimOptions o = sim_options_from_config(c);
  const SimResult general = test::engine_result(net, plan.graph, o);
  AnalyticalModel model(net, o.comm);
  const SimResult fast = simulate_analytical(model, plan.graph, net.gpus_per_node());
  EXPECT_EQ(fast.engine.makespan_s, general.engine.makespan_s);
  EXPECT_EQ(fast.job().bubble_time_s, general.job().bubble_time_s);
  EXPECT_GT(general.engine.makespan_s, 0);
}

TEST(ScheduleInterleaved, CheapCommunicationShrinksTheBubble) {
  const std::string fast_links = "100000Gbps";
  auto run = [&](const Config& c, double* pp) {
    const Network net = network_from_config(c);
    const IterationPlan plan = plan_iteration_from_config(c, net.gpu_count());
    *pp = pp_bytes(plan.graph);
    return simulate_iteration(net, plan.graph, sim_options_from_config(c)).job();
  };
  // 24 blocks: v = 2 and v = 3 split them evenly into 8 and 12 chunks (v = 4 would not: 16
  // chunks of 1 or 2 blocks, devices 1 and 3 holding twice the blocks of 0 and 2).
  double pp1 = 0, pp2 = 0, pp3 = 0;
  const JobTimes base = run(gpt3("1f1b", "1", fast_links), &pp1);
  const JobTimes v2 = run(gpt3("interleaved", "2", fast_links), &pp2);
  const JobTimes v3 = run(gpt3("interleaved", "3", fast_links), &pp3);
  EXPECT_LT(v2.iteration_time_s, base.iteration_time_s);
  EXPECT_LT(v3.iteration_time_s, v2.iteration_time_s);
  EXPECT_LT(v2.bubble_time_s, base.bubble_time_s);
  // Boundaries per microbatch each way: pp v - 1 against 1F1B's pp - 1 (pp = 4).
  EXPECT_DOUBLE_EQ(pp2 / pp1, 7.0 / 3.0);
  EXPECT_DOUBLE_EQ(pp3 / pp1, 11.0 / 3.0);
}

}  // namespace
}  // namespace toposweep::sim
