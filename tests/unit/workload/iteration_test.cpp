// The iteration task graph: communication volumes against Megatron/DP closed forms, memory of
// a hand-worked 3-D case, the pipeline bubble from the graph's structure, and bad input.
#include "toposweep/workload/iteration.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/config_keys.hpp"
#include "toposweep/workload/model_library.hpp"
#include "workload_test_helpers.hpp"

namespace toposweep {
namespace {

Workload workload(const std::string& model, double global_batch, const std::string& device = "a100") {
  return make_workload(builtin_model(model), builtin_device(device), "fp16", global_batch);
}

Strategy strategy(std::uint32_t dp, std::uint32_t tp, std::uint32_t pp, std::uint32_t mu) {
  Strategy s;
  s.dp = dp;
  s.tp = tp;
  s.pp = pp;
  s.microbatches = mu;
  return s;
}

// Sum of bytes x repeat over tasks with a purpose (per representative instance).
double volume(const TaskGraph& g, CommPurpose purpose, TaskKind kind) {
  double v = 0;
  for (const auto& t : g.tasks)
    if (t.kind == kind && t.purpose == purpose) v += t.bytes * t.repeat;
  return v;
}

TEST(Iteration, DataParallelAllReduceCarriesEveryGradientOnce) {
  // Per-rank AllReduce buffer summed over buckets = all parameters in fp16 (2 bytes).
  for (const char* name : {"bert-large", "resnet50", "vgg16"}) {
    const Workload w = workload(name, 8 * 16);
    const auto plan = plan_iteration(w, strategy(8, 1, 1, 1));
    EXPECT_DOUBLE_EQ(volume(plan.graph, CommPurpose::DataParallel, TaskKind::Collective),
                     2 * w.model.parameters())
        << name;
    for (const auto& t : plan.graph.tasks)
      if (t.purpose == CommPurpose::DataParallel) {
        EXPECT_TRUE(t.is_mutable);
        EXPECT_EQ(plan.graph.group_sets[t.group_set].groups.size(), 1u);
        EXPECT_EQ(plan.graph.group_sets[t.group_set].groups[0].size(), 8u);
      }
  }
}

TEST(Iteration, GradientBucketsRespectTheBucketSizeAndOverlapBackward) {
  const Workload w = workload("resnet50", 4 * 32);
  Strategy s = strategy(4, 1, 1, 1);
  s.bucket_bytes = 8e6;
  const auto plan = plan_iteration(w, s);
  std::size_t buckets = 0;
  for (TaskId i = 0; i < plan.graph.tasks.size(); ++i) {
    const Task& t = plan.graph.tasks[i];
    if (t.purpose != CommPurpose::DataParallel) continue;
    ++buckets;
    // Each bucket waits for the backward compute that produced it, not the whole backward.
    bool waits_for_backward = false;
    for (TaskId d : plan.graph.deps_of(i))
      waits_for_backward |=
          plan.graph.tasks[d].kind == TaskKind::Compute && plan.graph.tasks[d].phase == TaskPhase::Backward;
    EXPECT_TRUE(waits_for_backward);
  }
  // 51.1 MB of fp16 gradients in >= 8 MB buckets (a bucket closes once it reaches 8 MB).
  EXPECT_GE(buckets, 3u);
  EXPECT_LE(buckets, static_cast<std::size_t>(2 * w.model.parameters() / 8e6));
  // The first bucket's AllReduce is issued before the last backward compute task.
  TaskId first_dp = 0, last_bwd = 0;
  for (TaskId i = 0; i < plan.graph.tasks.size(); ++i) {
    if (plan.graph.tasks[i].purpose == CommPurpose::DataParallel && first_dp == 0) first_dp = i;
    if (plan.graph.tasks[i].phase == TaskPhase::Backward && plan.graph.tasks[i].kind == TaskKind::Compute)
      last_bwd = i;
  }
  EXPECT_LT(first_dp, last_bwd);
}

TEST(Iteration, MegatronTensorParallelVolumeIsFourAllReducesPerLayer) {
  // Per microbatch: 2 AllReduces of b*s*h forward and 2 backward per layer (Megatron), plus one
  // for the vocab-parallel embedding (forward) and one for the LM head input (backward).
  const Workload w = workload("gpt3-1.3b", 32);
  const std::uint32_t tp = 4, mu = 4;
  const auto plan = plan_iteration(w, strategy(2, tp, 1, mu));
  const double b = 32.0 / 2 / mu, s = 2048, h = 2048, L = 24;
  const double per_allreduce = b * s * h * 2;
  for (const auto& t : plan.graph.tasks)
    if (t.purpose == CommPurpose::TensorParallel) {
      EXPECT_DOUBLE_EQ(t.bytes, per_allreduce);
      EXPECT_EQ(t.op, CollectiveOp::AllReduce);
      EXPECT_EQ(plan.graph.group_sets[t.group_set].groups.size(), 2u);  // one group per DP replica
    }
  EXPECT_DOUBLE_EQ(volume(plan.graph, CommPurpose::TensorParallel, TaskKind::Collective),
                   mu * (4 * L + 2) * per_allreduce);
  // Full recomputation repeats the blocks' forward AllReduces in backward: 6 per layer (Megatron
  // checkpoints the transformer layers, not the embedding).
  Strategy r = strategy(2, tp, 1, mu);
  r.recompute = Recompute::Full;
  EXPECT_DOUBLE_EQ(volume(plan_iteration(w, r).graph, CommPurpose::TensorParallel, TaskKind::Collective),
                   mu * (6 * L + 2) * per_allreduce);
  // Selective recomputation re-runs only the attention core, which has no collective.
  r.recompute = Recompute::Selective;
  EXPECT_DOUBLE_EQ(volume(plan_iteration(w, r).graph, CommPurpose::TensorParallel, TaskKind::Collective),
                   mu * (4 * L + 2) * per_allreduce);
}

TEST(Iteration, SequenceParallelismSplitsEachAllReduceIntoReduceScatterAndAllGather) {
  // Megatron-SP, per block and microbatch, each of the b*s*h per-rank buffer: forward AG before
  // QKV and FFN1, RS after proj and FFN2; backward the AG of the incoming gradient before proj and
  // FFN2, and for QKV and FFN1 the AG re-gathering their sequence-split input (for the weight
  // gradient) and the RS of their input gradient: 2 RS + 4 AG. The embedding reduce-scatters
  // its output; the head gathers its input and reduce-scatters the input's gradient.
  const Workload w = workload("gpt3-1.3b", 32);
  Strategy s = strategy(2, 4, 1, 4);
  s.sequence_parallel = true;
  const auto plan = plan_iteration(w, s);
  const double per = 32.0 / 2 / 4 * 2048 * 2048 * 2, L = 24, mu = 4;
  double rs = 0, ag = 0, ar = 0;
  for (const auto& t : plan.graph.tasks) {
    if (t.purpose != CommPurpose::TensorParallel) continue;
    EXPECT_DOUBLE_EQ(t.bytes, per);
    (t.op == CollectiveOp::ReduceScatter ? rs
     : t.op == CollectiveOp::AllGather   ? ag
                                         : ar) += t.bytes * t.repeat;
  }
  EXPECT_DOUBLE_EQ(rs, mu * (4 * L + 2) * per);
  EXPECT_DOUBLE_EQ(ag, mu * (6 * L + 1) * per);
  EXPECT_DOUBLE_EQ(ar, 0);
}

TEST(Iteration, TensorParallelGroupsFollowMegatronRankOrder) {
  const auto plan = plan_iteration(workload("gpt3-1.3b", 8), strategy(2, 2, 2, 2));
  int syncs = 0;
  for (const auto& t : plan.graph.tasks) {
    const auto& groups = plan.graph.group_sets[t.group_set].groups;
    if (t.purpose == CommPurpose::TensorParallel) {
      // rank = t + tp*(d + dp*p): stage p's TP groups are {4p, 4p+1} and {4p+2, 4p+3}.
      const std::uint32_t base = 4 * t.stage;
      EXPECT_EQ(groups, (std::vector<std::vector<std::uint32_t>>{{base, base + 1}, {base + 2, base + 3}}));
    }
    if (plan.graph.labels[t.label] == "embedding_sync") {
      // Tied embeddings: the first and last stage's copies sum their gradients pairwise.
      EXPECT_EQ(groups, (std::vector<std::vector<std::uint32_t>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
      EXPECT_DOUBLE_EQ(t.bytes, 50257.0 * 2048 / 2 * 2);
      ++syncs;
    } else if (t.purpose == CommPurpose::DataParallel) {
      EXPECT_EQ(groups, (std::vector<std::vector<std::uint32_t>>{{4 * t.stage, 4 * t.stage + 2},
                                                                 {4 * t.stage + 1, 4 * t.stage + 3}}));
    }
    if (t.purpose == CommPurpose::PipelineParallel && t.phase == TaskPhase::Forward) {
      EXPECT_EQ(groups, (std::vector<std::vector<std::uint32_t>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
    }
  }
  EXPECT_EQ(syncs, 1);
}

TEST(Iteration, PipelineSendsOneActivationPerBoundaryPerMicrobatchEachWay) {
  const Workload w = workload("gpt3-1.3b", 16);
  const std::uint32_t q = 4, mu = 8;
  const auto plan = plan_iteration(w, strategy(2, 1, q, mu));
  const double b = 16.0 / 2 / mu, bsh_bytes = b * 2048 * 2048 * 2;
  std::size_t fwd = 0, bwd = 0;
  for (const auto& t : plan.graph.tasks) {
    if (t.purpose != CommPurpose::PipelineParallel) continue;
    EXPECT_EQ(t.kind, TaskKind::Transfer);
    EXPECT_DOUBLE_EQ(t.bytes, bsh_bytes);
    EXPECT_EQ(plan.graph.group_sets[t.group_set].groups.size(), 2u);  // dp x tp pairs
    (t.phase == TaskPhase::Forward ? fwd : bwd)++;
  }
  EXPECT_EQ(fwd, (q - 1) * mu);
  EXPECT_EQ(bwd, (q - 1) * mu);
  EXPECT_DOUBLE_EQ(volume(plan.graph, CommPurpose::PipelineParallel, TaskKind::Transfer),
                   2 * (q - 1) * mu * bsh_bytes);
}

TEST(Iteration, PipelineBubbleFollowsFromTheGraph) {
  // q equal stages, mu microbatches, free communication: both schedules take
  // (mu + q - 1)(t_f + t_b), so the idle fraction is (q - 1)/(mu + q - 1).
  for (auto schedule : {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB})
    for (std::uint32_t q : {2u, 4u})
      for (std::uint32_t mu : {1u, 3u, 8u}) {
        const Workload w =
            make_workload(test::uniform_chain(static_cast<int>(q)), builtin_device("a100"), "fp16", mu);
        Strategy s = strategy(1, 1, q, mu);
        s.schedule = schedule;
        const auto plan = plan_iteration(w, s);
        const double tf = 1e12 / w.flops_per_s, tb = 2e12 / w.flops_per_s;
        const double makespan = test::makespan_without_comm(plan.graph);
        EXPECT_NEAR(makespan, (mu + q - 1) * (tf + tb), 1e-9);
        const double bubble = 1 - mu * (tf + tb) / makespan;
        EXPECT_NEAR(bubble, (q - 1.0) / (mu + q - 1.0), 1e-9)
            << schedule_name(schedule) << " q=" << q << " mu=" << mu;
      }
}

TEST(Iteration, ComputeTimeIsFlopsOverAchievableRate) {
  const Workload w = workload("resnet50", 4 * 128);
  const auto plan = plan_iteration(w, strategy(4, 1, 1, 1));
  const double expected =
      128 * (w.model.forward_flops_per_sample() + w.model.backward_flops_per_sample()) / (312e12 * 0.5);
  EXPECT_NEAR(test::makespan_without_comm(plan.graph), expected, 1e-12);
  EXPECT_DOUBLE_EQ(plan.total_flops,
                   4 * 128 * (w.model.forward_flops_per_sample() + w.model.backward_flops_per_sample()));
}

TEST(Iteration, HandWorkedThreeDimensionalMemory) {
  // 4 layers, h 1024, 16 heads, s 1024, V 32000, tied, learned positions; dp = tp = pp = 2,
  // 4 microbatches of 2 sequences (global batch 16), 1F1B, fp16 + Adam (16 bytes/param).
  TransformerShape shape;
  shape.layers = 4;
  shape.hidden = 1024;
  shape.heads = 16;
  shape.seq_len = 1024;
  shape.vocab = 32000;
  shape.max_positions = 1024;
  const Workload w = make_workload(transformer_model("toy", shape), builtin_device("a100"), "fp16", 16);
  const Strategy s = strategy(2, 2, 2, 4);
  const double h = 1024, V = 32000, S = 1024, a = 16, t = 2, b = 2;
  // Megatron layout: QKV and fc1 (weights + biases) and the two output weights are split over
  // t; output biases (2h) and both LayerNorms (4h) are replicated.
  const double block = (12 * h * h + 7 * h) / t + 6 * h;
  const double stage0_params = V * h / t + S * h + 2 * block;
  const double stage1_params = 2 * block + 2 * h + V * h / t;  // final LN + tied embedding copy
  // Korthikanti et al. 2022 Table 2: s b h (10 + 24/t + 5 a s / (h t)) bytes per layer and
  // microbatch; the embedding's dropout mask s b h (1 byte each); the head's norm input and
  // logits' input (2 bytes each) and fp32 logits s b V / t (Sec. 4.3).
  const double layer_act = S * b * h * (10 + 24 / t + 5 * a * S / (h * t));
  const double mask = S * b * h;
  const double stage0_act = 2 /*in flight*/ * (2 /*layers*/ * layer_act + mask);
  const double stage1_act = 1 * (2 * layer_act + b * (4 * S * h + 4 * S * V / t));
  const double reserve = 6.0 * 1024 * 1024 * 1024;  // the a100's allocator reserve
  const double stage0 = 16 * stage0_params + stage0_act + reserve;
  const double stage1 = 16 * stage1_params + stage1_act + reserve;
  const MemoryBreakdown m = memory_per_gpu(w, s);
  EXPECT_NEAR(m.total(), std::max(stage0, stage1), 1e-6 * m.total());
  EXPECT_EQ(m.stage, stage0 > stage1 ? 0u : 1u);
  const auto stages = partition_stages(w.model, 2);
  EXPECT_NEAR(stage_memory(w, s, stages, 0).total(), stage0, 1);
  EXPECT_NEAR(stage_memory(w, s, stages, 1).total(), stage1, 1);
  EXPECT_NEAR(stage_memory(w, s, stages, 0).activations, stage0_act, 1);
  // ZeRO-1 divides the 12 optimizer bytes by dp; GPipe keeps all 4 microbatches in flight.
  Strategy z = s;
  z.zero = 1;
  EXPECT_NEAR(stage_memory(w, z, stages, 0).total(), stage0 - 6 * stage0_params, 1);
  Strategy g = s;
  g.schedule = PipelineSchedule::GPipe;
  EXPECT_NEAR(stage_memory(w, g, stages, 0).activations, 4 * (2 * layer_act + mask), 1);
  // Sequence parallelism shards the whole block: s b h (34/t + 5 a s / (h t)) bytes per layer
  // (and the embedding's mask).
  Strategy sp = s;
  sp.sequence_parallel = true;
  const double layer_act_sp = S * b * h * (34 / t + 5 * a * S / (h * t));
  EXPECT_NEAR(stage_memory(w, sp, stages, 0).activations, 2 * (2 * layer_act_sp + mask / t), 1);
  // Selective recomputation keeps no s x s tensors: s b h (10 + 24/t), with SP s b h 34/t.
  Strategy sel = s;
  sel.recompute = Recompute::Selective;
  EXPECT_NEAR(stage_memory(w, sel, stages, 0).activations, 2 * (2 * S * b * h * (10 + 24 / t) + mask), 1);
  sel.sequence_parallel = true;
  EXPECT_NEAR(stage_memory(w, sel, stages, 0).activations, 2 * (2 * S * b * h * 34 / t + mask / t), 1);
  // Full recomputation keeps each layer's input (2 s b h bytes) plus one layer's full working set.
  Strategy r = s;
  r.recompute = Recompute::Full;
  EXPECT_NEAR(stage_memory(w, r, stages, 0).activations, 2 * (2 * (2 * S * b * h) + mask) + layer_act, 1);
  // Interleaved 1F1B with v = 2 chunks: the first device holds pp (1 + (pp - 1)/(pp v)) = 2.5
  // microbatches' worth of its layers (Korthikanti et al. Sec. 4.2.3), 1F1B's 2 x 1.25.
  Strategy il = s;
  il.schedule = PipelineSchedule::Interleaved;
  il.virtual_stages = 2;
  EXPECT_NEAR(stage_memory(w, il, stages, 0).activations, 2.5 * (2 * layer_act + mask), 1);
  EXPECT_NEAR(stage_memory(w, il, stages, 0).activations / stage_memory(w, s, stages, 0).activations,
              1 + (2.0 - 1) / (2 * 2), 1e-12);
}

TEST(Iteration, OptimizerStateDecidesWhetherCandleFitsDataParallel) {
  // 6.44B parameters, 256 samples per GPU, fp16. Adam: 2 + 2 + 12 bytes/param = 103 GB > 80 GiB.
  // Plain SGD keeps only the fp32 master copy: 2 + 2 + 4 bytes/param. Activations: each dense
  // layer keeps its input, 25 x 16384 elements per sample; plus the a100's 6 GiB reserve.
  const Model m = builtin_model("candle-uno");
  const double P = m.parameters(), act = 256 * 25 * 16384.0 * 2 + 6.0 * (1 << 30);
  const Workload adam = make_workload(m, builtin_device("a100"), "fp16", 8 * 256);
  const Workload sgd = make_workload(m, builtin_device("a100"), "fp16", 8 * 256, 0, "sgd");
  EXPECT_NEAR(memory_per_gpu(adam, data_parallel_strategy(8)).total(), 16 * P + act, 1);
  EXPECT_NEAR(memory_per_gpu(sgd, data_parallel_strategy(8)).total(), 8 * P + act, 1);
  EXPECT_FALSE(plan_iteration(adam, data_parallel_strategy(8)).feasible);
  EXPECT_TRUE(plan_iteration(sgd, data_parallel_strategy(8)).feasible);
  EXPECT_THROW(make_workload(m, builtin_device("a100"), "fp16", 8, 0, "adagrad"), BadInput);
}

TEST(Iteration, InfeasibleIsAResultNotAnError) {
  const auto plan = plan_iteration(workload("gpt3-175b", 8), strategy(8, 1, 1, 1));
  EXPECT_FALSE(plan.feasible);
  EXPECT_GT(plan.memory_per_gpu_bytes, 80e9);
  EXPECT_FALSE(plan.infeasible_reason.empty());
}

TEST(Iteration, EmbeddingTablesExchangeAllToAllAndStayOutOfTheAllReduce) {
  const Workload w = workload("dlrm", 16 * 128);
  const auto plan = plan_iteration(w, strategy(16, 1, 1, 1));
  // 64 tables on 16 ranks: each owner sends 4 pooled 128-vectors per sample for all 2048 samples.
  const double per_rank_send = 4 * 128 * 2048 * 2.0;
  int exchanges = 0;
  for (const auto& t : plan.graph.tasks)
    if (t.purpose == CommPurpose::Embedding) {
      ++exchanges;
      EXPECT_EQ(t.op, CollectiveOp::AllToAll);
      EXPECT_FALSE(t.is_mutable);
      EXPECT_DOUBLE_EQ(t.bytes, per_rank_send);
    }
  EXPECT_EQ(exchanges, 2);  // forward and backward
  EXPECT_DOUBLE_EQ(volume(plan.graph, CommPurpose::DataParallel, TaskKind::Collective),
                   2 * w.model.dense_parameters());
  // Uneven placement turns the exchange into point-to-point transfers from the owners.
  Strategy s = strategy(16, 1, 1, 1);
  s.table_owner.assign(64, 0);
  s.table_owner[63] = 5;
  const auto uneven = plan_iteration(w, s);
  double sent = 0;
  for (const auto& t : uneven.graph.tasks)
    if (t.purpose == CommPurpose::Embedding && t.phase == TaskPhase::Forward) {
      EXPECT_EQ(t.kind, TaskKind::Transfer);
      sent += t.bytes * uneven.graph.group_sets[t.group_set].groups.size();
    }
  EXPECT_DOUBLE_EQ(sent, 64 * 128 * 128 * 2.0 * 15);  // every table's vectors to the 15 other ranks
}

TEST(Iteration, PerLayerModelParallelism) {
  // CANDLE-Uno with every layer split over 4 of 8 GPUs: gradients are reduced among the 2 ranks
  // holding the same shard, a quarter of the parameters each; the segment gathers its input.
  const Workload w = workload("candle-uno", 8 * 256);
  Strategy s = strategy(8, 1, 1, 1);
  s.layer_degree.assign(w.model.layers.size(), 4);
  const auto plan = plan_iteration(w, s);
  EXPECT_DOUBLE_EQ(volume(plan.graph, CommPurpose::DataParallel, TaskKind::Collective),
                   2 * w.model.parameters() / 4);
  bool gathered = false;
  for (const auto& t : plan.graph.tasks) {
    if (t.purpose == CommPurpose::DataParallel) {
      EXPECT_EQ(plan.graph.group_sets[t.group_set].groups,
                (std::vector<std::vector<std::uint32_t>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
    }
    if (t.op == CollectiveOp::AllGather && t.purpose == CommPurpose::TensorParallel) {
      gathered = true;
      EXPECT_DOUBLE_EQ(t.bytes, 4 * 256 * 16384 * 2.0);
    }
  }
  EXPECT_TRUE(gathered);
  // Data dependence keeps the segment's order: gather the input, compute, return the output.
  ASSERT_GE(plan.graph.tasks.size(), 3u);
  EXPECT_EQ(plan.graph.tasks[0].op, CollectiveOp::AllGather);
  EXPECT_EQ(plan.graph.tasks[1].kind, TaskKind::Compute);
  EXPECT_EQ(plan.graph.tasks[2].op, CollectiveOp::AllToAll);
  EXPECT_EQ(plan.graph.tasks[2].kind, TaskKind::Collective);
  // A quarter of the parameters (16 bytes each with Adam); each layer keeps the inputs of the 4
  // ranks' gathered samples: 4 x 256 x 25 x 16384 fp16 elements; the a100's 6 GiB reserve.
  EXPECT_NEAR(plan.memory_per_gpu_bytes,
              16 * w.model.parameters() / 4 + 4 * 256 * 25 * 16384.0 * 2 + 6.0 * (1 << 30), 1);
  Strategy z = s;
  z.zero = 1;
  EXPECT_THROW(plan_iteration(w, z), BadInput);
  Strategy odd = s;
  odd.layer_degree[3] = 3;
  EXPECT_THROW(plan_iteration(w, odd), BadInput);
}

TEST(Iteration, GraphStaysSmallForGpt3OnAThousandGpus) {
  const Workload w = workload("gpt3-175b", 1536.0 / 1024 * 1024);
  Strategy s = strategy(8, 8, 16, 24);
  s.recompute = Recompute::Full;
  const auto plan = plan_iteration(w, s);
  // 2 compute + 4 TP tasks per (stage, microbatch) (the blocks' AllReduces and the scatter/gather
  // AllGather of the received boundary, each direction), 2 sends per boundary and microbatch, a
  // few buckets per stage.
  EXPECT_LT(plan.graph.tasks.size(), 6u * 16 * 24 + 2 * 15 * 24 + 16 * 40);
  EXPECT_TRUE(plan.feasible);
}

TEST(Iteration, InconsistentStrategiesAreBadInputNamingTheKey) {
  EXPECT_EQ(test::plan_error_where({"strategy.tp=3"}, 16), "key strategy.tp at --set");
  EXPECT_EQ(test::plan_error_where({"strategy.dp=3", "strategy.tp=2"}, 16), "key strategy.dp at --set");
  EXPECT_EQ(test::plan_error_where({"model.name=gpt3-1.3b", "strategy.tp=32"}, 32),
            "key strategy.tp at --set");
  EXPECT_EQ(test::plan_error_where({"model.name=bert-base", "strategy.tp=8"}, 16),
            "key strategy.tp at --set");  // 12 heads
  EXPECT_EQ(test::plan_error_where({"model.name=bert-base", "strategy.pp=16"}, 16),
            "key strategy.pp at --set");
  EXPECT_EQ(test::plan_error_where({"model.global_batch=24", "strategy.microbatches=5"}, 8),
            "key strategy.microbatches at --set");
  EXPECT_EQ(test::plan_error_where({"model.name=resnet50", "strategy.tp=2"}, 8), "key strategy.tp at --set");
  EXPECT_EQ(test::plan_error_where({"strategy.schedule=zigzag"}, 8), "key strategy.schedule at --set");
  EXPECT_EQ(test::plan_error_where({"model.name=resnet50", "strategy.layer_degrees=1,2"}, 8),
            "key strategy.layer_degrees at --set");
  EXPECT_EQ(test::plan_error_where({"model.name=resnet50"}, 8), "no error");
}

TEST(Iteration, FromConfigUsesDefaultsAndDerivesDp) {
  const auto plan = plan_iteration_from_config(
      test::workload_config({"model.name=gpt3-1.3b", "strategy.tp=2", "strategy.pp=2",
                             "strategy.microbatch_size=1", "model.batch_per_gpu=2"}),
      16);
  EXPECT_EQ(plan.dp, 4u);
  EXPECT_DOUBLE_EQ(plan.global_batch, 32);
  EXPECT_EQ(plan.microbatches, 8u);  // 32 / 4 replicas / 1 per microbatch
  EXPECT_EQ(plan.graph.gpus, 16u);
}

}  // namespace
}  // namespace toposweep
