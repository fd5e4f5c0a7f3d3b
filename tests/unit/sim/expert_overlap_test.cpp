// strategy.ep_overlap (the dispatch/combine All-to-Alls on a stream of their own under the pass's
// compute) against the schedule it stands for, derived from the run without it. Two microbatches
// without pipelining: Megatron-Core runs the first forward alone, then microbatch 0's backward
// merged with microbatch 1's forward, then the last backward alone
// (combined_1f1b_schedule_for_no_pipelining), so the two middle passes are paired and take
// max(C, A) instead of C + A (C the pass's compute, A its All-to-Alls, read from the
// non-overlapped run's spans; strategy.ep_sms = 0: no SMs taken), and the first and last keep
// C + A. With the dispatch/combine kernels on 20 of the H100's 132 SMs (strategy.ep_sms, the
// default) a paired pass whose compute outlasts its All-to-Alls takes C + (20/132) A, and one
// whose All-to-Alls outlast C (1 + 20/132) takes A. Also: the fast path equals the engine with
// it, and model.moe_dispatch_datatype moves only the dispatches' time.
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

// Mixtral 8x7B on 16 H100 (four servers of 4 on one switch), pure data parallelism with the
// experts over ep ranks, two microbatches of one sample, one gradient reduction after the last
// backward (which runs alone, so the tail after it does not depend on the overlap).
Config mixtral(std::uint32_t ep, const std::string& link, bool overlap, const std::string& dispatch = "",
               std::uint32_t ep_sms = 0) {
  std::vector<std::pair<std::string, std::string>> s = {{"topology.kind", "switch"},
                                                        {"topology.servers", "4"},
                                                        {"server.gpus", "4"},
                                                        {"server.device", "h100"},
                                                        {"topology.link_bandwidth", link},
                                                        {"model.name", "mixtral-8x7b"},
                                                        {"model.datatype", "bf16"},
                                                        {"model.global_batch", "32"},
                                                        {"strategy.dp", "16"},
                                                        {"strategy.microbatches", "2"},
                                                        {"strategy.ep", std::to_string(ep)},
                                                        {"strategy.dp_overlap", "false"},
                                                        {"strategy.ep_overlap", overlap ? "true" : "false"},
                                                        {"strategy.ep_sms", std::to_string(ep_sms)},
                                                        {"simulate.network_model", "analytical"}};
  if (!dispatch.empty()) s.emplace_back("model.moe_dispatch_datatype", dispatch);
  return test::sim_config(s);
}

using test::SimRun;
SimRun simulate(const Config& c) {
  return test::simulate_config(c);
}

// Per phase (forward, backward) of GPU 0's stage: the compute tasks' and the EP All-to-Alls'
// summed span lengths.
struct PassTimes {
  double compute[2] = {0, 0}, a2a[2] = {0, 0};
};
PassTimes pass_times(const SimRun& r) {
  PassTimes p;
  test::for_each_span(r, 0, [&](const Task& t, double d, const std::string&) {
    if (t.phase != TaskPhase::Forward && t.phase != TaskPhase::Backward) return;
    const int k = t.phase == TaskPhase::Forward ? 0 : 1;
    if (t.kind == TaskKind::Compute) p.compute[k] += d;
    if (t.purpose == CommPurpose::ExpertParallel) p.a2a[k] += d;
  });
  return p;
}

// ep 4 inside a server (NVLink): every pass's All-to-Alls are shorter than its compute, so the
// two paired passes hide theirs: T = T_exposed - (A_forward + A_backward) / 2 (each phase's
// All-to-Alls split evenly over its two passes).
TEST(ExpertOverlap, PairedPassesHideAllToAllsShorterThanTheirCompute) {
  const SimRun exposed = simulate(mixtral(4, "400Gbps", false));
  const SimRun hidden = simulate(mixtral(4, "400Gbps", true));
  const PassTimes p = pass_times(exposed);
  for (int k = 0; k < 2; ++k) {
    ASSERT_GT(p.a2a[k], 0);
    ASSERT_LT(p.a2a[k], p.compute[k]);
  }
  const double expected = exposed.result.job().iteration_time_s - (p.a2a[0] + p.a2a[1]) / 2;
  EXPECT_NEAR(hidden.result.job().iteration_time_s, expected, 1e-9 * expected);
  // The same All-to-Alls, bytes and busy time, half of them now on their own stream.
  const auto ep = static_cast<std::size_t>(CommPurpose::ExpertParallel);
  EXPECT_EQ(hidden.result.job().comm_bytes[ep], exposed.result.job().comm_bytes[ep]);
  EXPECT_NEAR(hidden.result.job().comm_busy_s[ep], exposed.result.job().comm_busy_s[ep],
              1e-9 * exposed.result.job().comm_busy_s[ep]);
}

// ep 8 over two servers at 10 Gb/s: the All-to-Alls outlast the compute, which the paired passes
// now hide under them: T = T_exposed - (C_forward + C_backward) / 2.
TEST(ExpertOverlap, PairedPassesHideTheirComputeUnderLongerAllToAlls) {
  const SimRun exposed = simulate(mixtral(8, "10Gbps", false));
  const SimRun hidden = simulate(mixtral(8, "10Gbps", true));
  const PassTimes p = pass_times(exposed), q = pass_times(hidden);
  for (int k = 0; k < 2; ++k) {
    ASSERT_GT(p.a2a[k], p.compute[k]);
    EXPECT_NEAR(q.a2a[k], p.a2a[k], 1e-9 * p.a2a[k]);
  }
  const double T = exposed.result.job().iteration_time_s;
  const double expected = T - (p.compute[0] + p.compute[1]) / 2;
  const double got = hidden.result.job().iteration_time_s;
  EXPECT_NEAR(got, expected, 1e-9 * expected);
}

// With the All-to-All kernels on 20 of the 132 SMs, the compute-bound paired passes of the first
// case take C + (20/132) A: T = T_exposed - (1 - 20/132) (A_forward + A_backward) / 2.
TEST(ExpertOverlap, AllToAllKernelsTakeTheirSmsFromALongerCompute) {
  const SimRun exposed = simulate(mixtral(4, "400Gbps", false));
  const SimRun hidden = simulate(mixtral(4, "400Gbps", true, "", 20));
  const PassTimes p = pass_times(exposed);
  const double share = 20.0 / 132;
  const double expected = exposed.result.job().iteration_time_s - (1 - share) * (p.a2a[0] + p.a2a[1]) / 2;
  EXPECT_NEAR(hidden.result.job().iteration_time_s, expected, 1e-9 * expected);
}

// All-to-Alls longer than C (1 + 20/132): the compute finishes under them though slowed, and
// the paired passes' contention tasks take no time.
TEST(ExpertOverlap, AllToAllsLongerThanTheSlowedComputeHideTheSlowdown) {
  const SimRun exposed = simulate(mixtral(8, "10Gbps", false));
  const SimRun hidden = simulate(mixtral(8, "10Gbps", true, "", 20));
  const PassTimes p = pass_times(exposed);
  for (int k = 0; k < 2; ++k) ASSERT_GT(p.a2a[k], p.compute[k] * (1 + 20.0 / 132));
  int contention = 0;
  test::for_each_span(hidden, 0, [&](const Task& t, double d, const std::string&) {
    if (t.sm_share <= 0) return;
    ++contention;
    EXPECT_DOUBLE_EQ(t.sm_share, 20.0 / 132);
    EXPECT_EQ(d, 0.0);
  });
  EXPECT_EQ(contention, 2);  // the two paired passes
  const double expected = exposed.result.job().iteration_time_s - (p.compute[0] + p.compute[1]) / 2;
  EXPECT_NEAR(hidden.result.job().iteration_time_s, expected, 1e-9 * expected);
}

// With a pipeline, the warm-up forwards and cool-down backwards run alone: 1F1B over pp = 2 with
// 4 microbatches pairs 3 of stage 0's 4 forwards and 3 of its 4 backwards; the exposed runs of
// the unpaired passes show as EP All-to-Alls on the compute stream.
TEST(ExpertOverlap, WarmUpAndCoolDownPassesRunTheirAllToAllsInOrder) {
  Config c = mixtral(4, "400Gbps", true);
  c.set("strategy.dp", "8", "test");
  c.set("strategy.pp", "2", "test");
  c.set("strategy.microbatches", "4", "test");
  const SimRun r = simulate(c);
  const auto& g = r.plan.graph;
  int in_order = 0, overlapped = 0;
  for (const Task& t : g.tasks) {
    if (t.purpose != CommPurpose::ExpertParallel || t.stage != 0) continue;
    const bool on_ep_stream = g.stream_names[t.stream].find("ep_overlap") != std::string::npos;
    (on_ep_stream ? overlapped : in_order) += 1;
  }
  // Stage 0 holds 16 of the 32 MoE blocks: 2 All-to-Alls each per forward and per backward.
  EXPECT_EQ(in_order, 16 * 2 * 2);    // one forward, one backward alone
  EXPECT_EQ(overlapped, 16 * 2 * 6);  // three of each paired
}

// The fast path (prepared playback) equals the general engine on the overlapped graph, with and
// without the All-to-Alls' SMs.
TEST(ExpertOverlap, FastPathEqualsEngine) {
  for (std::uint32_t sms : {0u, 20u}) {
    const Config c = mixtral(8, "100Gbps", true, "", sms);
    const Network net = network_from_config(c);
    const IterationPlan plan = plan_iteration_from_config(c, net.gpu_count());
    const SimOptions o = sim_options_from_config(c);
    const SimResult general = test::engine_result(net, plan.graph, o);
    const SimResult fast = simulate_iteration(net, plan.graph, o);
    EXPECT_EQ(fast.engine.makespan_s, general.engine.makespan_s) << sms;
    EXPECT_EQ(fast.job().exposed_comm_time_s, general.job().exposed_comm_time_s) << sms;
  }
}

// The flow model runs the same contention on its own All-to-All times: with A < C each paired
// pass takes C + (20/132) A, A read from the flow model's spans of the run without the SMs (half
// of each phase's All-to-Alls are the paired passes').
TEST(ExpertOverlap, FlowModelChargesTheSmsToo) {
  Config c = mixtral(4, "400Gbps", true, "", 20);
  c.set("simulate.network_model", "flow", "test");
  Config z = mixtral(4, "400Gbps", true, "", 0);
  z.set("simulate.network_model", "flow", "test");
  const SimRun with = simulate(c), without = simulate(z);
  const PassTimes p = pass_times(without);
  for (int k = 0; k < 2; ++k) ASSERT_LT(p.a2a[k], p.compute[k]);
  const double expected = without.result.job().iteration_time_s + 20.0 / 132 * (p.a2a[0] + p.a2a[1]) / 2;
  EXPECT_NEAR(with.result.job().iteration_time_s, expected, 1e-9 * expected);
}

// fp8 dispatch: half of a block's All-to-Alls (the dispatches: tokens forward, output gradients
// backward) carry 1 + 4/128 bytes per element instead of 2; the combines are unchanged.
TEST(ExpertOverlap, Fp8DispatchMovesOnlyTheDispatches) {
  const SimRun bf16 = simulate(mixtral(8, "100Gbps", false));
  const SimRun fp8 = simulate(mixtral(8, "100Gbps", false, "fp8"));
  const auto ep = static_cast<std::size_t>(CommPurpose::ExpertParallel);
  const double b = bf16.result.job().comm_bytes[ep], f = fp8.result.job().comm_bytes[ep];
  EXPECT_NEAR(f, b / 2 + b / 2 * (1 + 4.0 / 128) / 2, 1e-12 * b);
  EXPECT_LT(fp8.result.job().iteration_time_s, bf16.result.job().iteration_time_s);
}

}  // namespace
}  // namespace toposweep::sim
