// strategy.param_gather_overlap (Megatron-Core's --overlap-param-gather) against the run without
// it: ZeRO-1's AllGather of the updated weights moves from after the optimizer step to the start
// of the (next) iteration, bucket by bucket, each layer's first forward waiting for its bucket.
// With one bucket the work is the same chain in another order (gather, forward, backward, step
// against forward, backward, step, gather), so the iteration takes the same time; with buckets of
// strategy.bucket_size the gathers after the first hide under the forward, so the iteration is
// shorter by at most the gathers' time and exposes at least the first bucket's. The bytes
// gathered are the same, and the fast path equals the engine.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "sim_test_helpers.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/workload/iteration.hpp"

namespace toposweep::sim {
namespace {

// GPT-3 1.3B on 16 A100 (four servers of 4 on one 100 Gb/s switch), pure data parallelism with
// ZeRO-1, one microbatch of one sample.
Config gpt(bool overlap, const std::string& bucket) {
  return test::sim_config({{"topology.kind", "switch"},
                           {"topology.servers", "4"},
                           {"server.gpus", "4"},
                           {"server.device", "a100"},
                           {"topology.link_bandwidth", "100Gbps"},
                           {"model.name", "gpt3-1.3b"},
                           {"model.global_batch", "16"},
                           {"strategy.dp", "16"},
                           {"strategy.zero", "1"},
                           {"strategy.bucket_size", bucket},
                           {"strategy.param_gather_overlap", overlap ? "true" : "false"},
                           {"simulate.network_model", "analytical"}});
}

using test::SimRun;
SimRun simulate(const Config& c) {
  return test::simulate_config(c);
}

// The weight AllGathers of GPU 0's stage: their bytes, their spans' summed length and the first
// one's length, and how many there are.
struct Gathers {
  double bytes = 0, seconds = 0, first = 0;
  std::size_t count = 0;
};
Gathers gathers(const SimRun& r) {
  Gathers g;
  const auto& tasks = r.plan.graph.tasks;
  const auto& spans = r.result.engine.spans.at(0);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const Task& t = tasks[i];
    if (r.plan.graph.labels[t.label] != "dp_allgather") continue;
    const double d = spans[i].end_s - spans[i].start_s;
    if (g.count++ == 0) g.first = d;
    g.bytes += t.bytes;
    g.seconds += d;
  }
  return g;
}

TEST(ParamGatherOverlap, OneBucketIsTheSameChainInAnotherOrder) {
  const SimRun after = simulate(gpt(false, "1TB")), before = simulate(gpt(true, "1TB"));
  EXPECT_EQ(gathers(after).count, 1u);
  EXPECT_EQ(gathers(before).count, 1u);
  const double t = after.result.job().iteration_time_s;
  EXPECT_NEAR(before.result.job().iteration_time_s, t, 1e-12 * t);
}

TEST(ParamGatherOverlap, BucketsHideAllButTheFirstUnderTheForward) {
  const SimRun after = simulate(gpt(false, "25MB")), before = simulate(gpt(true, "25MB"));
  const Gathers a = gathers(after), b = gathers(before);
  EXPECT_EQ(a.count, 1u);
  EXPECT_GT(b.count, 10u);
  EXPECT_NEAR(b.bytes, a.bytes, 1e-9 * a.bytes);  // the same weights, in buckets
  const double t_after = after.result.job().iteration_time_s, t_before = before.result.job().iteration_time_s;
  EXPECT_LT(t_before, t_after);
  EXPECT_LE(t_after - t_before, a.seconds * (1 + 1e-12));
  EXPECT_GE(t_before, t_after - a.seconds + b.first * (1 - 1e-9));
  // The gain is most of the gather here: 100 Gb/s links, a 1.3B model, one sample.
  EXPECT_GT(t_after - t_before, 0.5 * a.seconds);
}

TEST(ParamGatherOverlap, FastPathEqualsEngine) {
  const Config c = gpt(true, "25MB");
  const Network net = network_from_config(c);
  const IterationPlan plan = plan_iteration_from_config(c, net.gpu_count());
  const SimOptions o = sim_options_from_config(c);
  const SimResult general = test::engine_result(net, plan.graph, o);
  const SimResult fast = simulate_iteration(net, plan.graph, o);
  EXPECT_EQ(fast.engine.makespan_s, general.engine.makespan_s);
  EXPECT_EQ(fast.job().exposed_comm_time_s, general.job().exposed_comm_time_s);
}

// ZeRO-0 and ZeRO-3 gather nothing after the step: the knob changes nothing there.
TEST(ParamGatherOverlap, OnlyZeroOneAndTwoMove) {
  for (const std::string zero : {"0", "3"}) {
    Config on = gpt(true, "25MB"), off = gpt(false, "25MB");
    on.set("strategy.zero", zero, "test");
    off.set("strategy.zero", zero, "test");
    EXPECT_EQ(simulate(on).result.job().iteration_time_s, simulate(off).result.job().iteration_time_s)
        << zero;
  }
}

}  // namespace
}  // namespace toposweep::sim
