// Context parallelism (strategy.cp, Megatron-Core's ring attention) against hand-derived values:
// the KV bytes the CP group moves, the split of activations and compute, the gradient groups
// over dp x cp, the joint groups by brute force, the enumerator over cp, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/enumerate.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/layer_cost.hpp"
#include "toposweep/workload/memory.hpp"
#include "toposweep/workload/model_library.hpp"
#include "toposweep/workload/ranks.hpp"
#include "workload_test_helpers.hpp"

namespace toposweep {
namespace {

// Llama-2-70B's shape (64 heads, 8 KV heads, hidden 8192, 80 layers, seq 4096) with flash
// attention, as context parallelism needs.
Workload llama(double global_batch) {
  Workload w = make_workload(builtin_model("llama-70b"), builtin_device("h100"), "bf16", global_batch);
  w.fused_attention = true;
  return w;
}

Strategy strategy(std::uint32_t dp, std::uint32_t tp, std::uint32_t pp, std::uint32_t cp, std::uint32_t mu) {
  Strategy s;
  s.dp = dp;
  s.tp = tp;
  s.pp = pp;
  s.cp = cp;
  s.microbatches = mu;
  return s;
}

TEST(ContextParallel, RingAttentionMovesEachBlocksKeysAndValuesOnceEachWay) {
  // Per block and microbatch: forward, an AllGather of the sequence's K and V on this TP rank's
  // heads, b x 2 s kv_heads d / tp elements; backward the same again plus a ReduceScatter of
  // their gradients (full recomputation: one more AllGather).
  const Workload w = llama(8);
  const std::uint32_t tp = 8, cp = 2, mu = 4;
  const double b = 8.0 / mu, s = 4096, kv_heads = 8, d = 8192.0 / 64, L = 80, bytes = 2;
  const double per_op = b * 2 * s * kv_heads * d / tp * bytes;
  for (const Recompute r : {Recompute::None, Recompute::Full}) {
    Strategy st = strategy(1, tp, 1, cp, mu);
    st.recompute = r;
    const IterationPlan plan = plan_iteration(w, st);
    std::map<CollectiveOp, double> ops;
    for (const Task& t : plan.graph.tasks) {
      if (t.purpose != CommPurpose::ContextParallel) continue;
      EXPECT_DOUBLE_EQ(t.bytes, per_op);
      ops[t.op] += t.repeat;
      // The CP groups: ranks t and t + tp (Megatron-Core order tp-cp-dp-pp).
      const auto& groups = plan.graph.group_sets[t.group_set].groups;
      ASSERT_EQ(groups.size(), tp);
      for (std::uint32_t i = 0; i < tp; ++i) EXPECT_EQ(groups[i], (std::vector<std::uint32_t>{i, i + tp}));
    }
    const double per_block = r == Recompute::Full ? 3 : 2;
    EXPECT_DOUBLE_EQ(ops[CollectiveOp::AllGather], mu * L * per_block);
    EXPECT_DOUBLE_EQ(ops[CollectiveOp::ReduceScatter], mu * L);
  }
  // Without context parallelism nothing of the kind.
  for (const Task& t : plan_iteration(w, strategy(1, tp, 1, 1, mu)).graph.tasks)
    EXPECT_NE(t.purpose, CommPurpose::ContextParallel);
}

TEST(ContextParallel, ActivationsAndFlopsSplitOverTheCpRanks) {
  // The same replica (one sequence per microbatch) on 8 and on 16 GPUs: cp = 2 halves every
  // kept activation and every rank's FLOPs, and leaves the weights alone.
  const Workload w = llama(4);
  for (const Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
    Strategy one = strategy(1, 8, 1, 1, 4), two = strategy(1, 8, 1, 2, 4);
    one.recompute = two.recompute = r;
    const IterationPlan a = plan_iteration(w, one), b = plan_iteration(w, two);
    EXPECT_DOUBLE_EQ(b.memory.activations, a.memory.activations / 2);
    EXPECT_DOUBLE_EQ(b.memory.weights, a.memory.weights);
    EXPECT_DOUBLE_EQ(b.memory.optimizer, a.memory.optimizer);
    EXPECT_NEAR(b.total_flops, a.total_flops, 1e-12 * a.total_flops);  // the same work, on twice the GPUs
    double fa = 0, fb = 0;
    for (const Task& t : a.graph.tasks)
      if (t.kind == TaskKind::Compute && t.stage == 0) fa += t.flops * t.repeat;
    for (const Task& t : b.graph.tasks)
      if (t.kind == TaskKind::Compute && t.stage == 0) fb += t.flops * t.repeat;
    EXPECT_NEAR(fb, fa / 2, 1e-12 * fa);
  }
}

TEST(ContextParallel, AttentionOfTheRanksQueriesSpansTheWholeSequence) {
  // A CP rank runs the block of s / cp tokens, except that its queries attend to keys of the
  // whole sequence: cost(cp = 2, s) - cost(cp = 1, s / 2) is the flash attention of s / 2
  // queries over s / 2 more keys, 2 b (a / t) (s/2)^2 d / (peak x efficiency) forward and 2.5x
  // that backward.
  const Workload w = llama(1);
  LayerCostKey two = layer_cost_key(w, strategy(1, 8, 1, 2, 1));
  LayerCostKey half = two;
  half.shape.seq_len /= 2;
  half.split.cp = 1;
  const TransformerCosts a = transformer_costs(two), b = transformer_costs(half);
  const double s2 = 4096 / 2.0, heads = 64 / 8.0, d = 128;
  const double fwd = 2 * heads * s2 * s2 * d / (two.device.peak_flops * two.device.flash_forward);
  const double bwd = 2.5 * 2 * heads * s2 * s2 * d / (two.device.peak_flops * two.device.flash_backward);
  EXPECT_NEAR(a.block.forward.compute_s - b.block.forward.compute_s, fwd, 1e-9 * fwd);
  EXPECT_NEAR(a.block.backward.compute_s - b.block.backward.compute_s, bwd, 1e-9 * bwd);
  // The embedding and the head work on the rank's tokens only.
  EXPECT_DOUBLE_EQ(a.head.forward.compute_s, b.head.forward.compute_s);
  EXPECT_DOUBLE_EQ(a.embedding.backward.compute_s, b.embedding.backward.compute_s);
  EXPECT_DOUBLE_EQ(a.block.tp_bytes, b.block.tp_bytes);
}

TEST(ContextParallel, GradientsReduceOverDpTimesCp) {
  // dp = 2, cp = 2, tp = 2 on 8 GPUs: each gradient group is the four ranks with the same TP
  // index, {t, t + 2, t + 4, t + 6}; ZeRO-1 shards the optimizer state over them as over dp = 4.
  const Workload w = llama(8);
  Strategy s = strategy(2, 8, 1, 2, 2);
  s.zero = 1;
  const IterationPlan plan = plan_iteration(w, s);
  std::set<std::vector<std::uint32_t>> groups;
  for (const Task& t : plan.graph.tasks)
    if (t.purpose == CommPurpose::DataParallel)
      for (const auto& g : plan.graph.group_sets[t.group_set].groups) groups.insert(g);
  ASSERT_EQ(groups.size(), 8u);
  for (std::uint32_t t = 0; t < 8; ++t) EXPECT_TRUE(groups.count({t, t + 8, t + 16, t + 24})) << t;
  Strategy flat = strategy(4, 8, 1, 1, 1);
  flat.zero = 1;
  EXPECT_DOUBLE_EQ(plan.memory.optimizer, plan_iteration(w, flat).memory.optimizer);
}

TEST(ContextParallel, JointGroupsMatchABruteForce) {
  const AxisGrid g{{Axis::Tp, 2}, {Axis::Cp, 3}, {Axis::Ep, 2}, {Axis::Dp, 2}, {Axis::Pp, 3}};
  for (std::uint32_t p = 0; p < 3; ++p) {
    // Brute force: ranks keyed by their coordinates off the joint axes, in rank order.
    std::map<std::vector<std::uint32_t>, std::vector<std::uint32_t>> expected;
    for (std::uint32_t r = 0; r < g.gpus(); ++r) {
      const AxisCoords c = g.coords(r);
      if (c[Axis::Pp] != p) continue;
      expected[{c[Axis::Tp], c[Axis::Ep]}].push_back(r);
    }
    const GroupSet got = g.joint_groups({Axis::Cp, Axis::Dp}, {{Axis::Pp, p}});
    ASSERT_EQ(got.groups.size(), expected.size());
    std::set<std::vector<std::uint32_t>> want;
    for (const auto& [key, ranks] : expected) want.insert(ranks);
    for (const auto& group : got.groups) EXPECT_TRUE(want.count(group));
    // One axis: the same as groups().
    EXPECT_EQ(g.joint_groups({Axis::Cp}, {{Axis::Pp, p}}).groups, g.groups(Axis::Cp, {{Axis::Pp, p}}).groups);
  }
}

TEST(ContextParallel, TheEnumeratorAddsCpShapesAndTheirMemoryIsThePlans) {
  const Workload w = llama(16);
  StrategySpace one, two, both;
  two.set(&StrategyKnobs::cp, {2});
  both.set(&StrategyKnobs::cp, {1, 2});
  const auto n1 = for_each_strategy(w, 64, one, {}).checked;
  std::uint64_t n2 = 0;
  for_each_strategy(w, 64, two, [&](const Strategy& s, double mem, bool feasible) {
    ++n2;
    EXPECT_EQ(s.cp, 2u);
    validate_strategy(s, w, 64);
    const double full = memory_per_gpu(w, s).total();
    EXPECT_NEAR(mem, full, 1e-9 * full);
    EXPECT_EQ(feasible, full <= w.device.hbm_bytes);
  });
  EXPECT_GT(n2, 0u);
  EXPECT_EQ(for_each_strategy(w, 64, both, {}).checked, n1 + n2);
  // Without fused attention (or with a sequence that does not split into 2 cp chunks) no cp shape.
  Workload unfused = w;
  unfused.fused_attention = false;
  EXPECT_EQ(for_each_strategy(unfused, 64, two, {}).checked, 0u);
}

TEST(ContextParallel, BadStrategiesNameStrategyCp) {
  using test::plan_error_where;
  const std::vector<std::string> base = {"model.name=llama-70b", "model.fused_attention=true",
                                         "strategy.tp=8"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), base.begin(), base.end());
    return more;
  };
  EXPECT_EQ(plan_error_where(with({"strategy.cp=2"}), 16), "no error");
  EXPECT_EQ(plan_error_where({"model.name=llama-70b", "strategy.tp=8", "strategy.cp=2"}, 16),
            "key strategy.cp at --set");                                                 // unfused attention
  EXPECT_EQ(plan_error_where(with({"strategy.cp=3"}), 24), "key strategy.cp at --set");  // 4096 % 6 != 0
  EXPECT_EQ(plan_error_where({"model.name=resnet50", "strategy.cp=2"}, 16), "key strategy.cp at --set");
  // dp = 0 leaves the GPUs tp x pp x cp do not use.
  EXPECT_EQ(plan_iteration_from_config(test::workload_config(with({"strategy.cp=2"})), 32).dp, 2u);
}

}  // namespace
}  // namespace toposweep
