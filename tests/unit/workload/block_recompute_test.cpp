// Block recomputation (strategy.recompute_layers, Megatron-Core's --recompute-method block
// --recompute-num-layers N): the first N transformer blocks of each pipeline chunk recompute their
// forward, the others run as without recomputation. Checked by counting blocks by hand: the
// backward of a chunk is N blocks as under full recomputation plus the rest as under none; the
// recomputed FLOPs, activations and expert All-to-Alls scale with the blocks recomputed; N = 0 or
// N >= a chunk's blocks is full recomputation, bit for bit.
#include "toposweep/workload/block_recompute.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "toposweep/workload/compute_bound.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/memory.hpp"
#include "toposweep/workload/model_library.hpp"
#include "workload_test_helpers.hpp"

namespace toposweep {
namespace {

// A small Llama-style model of `layers` identical blocks.
Workload small_llama(int layers, double global_batch) {
  const nlohmann::json t = {{"layers", layers},     {"hidden", 256},     {"heads", 4},
                            {"kv_heads", 2},        {"ffn_hidden", 768}, {"seq_len", 512},
                            {"vocab", 1000},        {"mlp", "swiglu"},   {"norm", "rmsnorm"},
                            {"position", "rotary"}, {"biases", false},   {"tied_embeddings", false}};
  return make_workload(model_from_json({{"name", "small"}, {"transformer", t}}, "small"),
                       builtin_device("h100"), "bf16", global_batch);
}

Strategy full(std::uint32_t layers) {
  Strategy s;
  s.recompute = Recompute::Full;
  s.recompute_layers = layers;
  return s;
}

const Layer& first_block(const Model& m) {
  for (const Layer& l : m.layers)
    if (l.kind == LayerKind::TransformerBlock) return l;
  throw std::logic_error("no block");
}

TEST(BlockRecompute, TheFirstBlocksRecomputeAndTheRestRunWithout) {
  const Workload w = small_llama(4, 1);
  Strategy none;
  const Strategy all = full(0);
  const LayerCost block_full = transformer_costs(layer_cost_key(w, all)).block;
  const LayerCost block_none = transformer_costs(layer_cost_key(w, none)).block;
  // The recomputed forward makes a block's backward longer.
  ASSERT_GT(block_full.backward.compute_s, block_none.backward.compute_s * 1.2);
  const ChunkTimes t_none = chunk_compute_times(w, none, nullptr);
  const ChunkTimes t_all = chunk_compute_times(w, all, nullptr);
  for (std::uint32_t n = 1; n <= 3; ++n) {
    const ChunkTimes t = chunk_compute_times(w, full(n), nullptr);
    EXPECT_DOUBLE_EQ(t.forward[0], t_none.forward[0]);
    // n blocks as under full recomputation, 4 - n as under none (and the embedding and head alike).
    EXPECT_NEAR(t.backward[0],
                t_none.backward[0] + n * (block_full.backward.compute_s - block_none.backward.compute_s),
                1e-12 * t.backward[0])
        << n;
    // The iteration's compute (one microbatch, no pipeline) is the same sum.
    const IterationPlan plan = plan_iteration(w, full(n));
    EXPECT_NEAR(test::makespan_without_comm(plan.graph), t.forward[0] + t.backward[0], 1e-9 * t.backward[0]);
  }
  // 0, and any count from the chunk's 4 blocks up, is full recomputation, bit for bit.
  for (std::uint32_t n : {0u, 4u, 5u, 100u}) {
    EXPECT_EQ(chunk_compute_times(w, full(n), nullptr).backward[0], t_all.backward[0]) << n;
    EXPECT_EQ(plan_iteration(w, full(n)).total_flops, plan_iteration(w, all).total_flops) << n;
    EXPECT_EQ(memory_per_gpu(w, full(n)).total(), memory_per_gpu(w, all).total()) << n;
  }
  // Without full recomputation the count does nothing.
  Strategy none_with_count = none;
  none_with_count.recompute_layers = 2;
  EXPECT_EQ(plan_iteration(w, none_with_count).total_flops, plan_iteration(w, none).total_flops);
}

// pp 2 with 2 chunks each (interleaved): 8 blocks, 2 a chunk. One recomputed block a chunk
// recomputes half the blocks: half of full recomputation's extra FLOPs.
TEST(BlockRecompute, CountsTheBlocksOfEachChunk) {
  const Workload w = small_llama(8, 4);
  const auto plan = [&](Recompute r, std::uint32_t layers) {
    Strategy s = full(layers);
    s.recompute = r;
    s.dp = 1;
    s.pp = 2;
    s.microbatches = 4;
    s.schedule = PipelineSchedule::Interleaved;
    s.virtual_stages = 2;
    return plan_iteration(w, s);
  };
  const double none = plan(Recompute::None, 0).total_flops;
  const double all = plan(Recompute::Full, 0).total_flops;
  // The extra work of full recomputation: 8 blocks' forward, 4 samples.
  EXPECT_NEAR(all - none, 8 * 4 * first_block(w.model).forward_flops, 1e-9 * all);
  EXPECT_NEAR(plan(Recompute::Full, 1).total_flops - none, (all - none) / 2, 1e-9 * all);
  EXPECT_EQ(plan(Recompute::Full, 2).total_flops, all);  // a chunk's 2 blocks: all of them
}

// One stage of 4 blocks, one microbatch in flight: the skipped blocks keep everything.
TEST(BlockRecompute, SkippedBlocksKeepTheirActivations) {
  const Workload w = small_llama(4, 1);
  const LayerActivations a = layer_activations(w, first_block(w.model), ActivationSplit{});
  ASSERT_GT(a.none, 5 * a.full);
  const double all = memory_per_gpu(w, full(0)).activations;
  for (std::uint32_t n = 1; n <= 3; ++n)
    EXPECT_NEAR(memory_per_gpu(w, full(n)).activations, all + (4 - n) * (a.none - a.full), 1e-9 * all) << n;
}

// pp 2 with 2 chunks each: a stage's 4 blocks are 2 chunks of 2, and one recomputed block a chunk
// leaves 2 of the 4 keeping everything, for each microbatch in flight (1 sample each).
TEST(BlockRecompute, SkippedBlocksOfEveryChunkKeepTheirActivations) {
  const Workload w = small_llama(8, 4);
  const LayerActivations a = layer_activations(w, first_block(w.model), ActivationSplit{});
  const auto interleaved = [](std::uint32_t layers) {
    Strategy s = full(layers);
    s.pp = 2;
    s.microbatches = 4;
    s.schedule = PipelineSchedule::Interleaved;
    s.virtual_stages = 2;
    return s;
  };
  const auto stages = partition_stages(w.model, 2);
  for (std::uint32_t p = 0; p < 2; ++p) {
    const double all = stage_memory(w, interleaved(0), stages, p).activations;
    const double one = stage_memory(w, interleaved(1), stages, p).activations;
    EXPECT_NEAR(one - all, microbatches_in_flight(interleaved(1), p) * 2 * (a.none - a.full), 1e-9 * all)
        << p;
  }
}

// Mixtral 8x7B, pp 2 (16 MoE blocks a stage), ep 4: each block's dispatch and combine run twice
// forward-and-backward (2 + 2), a recomputed one's again in its backward (+ 2).
TEST(BlockRecompute, OnlyRecomputedBlocksDispatchAgain) {
  const Workload w = make_workload(builtin_model("mixtral-8x7b"), builtin_device("h100"), "bf16", 64);
  for (std::uint32_t n : {0u, 4u, 16u}) {
    Strategy s = full(n);
    s.dp = 8;
    s.tp = 2;
    s.pp = 2;
    s.ep = 4;
    s.microbatches = 8;
    s.sequence_parallel = true;
    double count = 0;
    for (const Task& t : plan_iteration(w, s).graph.tasks)
      if (t.purpose == CommPurpose::ExpertParallel) count += t.repeat;
    const double recomputed = n == 0 ? 16 : n;
    // 2 stages x 8 microbatches x (16 blocks x 4 + recomputed x 2), per rank group set.
    EXPECT_DOUBLE_EQ(count, 2 * 8 * (16 * 4 + recomputed * 2)) << n;
  }
}

TEST(BlockRecompute, NeedsATransformer) {
  const Workload w = make_workload(test::uniform_chain(4), builtin_device("h100"), "bf16", 1);
  EXPECT_EQ(test::strategy_error_key(w, full(2)), "key strategy.recompute_layers");
  EXPECT_EQ(test::strategy_error_key(w, full(0)), "no error");
}

}  // namespace
}  // namespace toposweep
