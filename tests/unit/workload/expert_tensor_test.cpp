// Expert tensor parallelism (strategy.etp, Megatron-Core's parallel folding) against
// hand-derived values: the folded EP and expert data-parallel groups against Megatron-Core's
// expert rank order (etp innermost, then ep, then the expert data-parallel ranks), the
// dispatch's bytes, the TP collectives that leave with the split, the expert GEMMs' FLOPs, the
// expert states' memory, the enumerator over optimize.etp and bad input.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>
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

Workload mixtral(double global_batch) {
  Workload w = make_workload(builtin_model("mixtral-8x7b"), builtin_device("h100"), "bf16", global_batch);
  w.fused_attention = true;
  w.device.hbm_bytes = 1e15;  // the traffic and the states, not whether they fit
  return w;
}

Strategy folded(std::uint32_t dp, std::uint32_t tp, std::uint32_t ep, std::uint32_t etp) {
  Strategy s;
  s.dp = dp;
  s.tp = tp;
  s.ep = ep;
  s.etp = etp;
  s.microbatches = 4;
  s.sequence_parallel = true;
  return s;
}

using Groups = std::set<std::vector<std::uint32_t>>;
Groups groups_of(const IterationPlan& plan, const Task& t) {
  const auto& g = plan.graph.group_sets[t.group_set].groups;
  return Groups(g.begin(), g.end());
}

// Mixtral 8x7B on 16 GPUs, tp 2 (sequence parallel), dp 8, ep 8, etp 1: the EP group folds over
// tp x dp = 16 ranks. Megatron-Core numbers a stage's ranks for the experts as
// etp_rank + etp (ep_rank + ep edp_rank): EP groups {0..7} and {8..15}, expert data-parallel
// groups {i, i + 8}. Each rank dispatches its own s / tp = 2048 tokens top-2: 2 x 2048 x 4096 x 2
// bytes = 33,554,432 per All-to-All, as without folding. Each rank holds 1 whole expert of each
// block: 32 x 3 x 4096 x 14336 = 5,637,144,576 parameters, whose gradients reduce over the pairs.
TEST(ExpertTensor, FoldedGroupsFollowMegatronCoresExpertRankOrder) {
  const Workload w = mixtral(32);
  const IterationPlan plan = plan_iteration(w, folded(8, 2, 8, 1));
  ASSERT_TRUE(plan.feasible);
  Groups ep_groups, replicas;
  for (std::uint32_t j = 0; j < 2; ++j) {
    std::vector<std::uint32_t> g;
    for (std::uint32_t e = 0; e < 8; ++e) g.push_back(e + 8 * j);
    ep_groups.insert(g);
  }
  for (std::uint32_t i = 0; i < 8; ++i) replicas.insert({i, i + 8});
  const double experts = 32 * 3 * 4096.0 * 14336;
  EXPECT_DOUBLE_EQ(experts, 5637144576.0);
  std::size_t all_to_alls = 0;
  std::map<std::string, double> bytes;
  for (const Task& t : plan.graph.tasks) {
    if (t.purpose == CommPurpose::ExpertParallel) {
      ++all_to_alls;
      EXPECT_DOUBLE_EQ(t.bytes, 33554432.0);
      EXPECT_EQ(groups_of(plan, t), ep_groups);
    }
    if (t.purpose != CommPurpose::DataParallel) continue;
    const std::string& name = plan.graph.labels[t.label];
    bytes[name] += t.bytes * t.repeat;
    if (name.rfind("expert_", 0) == 0) {
      EXPECT_EQ(groups_of(plan, t), replicas) << name;
    }
  }
  EXPECT_GT(all_to_alls, 0u);
  const double G = w.grad_bytes_per_element;
  EXPECT_NEAR(bytes["expert_dp_allreduce"], experts * G, 1e-12 * experts * G);
  // Unfolded (etp = tp = 2) the 8 EP ranks are the 8 dp ranks of a tp index: every one holds
  // different experts and nothing reduces them.
  const IterationPlan unfolded = plan_iteration(w, folded(8, 2, 8, 0));
  for (const Task& t : unfolded.graph.tasks)
    EXPECT_EQ(unfolded.graph.labels[t.label].rfind("expert_", 0), std::string::npos);
}

// The TP collectives a Mixtral block issues per microbatch with sequence parallelism. Attention:
// forward an AllGather in and a ReduceScatter out; backward the QKV's re-gather and its input
// gradient's ReduceScatter, and the projection's output-gradient AllGather, each of s h x 2 bytes
// = 4096 x 4096 x 2 = 33,554,432. The MoE layer gathers nothing at its ends (the router and the
// dispatch run on the rank's own s / tp tokens); with the experts split over tp (etp 0)
// Megatron-Core's token dispatcher all-gathers the dispatched tokens over the etp = 2 ranks and
// reduce-scatters the experts' outputs (forward), and the reverse pair backward, each of the k s h
// routed token copies: 2 x 4096 x 4096 x 2 = 67,108,864 bytes (x model.moe_imbalance). With whole
// experts (etp 1) none. A model with shared experts (DeepSeek-V3) keeps the ends' AllGather and
// ReduceScatter for its TP-split shared expert, with or without folding.
TEST(ExpertTensor, UnsplitExpertsHaveNoTensorParallelCollectives) {
  const Workload w = mixtral(32);
  const auto total = [](const PassCost& p) {
    return TpCollectives{p.exposed.allreduce + p.hidden.allreduce,
                         p.exposed.reducescatter + p.hidden.reducescatter,
                         p.exposed.allgather + p.hidden.allgather};
  };
  const LayerCost split = transformer_costs(layer_cost_key(w, folded(8, 2, 8, 0))).moe_block;
  const LayerCost whole = transformer_costs(layer_cost_key(w, folded(8, 2, 8, 1))).moe_block;
  EXPECT_EQ(total(split.forward), (TpCollectives{0, 1, 1}));
  EXPECT_EQ(total(split.backward), (TpCollectives{0, 1, 2}));
  EXPECT_EQ(split.forward.expert, (TpCollectives{0, 1, 1}));
  EXPECT_EQ(split.backward.expert, (TpCollectives{0, 1, 1}));
  EXPECT_DOUBLE_EQ(split.tp_bytes, 33554432.0);
  EXPECT_DOUBLE_EQ(split.expert_tp_bytes, 67108864.0 * w.moe_imbalance);
  EXPECT_EQ(total(whole.forward), (TpCollectives{0, 1, 1}));
  EXPECT_EQ(total(whole.backward), (TpCollectives{0, 1, 2}));
  EXPECT_EQ(whole.forward.expert, (TpCollectives{}));
  EXPECT_EQ(whole.backward.expert, (TpCollectives{}));
  EXPECT_EQ(whole.expert_tp_bytes, 0.0);
  // etp = tp is the unfolded key itself.
  EXPECT_EQ(layer_cost_key(w, folded(8, 2, 8, 2)), layer_cost_key(w, folded(8, 2, 8, 0)));
  // In the iteration: per microbatch and MoE block 4 expert collectives of those bytes over the TP
  // pairs, on GPU 0's compute stream (32 blocks, 4 microbatches).
  const IterationPlan plan = plan_iteration(w, folded(8, 2, 8, 0));
  double expert_collectives = 0;
  for (const Task& t : plan.graph.tasks)
    if (t.purpose == CommPurpose::TensorParallel && t.bytes == split.expert_tp_bytes &&
        plan.graph.group_sets[t.group_set].groups[0] == std::vector<std::uint32_t>{0, 1})
      expert_collectives += t.repeat;
  EXPECT_EQ(expert_collectives, 4.0 * 32 * 4);

  Workload ds = make_workload(builtin_model("deepseek-v3"), builtin_device("h100"), "bf16", 64);
  ds.fused_attention = true;
  const LayerCost ds_split = transformer_costs(layer_cost_key(ds, folded(8, 2, 8, 0))).moe_block;
  const LayerCost ds_whole = transformer_costs(layer_cost_key(ds, folded(8, 2, 8, 1))).moe_block;
  EXPECT_EQ(total(ds_whole.forward), total(ds_split.forward));
  EXPECT_EQ(total(ds_whole.backward), total(ds_split.backward));
  EXPECT_EQ(total(ds_split.forward).allgather, 2u);  // attention's and the shared expert's
  EXPECT_EQ(ds_split.forward.expert, (TpCollectives{0, 1, 1}));
  EXPECT_EQ(ds_split.backward.expert, (TpCollectives{0, 1, 1}));
  EXPECT_EQ(ds_whole.forward.expert, (TpCollectives{}));
}

// On an idealised device (GEMMs at their FLOPs, memory free) whole experts with the rank's own
// tokens (etp 1: 8 / 8 experts x 8 ranks' 2048 tokens) do the FLOPs of half-experts with the
// tp group's gathered tokens (etp 2: 8 ranks' 4096 tokens): a block's compute is the same.
TEST(ExpertTensor, ExpertGemmsKeepTheirFlopsUnderFolding) {
  const Workload w = mixtral(32);
  const auto ideal = test::idealised;
  const LayerCostKey k0 = ideal(layer_cost_key(w, folded(8, 2, 4, 0)));
  const LayerCostKey k1 = ideal(layer_cost_key(w, folded(8, 2, 8, 1)));
  EXPECT_EQ(k1.split.expert_tp(), 1u);
  const double c0 = transformer_costs(k0).moe_block.forward.compute_s;
  EXPECT_NEAR(transformer_costs(k1).moe_block.forward.compute_s, c0, 1e-12 * c0);
  const double b0 = transformer_costs(k0).moe_block.backward.compute_s;
  EXPECT_NEAR(transformer_costs(k1).moe_block.backward.compute_s, b0, 1e-12 * b0);
}

// Mixtral on 16 GPUs, tp 2, dp 8, ep 4: unfolded each rank holds half of 2 experts a block
// (32 x 1,409,286,144 / 8 = 5,637,144,576 parameters), folded with etp 1 2 whole experts (twice
// that). Weights and gradients double; ZeRO-1's optimizer state shards over the expert replicas:
// tp x dp / (etp x ep) = 4 folded against dp / ep = 2, so it stays. Activations do not move
// (with sequence parallelism each rank keeps its own tokens' rows either way).
TEST(ExpertTensor, WholeExpertsDoubleTheExpertStatesAtTp2) {
  const Workload w = mixtral(32);
  const double per_rank = 32 * 1409286144.0 / 8;
  Strategy a = folded(8, 2, 4, 0), b = folded(8, 2, 4, 1);
  a.zero = b.zero = 1;
  EXPECT_EQ(a.expert_replicas(), 2u);
  EXPECT_EQ(b.expert_replicas(), 4u);
  const auto stages = partition_stages(w.model, 1);
  const MemoryBreakdown ma = stage_memory(w, a, stages, 0), mb = stage_memory(w, b, stages, 0);
  EXPECT_DOUBLE_EQ(mb.weights - ma.weights, per_rank * w.bytes_per_element);
  EXPECT_DOUBLE_EQ(mb.gradients - ma.gradients, per_rank * w.grad_bytes_per_element);
  EXPECT_NEAR(mb.optimizer, ma.optimizer, 1e-9 * ma.optimizer);
  EXPECT_DOUBLE_EQ(mb.activations, ma.activations);
}

// The exact search's enumerator over optimize.etp = 0, 1 on Mixtral (8 experts), 16 GPUs: every
// valid (tp, dp, ep, etp, sequence parallelism) once. Unfolded, ep divides dp and 8; whole experts
// need tp > 1 and sequence parallelism, ep dividing tp x dp and 8: at tp 2, pp 2 (dp 4) ep 8
// exists only folded. With the default list (0) the enumeration is the one before optimize.etp.
TEST(ExpertTensor, TheEnumeratorVisitsEveryValidFoldingOnce) {
  const Workload w = mixtral(32);
  StrategySpace space;
  space.set(&StrategyKnobs::ep, {1, 2, 4, 8});
  space.set(&StrategyKnobs::etp, {0, 1, 2});
  space.max_microbatches = 1;
  space.pp = {1, 2};
  space.tp = {1, 2, 4};
  using Key =
      std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, bool>;  // tp dp ep etp sp
  std::map<Key, int> seen;
  for_each_strategy(w, 16, space, [&](const Strategy& s, double, bool) {
    if (s.recompute != Recompute::None || s.zero != 0 || s.tp_overlap != TpOverlap::None || !s.dp_overlap ||
        s.schedule != PipelineSchedule::OneFOneB)
      return;
    ++seen[{s.tp, s.dp, s.ep, s.etp, s.sequence_parallel}];
    EXPECT_NO_THROW(validate_strategy(s, w, 16));
  });
  std::map<Key, int> expected;
  for (const std::uint32_t tp : {1u, 2u, 4u})
    for (const std::uint32_t pp : {1u, 2u}) {
      const std::uint32_t dp = 16 / tp / pp;
      for (const bool sp : tp > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false})
        for (const std::uint32_t ep : {1u, 2u, 4u, 8u}) {
          if (dp % ep == 0) expected[{tp, dp, ep, 0, sp}] = 1;
          // etp = e < tp dividing tp (etp 2 at tp 2 is tp itself: the unfolded 0).
          for (const std::uint32_t e : {1u, 2u})
            if (e < tp && tp % e == 0 && sp && (tp / e * dp) % ep == 0) expected[{tp, dp, ep, e, sp}] = 1;
        }
    }
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(seen.count({2, 4, 8, 1, true}), 1u);  // ep 8 at dp 4: folded only
  EXPECT_EQ(seen.count({2, 4, 8, 0, true}), 0u);
  EXPECT_EQ(seen.count({4, 2, 4, 2, true}), 1u);  // ep 4 at tp 4, dp 2: over tp/etp x dp = 4
  EXPECT_EQ(seen.count({4, 2, 8, 2, true}), 0u);  // 8 does not divide 4; it needs etp 1

  // Listing 1 only adds strategies: the default list (0) visits exactly the etp = 0 ones.
  std::size_t unfolded = 0, plain = 0;
  for_each_strategy(w, 16, space, [&](const Strategy& s, double, bool) { unfolded += s.etp == 0; });
  space.set(&StrategyKnobs::etp, {0});
  for_each_strategy(w, 16, space, [&](const Strategy& s, double, bool) {
    ++plain;
    EXPECT_EQ(s.etp, 0u);
  });
  EXPECT_EQ(plain, unfolded);
  EXPECT_GT(plain, 0u);
}

// Mixtral 8x7B on 32 GPUs, tp 4 (sequence parallel), dp 8, ep 8, etp 2: the experts split over
// pairs of the 4 TP ranks. The expert grid (etp innermost, then ep, then the tp/etp x dp / ep = 2
// expert replicas) numbers rank t + 2 (e + 8 d): EP groups {t, t+2, ..., t+14} and
// {16 + t, ..., 30 + t} for t = 0, 1; the dispatcher's gather and reduce-scatter run over the pairs
// {2i, 2i+1}, each of the k b s h etp / tp routed token copies: 2 x 4096 x 4096 x 2 / 4 x 2 bytes =
// 33,554,432, 4 per block and microbatch (32 blocks, 4 microbatches). A rank holds 1/(etp x ep) =
// 1/16 of each MoE layer's experts: twice etp 0's 1/32. On an idealised device the block's compute
// is etp 0's (the same FLOPs per rank).
TEST(ExpertTensor, PartialSplitGathersOverTheExpertTensorPairs) {
  const Workload w = mixtral(32);
  const Strategy s = folded(8, 4, 8, 2);
  const IterationPlan plan = plan_iteration(w, s);
  ASSERT_TRUE(plan.feasible);
  Groups ep_groups, pairs;
  for (std::uint32_t d = 0; d < 2; ++d)
    for (std::uint32_t t = 0; t < 2; ++t) {
      std::vector<std::uint32_t> g;
      for (std::uint32_t e = 0; e < 8; ++e) g.push_back(t + 2 * (e + 8 * d));
      ep_groups.insert(g);
    }
  for (std::uint32_t i = 0; i < 16; ++i) pairs.insert({2 * i, 2 * i + 1});
  const double expert_bytes = 2 * 4096.0 * 4096 * 2 / 4 * 2;
  EXPECT_DOUBLE_EQ(expert_bytes, 33554432.0);
  EXPECT_DOUBLE_EQ(transformer_costs(layer_cost_key(w, s)).moe_block.expert_tp_bytes, expert_bytes);
  double expert_collectives = 0;
  std::size_t all_to_alls = 0;
  for (const Task& t : plan.graph.tasks) {
    if (t.purpose == CommPurpose::ExpertParallel) {
      ++all_to_alls;
      EXPECT_EQ(groups_of(plan, t), ep_groups);
    }
    if (t.purpose == CommPurpose::TensorParallel && groups_of(plan, t) == pairs) {
      EXPECT_DOUBLE_EQ(t.bytes, expert_bytes);
      if (plan.graph.group_sets[t.group_set].groups[0] == std::vector<std::uint32_t>{0, 1})
        expert_collectives += t.repeat;
    }
  }
  EXPECT_GT(all_to_alls, 0u);
  EXPECT_EQ(expert_collectives, 4.0 * 32 * 4);
  // The states and the FLOPs.
  Strategy unfolded = folded(8, 4, 8, 0);
  const auto stages = partition_stages(w.model, 1);
  const double per_rank = 32 * 1409286144.0 / 32;  // etp 0: 1/(tp x ep) of each layer's experts
  EXPECT_DOUBLE_EQ(stage_memory(w, s, stages, 0).weights - stage_memory(w, unfolded, stages, 0).weights,
                   per_rank * w.bytes_per_element);
  const auto ideal = test::idealised;
  const double c0 = transformer_costs(ideal(layer_cost_key(w, unfolded))).moe_block.forward.compute_s;
  EXPECT_NEAR(transformer_costs(ideal(layer_cost_key(w, s))).moe_block.forward.compute_s, c0, 1e-12 * c0);
}

TEST(ExpertTensor, BadFoldingNamesItsKey) {
  const Workload w = mixtral(32);
  const auto where = test::strategy_error_key;
  Strategy s = folded(8, 4, 8, 3);
  EXPECT_EQ(where(w, s), "key strategy.etp");  // does not divide tp
  EXPECT_EQ(where(w, folded(8, 4, 8, 8)), "key strategy.etp");
  EXPECT_EQ(where(w, folded(8, 4, 8, 2)), "no error");         // 8 divides tp/etp x dp = 16
  EXPECT_EQ(where(w, folded(2, 4, 8, 2)), "key strategy.ep");  // 8 does not divide 2 x 2
  s = folded(8, 2, 8, 1);
  EXPECT_EQ(where(w, s), "no error");
  s.sequence_parallel = false;
  EXPECT_EQ(where(w, s), "key strategy.etp");
  EXPECT_EQ(where(w, folded(2, 2, 8, 1)), "key strategy.ep");  // 8 does not divide tp x dp = 4
  EXPECT_EQ(where(w, folded(8, 2, 8, 2)), "no error");         // etp = tp: unfolded
  EXPECT_EQ(where(w, folded(8, 1, 8, 1)), "no error");
  const Workload dense = make_workload(builtin_model("llama3-8b"), builtin_device("h100"), "bf16", 32);
  EXPECT_EQ(where(dense, folded(8, 2, 1, 1)), "key strategy.etp");
}

}  // namespace
}  // namespace toposweep
