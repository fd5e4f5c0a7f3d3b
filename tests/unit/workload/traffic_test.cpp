// Node-level traffic of an iteration, against volumes derived by hand.
#include "toposweep/workload/traffic.hpp"

#include <gtest/gtest.h>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/model_library.hpp"

namespace toposweep {
namespace {

Workload workload(const std::string& model, double global_batch) {
  return make_workload(builtin_model(model), builtin_device("a100"), "fp16", global_batch);
}

Strategy strategy(std::uint32_t dp, std::uint32_t tp, std::uint32_t pp, std::uint32_t mu) {
  Strategy s;
  s.dp = dp;
  s.tp = tp;
  s.pp = pp;
  s.microbatches = mu;
  return s;
}

TEST(Traffic, DataParallelIsOneMutableGroupOverAllNodes) {
  const Workload w = workload("bert-large", 16 * 8);
  const auto plan = plan_iteration(w, strategy(16, 1, 1, 1));
  const auto d = derive_traffic(plan.graph, rank_order_placement(16, 4), 4);
  ASSERT_EQ(d.allreduce.size(), 1u);
  EXPECT_EQ(d.allreduce[0].nodes, (std::vector<std::uint32_t>{0, 1, 2, 3}));
  EXPECT_DOUBLE_EQ(d.allreduce[0].bytes, 2 * w.model.parameters());
  EXPECT_TRUE(d.mp.empty());
}

TEST(Traffic, IntraNodeTrafficIsLeftOut) {
  // tp = 4 inside 4-GPU nodes, dp = 1: nothing crosses a node boundary.
  const auto plan = plan_iteration(workload("gpt3-1.3b", 4), strategy(1, 4, 1, 2));
  const auto d = derive_traffic(plan.graph, rank_order_placement(4, 4), 1);
  EXPECT_TRUE(d.allreduce.empty());
  EXPECT_TRUE(d.mp.empty());
}

TEST(Traffic, PipelineSendsBecomeDirectedNodeDemand) {
  // tp = 4 per node, 2 stages on 2 nodes: each of the 4 TP ranks sends its 1/4 of the microbatch's
  // b*s*h activations forward and gets the gradients back, for every microbatch (Megatron's
  // scatter/gather; the receiving server gathers the slices over its own fabric).
  const std::uint32_t mu = 4;
  const auto plan = plan_iteration(workload("gpt3-1.3b", 8), strategy(1, 4, 2, mu));
  const auto d = derive_traffic(plan.graph, rank_order_placement(8, 4), 2);
  const double b = 8.0 / mu, per_send = b * 2048 * 2048 * 2;
  ASSERT_EQ(d.mp.size(), 2u);
  EXPECT_EQ(d.mp[0].src, 0u);
  EXPECT_EQ(d.mp[0].dst, 1u);
  EXPECT_DOUBLE_EQ(d.mp[0].bytes, 4 * mu * per_send / 4);
  EXPECT_DOUBLE_EQ(d.mp[1].bytes, 4 * mu * per_send / 4);
  // The tied embedding copies on both stages sum their gradients: 4 rank pairs across the two
  // nodes, V*h/tp fp16 values each.
  ASSERT_EQ(d.allreduce.size(), 1u);
  EXPECT_EQ(d.allreduce[0].nodes, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_DOUBLE_EQ(d.allreduce[0].bytes, 4 * 50257.0 * 2048 / 4 * 2);
}

TEST(Traffic, TensorParallelAcrossNodesIsAnAllReduceGroup) {
  // tp = 8 over two 4-GPU nodes: each microbatch's (4L + 2) AllReduces of b*s*h span nodes {0, 1}.
  const std::uint32_t mu = 2;
  const auto plan = plan_iteration(workload("gpt3-1.3b", 8), strategy(1, 8, 1, mu));
  const auto d = derive_traffic(plan.graph, rank_order_placement(8, 4), 2);
  ASSERT_EQ(d.allreduce.size(), 1u);
  EXPECT_EQ(d.allreduce[0].nodes, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_DOUBLE_EQ(d.allreduce[0].bytes, mu * (4 * 24 + 2) * (8.0 / mu) * 2048 * 2048 * 2);
}

TEST(Traffic, EmbeddingAllToAllSpreadsEvenlyOverNodePairs) {
  const Workload w = workload("dlrm", 16 * 128);
  const auto plan = plan_iteration(w, strategy(16, 1, 1, 1));
  const auto d = derive_traffic(plan.graph, rank_order_placement(16, 4), 4);
  // Per rank and direction 4 tables x 128 x 2048 samples x 2 B, 1/16 to each rank; a node pair
  // has 4 x 4 GPU pairs; forward and backward.
  const double per_gpu_pair = 4 * 128 * 2048 * 2.0 / 16;
  ASSERT_EQ(d.mp.size(), 12u);
  for (const auto& e : d.mp) EXPECT_DOUBLE_EQ(e.bytes, 2 * 16 * per_gpu_pair);
  ASSERT_EQ(d.allreduce.size(), 1u);
  EXPECT_DOUBLE_EQ(d.allreduce[0].bytes, 2 * w.model.dense_parameters());
}

TEST(Traffic, ZeroOneCountsReduceScatterAndAllGatherAsOneAllReduce) {
  const Workload w = workload("bert-large", 8 * 8);
  Strategy s = strategy(8, 1, 1, 1);
  s.zero = 1;
  const auto d = derive_traffic(plan_iteration(w, s).graph, rank_order_placement(8, 1), 8);
  ASSERT_EQ(d.allreduce.size(), 1u);
  EXPECT_DOUBLE_EQ(d.allreduce[0].bytes, 2 * w.model.parameters());
}

// Mixtral 8x7B (8 experts, top 2) with its EP group of 8 over two nodes of 4: a token's two experts
// both lie on the other node with probability C(4, 2) / C(8, 2) = 6/28, so one copy per destination
// node sends 2 x (1 - 6/28) = 22/14 copies across where the plain All-to-All sends 2 x 4/8 = 1:
// DeepEP's node-to-node demand is 11/14 of the plain one (by hand), which the topology finder sees.
TEST(Traffic, DeepEpDispatchSendsElevenFourteenthsAcross) {
  const Workload w = make_workload(builtin_model("mixtral-8x7b"), builtin_device("h100"), "bf16", 16);
  Strategy s = strategy(8, 1, 1, 2);
  s.ep = 8;
  s.zero = 1;
  const auto plain = derive_traffic(plan_iteration(w, s).graph, rank_order_placement(8, 4), 2);
  s.ep_dispatcher = EpDispatcher::DeepEp;
  const auto deepep = derive_traffic(plan_iteration(w, s).graph, rank_order_placement(8, 4), 2);
  ASSERT_EQ(plain.mp.size(), 2u);  // node 0 -> 1 and 1 -> 0, the All-to-Alls only
  ASSERT_EQ(deepep.mp.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(deepep.mp[i].src, plain.mp[i].src);
    EXPECT_NEAR(deepep.mp[i].bytes, plain.mp[i].bytes * 11.0 / 14.0, 1e-9 * plain.mp[i].bytes);
  }
  EXPECT_EQ(deepep.total_allreduce_bytes(), plain.total_allreduce_bytes());  // DP untouched
}

TEST(Traffic, PlacementMustCoverTheGraph) {
  const auto plan = plan_iteration(workload("bert-large", 64), strategy(8, 1, 1, 1));
  EXPECT_THROW(derive_traffic(plan.graph, rank_order_placement(4, 1), 4), BadInput);
  EXPECT_THROW(derive_traffic(plan.graph, rank_order_placement(8, 1), 4), BadInput);
}

}  // namespace
}  // namespace toposweep
