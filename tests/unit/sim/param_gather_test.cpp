// strategy.param_gather_overlap (Megatron-Core's --overlap-param-gather) against the run without
// it: ZeRO-1's AllGather of the updated weights moves from after the optimizer step to the start
// of the (next) iteration, bucket by bucket, each layer's first forward waiting for its bucket.
// With one bucket the work is the same chain in another order (gather, forward, backward, step
// against forward, backward, step, gather), so the iteration takes the same time; with buckets of
// strategy.bucket_size the gathers after the first hide under the forward, so the iteration is
// shorter by at most the gathers' time and exposes at least the first bucket's. The bytes
// gathered are the same, and the fast path equals the engine. ZeRO-3 the same for every pass.
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
  test::for_each_span(r, 0, [&](const Task& t, double d, const std::string& label) {
    if (label != "dp_allgather") return;
    if (g.count++ == 0) g.first = d;
    g.bytes += t.bytes;
    g.seconds += d;
  });
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

// The fast path (simulate_iteration) and the general engine agree on the case's graph.
void expect_fast_path_equals_engine(const Config& c) {
  const Network net = network_from_config(c);
  const IterationPlan plan = plan_iteration_from_config(c, net.gpu_count());
  const SimOptions o = sim_options_from_config(c);
  const SimResult general = test::engine_result(net, plan.graph, o);
  const SimResult fast = simulate_iteration(net, plan.graph, o);
  EXPECT_EQ(fast.engine.makespan_s, general.engine.makespan_s);
  EXPECT_EQ(fast.job().exposed_comm_time_s, general.job().exposed_comm_time_s);
}

TEST(ParamGatherOverlap, FastPathEqualsEngine) {
  expect_fast_path_equals_engine(gpt(true, "25MB"));
}

// ZeRO-0 gathers nothing: the knob changes nothing there.
TEST(ParamGatherOverlap, ZeroZeroDoesNotMove) {
  Config on = gpt(true, "25MB"), off = gpt(false, "25MB");
  on.set("strategy.zero", "0", "test");
  off.set("strategy.zero", "0", "test");
  EXPECT_EQ(simulate(on).result.job().iteration_time_s, simulate(off).result.job().iteration_time_s);
}

// ZeRO-3 (FSDP's prefetch): every pass's gathers move from the compute stream before the pass to
// the DP stream, bucket by bucket ahead of the layers. `micro` microbatches, so 2 x micro passes.
Config zero3(bool overlap, const std::string& bucket, int micro) {
  Config c = gpt(overlap, bucket);
  c.set("strategy.zero", "3", "test");
  c.set("strategy.microbatches", std::to_string(micro), "test");
  c.set("model.global_batch", std::to_string(16 * micro), "test");  // one sample a microbatch
  return c;
}

// The ZeRO-3 weight AllGathers of GPU 0: the first of each pass (its phase and microbatch) and
// all of them.
struct PassGathers {
  Gathers all;
  double firsts = 0;  // the first gather of every pass, summed
  std::size_t passes = 0;
};
PassGathers zero3_gathers(const SimRun& r) {
  PassGathers g;
  std::vector<std::pair<TaskPhase, std::uint32_t>> seen;
  test::for_each_span(r, 0, [&](const Task& t, double d, const std::string& label) {
    if (label != "dp_param_allgather") return;
    g.all.bytes += t.bytes;
    g.all.seconds += d;
    ++g.all.count;
    if (std::find(seen.begin(), seen.end(), std::pair{t.phase, t.microbatch}) == seen.end()) {
      seen.emplace_back(t.phase, t.microbatch);
      g.firsts += d;
    }
  });
  g.passes = seen.size();
  return g;
}

// The seconds GPU 0 spends in reduce-scatters of microbatch `micro`'s gradients.
double reduce_scatter_seconds(const SimRun& r, std::uint32_t micro) {
  double s = 0;
  test::for_each_span(r, 0, [&](const Task& t, double d, const std::string& label) {
    if (label == "dp_reducescatter" && t.microbatch == micro) s += d;
  });
  return s;
}

// A ZeRO-3 case run without and with the prefetch, and their gathers; what holds at every bucket
// size: every pass gathers (`gathers` without the prefetch: one a pass), the same bytes.
struct Zero3Runs {
  SimRun off, on;
  PassGathers a, b;
  double t_off = 0, t_on = 0;
};
Zero3Runs zero3_runs(const std::string& bucket, int micro) {
  Zero3Runs r{simulate(zero3(false, bucket, micro)), simulate(zero3(true, bucket, micro)), {}, {}, 0, 0};
  r.a = zero3_gathers(r.off);
  r.b = zero3_gathers(r.on);
  EXPECT_EQ(r.a.all.count, 2u * micro);
  EXPECT_EQ(r.b.passes, 2u * micro);
  EXPECT_NEAR(r.b.all.bytes, r.a.all.bytes, 1e-9 * r.a.all.bytes);
  r.t_off = r.off.result.job().iteration_time_s;
  r.t_on = r.on.result.job().iteration_time_s;
  return r;
}

// One bucket a pass: the gather still precedes the pass's first layer, so with one microbatch the
// same chain runs. With two, ZeRO-3's first backward reduce-scatters its gradients on the DP
// stream (one NCCL communicator: its collectives run in order), and the next forward's gather
// now queues behind it instead of running beside it on the compute stream: slower by at most that
// reduce-scatter.
TEST(ParamGatherOverlap, ZeroThreeOneBucketAPassIsTheSameChain) {
  for (int micro : {1, 2}) {
    const Zero3Runs r = zero3_runs("1TB", micro);
    EXPECT_EQ(r.b.all.count, 2u * micro);
    if (micro == 1) {
      EXPECT_NEAR(r.t_on, r.t_off, 1e-12 * r.t_off);
      continue;
    }
    const double rs = reduce_scatter_seconds(r.off, 0);
    EXPECT_GT(rs, 0);
    EXPECT_GE(r.t_on, r.t_off * (1 - 1e-12));
    EXPECT_LE(r.t_on - r.t_off, rs * (1 + 1e-9));
  }
}

// Buckets of 25 MB: all but each pass's first gather hide under the layers before them, so the
// iteration is shorter by at most the gathers' time less every pass's first one, and the bytes
// are the same.
TEST(ParamGatherOverlap, ZeroThreeBucketsHideAllButEachPasssFirst) {
  for (int micro : {1, 2}) {
    const Zero3Runs r = zero3_runs("25MB", micro);
    EXPECT_GT(r.b.all.count, 20u * micro);
    const double hideable = r.a.all.seconds - r.b.firsts;
    EXPECT_LT(r.t_on, r.t_off);
    EXPECT_LE(r.t_off - r.t_on, hideable * (1 + 1e-9)) << micro;
    // 100 Gb/s, a 1.3B model, one sample a pass: most of every pass's gather hides.
    EXPECT_GT(r.t_off - r.t_on, 0.5 * hideable) << micro;
  }
}

TEST(ParamGatherOverlap, ZeroThreeFastPathEqualsEngine) {
  expect_fast_path_equals_engine(zero3(true, "25MB", 2));
}

}  // namespace
}  // namespace toposweep::sim
