// ZeRO stages 0-3: model-state memory against the ZeRO paper's Figure 1, the DP collectives of
// each stage against hand-computed bytes, and the strategy.zero / strategy.zero1 keys.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/config_keys.hpp"
#include "toposweep/workload/enumerate.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/model_library.hpp"
#include "toposweep/workload/traffic.hpp"
#include "workload_test_helpers.hpp"

namespace toposweep {
namespace {

// Psi = 7.5B parameters in three equal layers without activations (model states only).
Workload paper_workload() {
  Model m;
  m.name = "psi-7.5b";
  for (int i = 0; i < 3; ++i) {
    Layer l;
    l.name = "l" + std::to_string(i);
    l.params_replicated = 2.5e9;
    m.layers.push_back(l);
  }
  return make_workload(m, builtin_device("a100"), "fp16", 64);
}

Strategy zero_dp(std::uint32_t dp, std::uint8_t zero, std::uint32_t mu = 1) {
  Strategy s;
  s.dp = dp;
  s.zero = zero;
  s.microbatches = mu;
  return s;
}

TEST(Zero, ModelStatesMatchTheZeroPaperFigure1) {
  // Rajbhandari et al. SC'20, Figure 1: Psi = 7.5B, Nd = 64, K = 12 (mixed-precision Adam).
  const Workload w = paper_workload();
  ASSERT_EQ(w.optimizer_bytes_per_param(), 12);
  const double paper_gb[4] = {120, 31.4, 16.6, 1.9};  // baseline, P_os, P_os+g, P_os+g+p
  for (std::uint8_t zero = 0; zero <= 3; ++zero) {
    const MemoryBreakdown m = memory_per_gpu(w, zero_dp(64, zero));
    EXPECT_NEAR(m.model_states() / 1e9, paper_gb[zero], 0.05) << "stage " << int{zero};
    EXPECT_NEAR(m.model_states(), 7.5e9 * model_state_bytes_per_param(w, zero, 64).total(), 1)
        << "stage " << int{zero};
  }
  // Unrounded: (2 + 2 + 12/64) Psi, (2 + 14/64) Psi, 16/64 Psi.
  EXPECT_DOUBLE_EQ(memory_per_gpu(w, zero_dp(64, 1)).model_states(), 31.40625e9);
  EXPECT_DOUBLE_EQ(memory_per_gpu(w, zero_dp(64, 2)).model_states(), 16.640625e9);
  EXPECT_DOUBLE_EQ(memory_per_gpu(w, zero_dp(64, 3)).model_states(), 1.875e9);
  // Stage 3 also holds one gathered layer (2.5B fp16 weights) while it computes; no other stage does.
  EXPECT_DOUBLE_EQ(memory_per_gpu(w, zero_dp(64, 3)).gathered_weights, 5e9);
  EXPECT_DOUBLE_EQ(memory_per_gpu(w, zero_dp(64, 2)).gathered_weights, 0);
  // The total adds the device's allocator reserve.
  EXPECT_DOUBLE_EQ(memory_per_gpu(w, zero_dp(64, 3)).total(), 1.875e9 + 5e9 + w.device.memory_reserve_bytes);
}

// ResNet-50 v1.5 has 25,557,032 parameters (torchvision); its fp16 gradients are X bytes.
constexpr double kResnetGradBytes = 25'557'032 * 2.0;

struct DpTraffic {
  double allreduce = 0, reducescatter = 0, allgather = 0;  // per-rank buffers, summed
  int allgathers = 0;
  double wire_bytes_per_rank = 0;  // busbw-wise: AR 2X(n-1)/n, RS and AG X(n-1)/n
};

DpTraffic dp_traffic(const TaskGraph& g, double n) {
  DpTraffic t;
  for (const Task& task : g.tasks) {
    if (task.kind != TaskKind::Collective || task.purpose != CommPurpose::DataParallel) continue;
    const double x = task.bytes * task.repeat;
    if (task.op == CollectiveOp::AllReduce) {
      t.allreduce += x;
      t.wire_bytes_per_rank += 2 * x * (n - 1) / n;
    } else if (task.op == CollectiveOp::ReduceScatter) {
      t.reducescatter += x;
      t.wire_bytes_per_rank += x * (n - 1) / n;
    } else if (task.op == CollectiveOp::AllGather) {
      t.allgather += x;
      ++t.allgathers;
      t.wire_bytes_per_rank += x * (n - 1) / n;
    }
  }
  return t;
}

TEST(Zero, DataParallelCollectivesPerStage) {
  const Workload w = make_workload(builtin_model("resnet50"), builtin_device("a100"), "fp16", 8 * 128);
  const double X = kResnetGradBytes, n = 8;
  const DpTraffic z0 = dp_traffic(plan_iteration(w, zero_dp(8, 0)).graph, n);
  EXPECT_NEAR(z0.allreduce, X, 1e-3);
  EXPECT_EQ(z0.reducescatter + z0.allgather, 0);
  EXPECT_NEAR(z0.wire_bytes_per_rank, 89'449'612, 1e-3);  // 2 X 7/8
  // Stages 1 and 2: ReduceScatter of the gradients + one AllGather of the updated weights.
  for (std::uint8_t zero : {1, 2}) {
    const DpTraffic z = dp_traffic(plan_iteration(w, zero_dp(8, zero)).graph, n);
    EXPECT_EQ(z.allreduce, 0);
    EXPECT_NEAR(z.reducescatter, X, 1e-3);
    EXPECT_NEAR(z.allgather, X, 1e-3);
    EXPECT_EQ(z.allgathers, 1);
    EXPECT_NEAR(z.wire_bytes_per_rank, 89'449'612, 1e-3);
  }
  // Stage 3: the weights are gathered before the forward and again before the backward; the
  // gradients reduce-scattered. 3 X 7/8 = 1.5 x the AllReduce.
  const DpTraffic z3 = dp_traffic(plan_iteration(w, zero_dp(8, 3)).graph, n);
  EXPECT_NEAR(z3.reducescatter, X, 1e-3);
  EXPECT_NEAR(z3.allgather, 2 * X, 1e-3);
  EXPECT_EQ(z3.allgathers, 2);
  EXPECT_NEAR(z3.wire_bytes_per_rank, 134'174'418, 1e-3);
  EXPECT_DOUBLE_EQ(z3.wire_bytes_per_rank, 1.5 * z0.wire_bytes_per_rank);
}

TEST(Zero, StageOneAndTwoGraphsAreIdenticalWithOneMicrobatch) {
  const Workload w = make_workload(builtin_model("bert-large"), builtin_device("a100"), "fp16", 8 * 16);
  const TaskGraph a = plan_iteration(w, zero_dp(8, 1)).graph, b = plan_iteration(w, zero_dp(8, 2)).graph;
  ASSERT_EQ(a.tasks.size(), b.tasks.size());
  for (std::size_t i = 0; i < a.tasks.size(); ++i) {
    EXPECT_EQ(a.tasks[i].op, b.tasks[i].op);
    EXPECT_EQ(a.tasks[i].bytes, b.tasks[i].bytes);
    EXPECT_EQ(a.tasks[i].duration_s, b.tasks[i].duration_s);
  }
  EXPECT_EQ(a.deps, b.deps);
}

TEST(Zero, ShardedGradientsAreReducedEveryMicrobatch) {
  // With 4 microbatches, stages 2 and 3 keep only a gradient shard, so each backward pass
  // reduce-scatters its gradients: 4 X; stage 3 also gathers the weights in all 8 passes.
  const Workload w = make_workload(builtin_model("resnet50"), builtin_device("a100"), "fp16", 8 * 128);
  const double X = kResnetGradBytes, n = 8;
  const DpTraffic z1 = dp_traffic(plan_iteration(w, zero_dp(8, 1, 4)).graph, n);
  EXPECT_NEAR(z1.reducescatter, X, 1e-3);
  EXPECT_NEAR(z1.allgather, X, 1e-3);
  const DpTraffic z2 = dp_traffic(plan_iteration(w, zero_dp(8, 2, 4)).graph, n);
  EXPECT_NEAR(z2.reducescatter, 4 * X, 1e-3);
  EXPECT_NEAR(z2.allgather, X, 1e-3);
  const DpTraffic z3 = dp_traffic(plan_iteration(w, zero_dp(8, 3, 4)).graph, n);
  EXPECT_NEAR(z3.reducescatter, 4 * X, 1e-3);
  EXPECT_NEAR(z3.allgather, 8 * X, 1e-3);
  EXPECT_EQ(z3.allgathers, 8);
  EXPECT_NEAR(z3.wire_bytes_per_rank, 12 * X * 7 / 8, 1e-3);
}

TEST(Zero, StageThreeGathersWeightsOnTheCriticalPathBeforeEachPass) {
  // Each pass's compute follows, on the same stream, the AllGather of the stage's weights.
  const Workload w = make_workload(builtin_model("gpt3-1.3b"), builtin_device("a100"), "fp16", 16);
  Strategy s = zero_dp(4, 3, 2);
  s.pp = 2;
  const TaskGraph g = plan_iteration(w, s).graph;
  std::vector<TaskId> last_on_stream(g.stream_count(), ~TaskId{0});
  std::set<std::tuple<std::uint32_t, std::uint32_t, TaskPhase>> passes;
  for (TaskId i = 0; i < g.tasks.size(); ++i) {
    const Task& t = g.tasks[i];
    const TaskId before = last_on_stream[t.stream];
    last_on_stream[t.stream] = i;
    if (t.kind != TaskKind::Compute || t.phase == TaskPhase::WeightUpdate) continue;
    // The first compute task of a pass (gradient buckets cut the backward into several).
    if (!passes.insert({t.stage, t.microbatch, t.phase}).second) continue;
    ASSERT_NE(before, ~TaskId{0});
    const Task& gather = g.tasks[before];
    EXPECT_EQ(gather.op, CollectiveOp::AllGather);
    EXPECT_EQ(gather.purpose, CommPurpose::DataParallel);
    EXPECT_EQ(gather.microbatch, t.microbatch);
    EXPECT_EQ(gather.phase, t.phase);
    EXPECT_EQ(g.group_sets[gather.group_set].groups.size(), 1u);  // tp = 1: one DP group per stage
    EXPECT_EQ(g.group_sets[gather.group_set].groups[0].size(), 4u);
  }
  EXPECT_EQ(passes.size(), 2u /*stages*/ * 2 /*microbatches*/ * 2 /*directions*/);
}

TEST(Zero, GraphStaysSmallForGpt3WithStageThree) {
  // On top of ZeRO-0's graph (see Iteration.GraphStaysSmallForGpt3OnAThousandGpus): per (stage,
  // microbatch) two weight gathers, and one gradient ReduceScatter per backward pass.
  const Workload w = make_workload(builtin_model("gpt3-175b"), builtin_device("a100"), "fp16", 1536);
  Strategy s = zero_dp(8, 0, 24);
  s.tp = 8;
  s.pp = 16;
  s.recompute = Recompute::Full;
  const std::size_t base = plan_iteration(w, s).graph.tasks.size();
  s.zero = 3;
  const auto plan = plan_iteration(w, s);
  EXPECT_LE(plan.graph.tasks.size(), base + 3u * 16 * 24);
  EXPECT_TRUE(plan.feasible);
}

TEST(Zero, StageThreeTrafficIsOneAndAHalfAllReduces) {
  // AllReduce-equivalent node traffic (RS and AG count half): 1.5 x stage 0's, on 8 nodes.
  const Workload w = make_workload(builtin_model("bert-large"), builtin_device("a100"), "fp16", 8 * 16);
  const auto traffic = [&](std::uint8_t zero) {
    return derive_traffic(plan_iteration(w, zero_dp(8, zero)).graph, rank_order_placement(8, 1), 8)
        .total_allreduce_bytes();
  };
  EXPECT_DOUBLE_EQ(traffic(0), 2 * w.model.parameters());
  EXPECT_DOUBLE_EQ(traffic(2), traffic(0));
  EXPECT_DOUBLE_EQ(traffic(3), 1.5 * traffic(0));
}

TEST(Zero, EnumeratedMemoryAgreesWithTheFullModelForEveryStage) {
  StrategySpace space;
  space.set(&StrategyKnobs::zero, {0, 1, 2, 3});
  space.set(&StrategyKnobs::schedule, {PipelineSchedule::OneFOneB});
  for (const char* name : {"gpt3-1.3b", "resnet50", "dlrm"}) {
    const Workload w = make_workload(builtin_model(name), builtin_device("a100"), "fp16", 256);
    std::uint64_t stage3 = 0, single_replica = 0;
    const auto count = for_each_strategy(w, 64, space, [&](const Strategy& s, double mem, bool) {
      const double full = memory_per_gpu(w, s).total();
      EXPECT_NEAR(mem, full, 1e-9 * full) << name << " zero " << int{s.zero};
      stage3 += s.zero == 3;
      single_replica += s.dp == 1;
    });
    // Four stages per strategy with dp > 1; with dp = 1 the stages are one strategy (stage 0).
    EXPECT_EQ(count.checked, 4 * stage3 + single_replica) << name;
  }
}

std::uint8_t stage_of(const std::vector<std::string>& sets) {
  const Config c = test::workload_config(sets);
  return strategy_from_config(c, workload_from_config(c, 8), 8).zero;
}

std::string bad_where(const std::vector<std::string>& sets) {
  try {
    stage_of(sets);
  } catch (const BadInput& e) {
    return e.where();
  }
  return "no error";
}

TEST(Zero, ConfigKeysAndTheDeprecatedAlias) {
  EXPECT_EQ(stage_of({}), 0);
  EXPECT_EQ(stage_of({"strategy.zero=2"}), 2);
  EXPECT_EQ(stage_of({"strategy.zero1=true"}), 1);
  EXPECT_EQ(stage_of({"strategy.zero1=false"}), 0);
  EXPECT_EQ(stage_of({"strategy.zero=1", "strategy.zero1=true"}), 1);
  EXPECT_EQ(stage_of({"strategy.zero=3", "strategy.zero1=true"}), 3);  // zero1 = stage >= 1
  EXPECT_EQ(stage_of({"strategy.zero=0", "strategy.zero1=false"}), 0);
  EXPECT_NE(bad_where({"strategy.zero=2", "strategy.zero1=false"}).find("strategy.zero1"), std::string::npos);
  EXPECT_NE(bad_where({"strategy.zero=0", "strategy.zero1=true"}).find("strategy.zero1"), std::string::npos);
  EXPECT_NE(bad_where({"strategy.zero=4"}).find("strategy.zero"), std::string::npos);
  // Per-layer degrees take no ZeRO; the error names the key the user set.
  std::string ones = "1";
  for (std::size_t i = 1; i < builtin_model("resnet50").layers.size(); ++i) ones += ",1";
  EXPECT_EQ(bad_where({"model.name=resnet50", "strategy.layer_degrees=" + ones}), "no error");
  EXPECT_NE(bad_where({"model.name=resnet50", "strategy.zero=2", "strategy.layer_degrees=" + ones})
                .find("strategy.zero"),
            std::string::npos);
  EXPECT_NE(bad_where({"model.name=resnet50", "strategy.zero1=true", "strategy.layer_degrees=" + ones})
                .find("strategy.zero1"),
            std::string::npos);
}

TEST(Zero, StrategyJsonKeepsZero1AndAddsTheStage) {
  for (std::uint8_t zero = 0; zero <= 3; ++zero) {
    const nlohmann::json j = strategy_to_json(zero_dp(8, zero));
    EXPECT_EQ(j.at("zero_stage").get<int>(), zero);
    EXPECT_EQ(j.at("zero1").get<bool>(), zero >= 1);
  }
}

}  // namespace
}  // namespace toposweep
