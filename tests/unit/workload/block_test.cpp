// The block's operator table against published closed forms worked out by hand: Narayanan et
// al. 2021's FLOP count, Korthikanti et al. 2022's Table 2 of activation bytes, Llama-2-70B's
// parameter count, SwiGLU's three FFN matrices; and the invariants tying the table's readers
// (stage aggregates, the tied embedding copy, the kv_heads check) together.
#include "toposweep/workload/block.hpp"

#include <gtest/gtest.h>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/enumerate.hpp"
#include "toposweep/workload/layer_cost.hpp"
#include "toposweep/workload/memory.hpp"
#include "toposweep/workload/model_library.hpp"
#include "workload_test_helpers.hpp"

namespace toposweep {
namespace {

// GPT-3 175B's shape with a vocabulary of 51,200 (Narayanan et al. 2021, Table 1).
TransformerShape gpt_shape() {
  TransformerShape t;
  t.layers = 96;
  t.hidden = 12288;
  t.heads = 96;
  t.seq_len = 2048;
  t.vocab = 51200;
  return t;
}

double table_flops(const std::vector<BlockOp>& ops) {
  double f = 0;
  for (const BlockOp& op : ops) f += op.flops();
  return f;
}

TEST(Block, ForwardFlopsAreNarayanansPerLayerTerm) {
  // 24 s h^2 (1 + s / 6h) = 24 x 2048 x 12288^2 + 4 x 2048^2 x 12288.
  EXPECT_EQ(table_flops(describe_block(gpt_shape())), 7627861917696.0);
}

TEST(Block, IterationFlopsWithFullRecomputeAreNarayanansClosedForm) {
  // Narayanan et al. 2021 eq. (3) per sequence: 96 s L h^2 (1 + s/6h + V/16Lh): every block
  // forward twice (recomputation) and backward (2x forward), the logits forward and backward.
  const TransformerShape t = gpt_shape();
  const Model m = transformer_model("gpt", t);
  const double recomputed = t.layers * m.layers[1].forward_flops;
  // 96 x 2048 x 96 x 12288^2 + 16 x 2048^2 x 96 x 12288 + 6 x 2048 x 12288 x 51200
  EXPECT_EQ(m.forward_flops_per_sample() + m.backward_flops_per_sample() + recomputed, 2936829917528064.0);
}

TEST(Block, SwigluMlpIsThreeMatricesPerToken) {
  TransformerShape t;
  t.hidden = 8192;
  t.heads = 64;
  t.kv_heads = 8;
  t.ffn_hidden = 28672;
  t.seq_len = 4096;
  t.gated_mlp = true;
  double mlp = 0;
  for (const BlockOp& op : describe_block(t))
    if (op.name == "ffn_in" || op.name == "ffn_out") mlp += op.flops();
  // 3 x 2 x h x ffn per token.
  EXPECT_EQ(mlp / t.seq_len, 3.0 * 2 * 8192 * 28672);
  t.gated_mlp = false;
  double gelu = 0;
  for (const BlockOp& op : describe_block(t))
    if (op.name == "ffn_in" || op.name == "ffn_out") gelu += op.flops();
  EXPECT_EQ(gelu / t.seq_len, 2.0 * 2 * 8192 * 28672);
}

TEST(Block, Llama70bHasLlama2sParameterCount) {
  // Per layer: Q and O 8192^2 each, K and V 8192 x 1024 each (8 KV heads of 128), SwiGLU
  // 3 x 8192 x 28672, two RMS norms 8192: 855,654,400; x 80, plus untied input and output
  // embeddings 2 x 32000 x 8192 and the final norm: 68,976,648,192 (Llama-2-70b's published
  // count; the "70B" of its name rounds it up).
  EXPECT_EQ(builtin_model("llama-70b").parameters(), 68976648192.0);
}

// Korthikanti et al. 2022 Table 2, bytes per layer for one sequence (b = 1) at 2 bytes per
// element, GPT-3 175B (s = 2048, h = 12288, a = 96, so 5as/h = 80), t = 8.
TEST(Block, ActivationsPerRecomputeModeAreKorthikantisTable2) {
  const Model m = transformer_model("gpt", gpt_shape());
  Workload w = make_workload(m, builtin_device("a100"), "fp16", 8);
  w.fused_attention = false;
  const Layer& block = m.layers[1];
  const double sh = 2048.0 * 12288;
  const LayerActivations none = layer_activations(w, block, ActivationSplit{1, 1});
  EXPECT_EQ(none.none, sh * 114);  // sbh (34 + 5as/h)
  EXPECT_EQ(none.full, sh * 2);    // the layer input, 2 sbh
  const LayerActivations tp = layer_activations(w, block, ActivationSplit{8, 1});
  EXPECT_EQ(tp.none, sh * 23);       // sbh (10 + 24/t + 5as/(ht))
  EXPECT_EQ(tp.selective, sh * 13);  // sbh (10 + 24/t)
  EXPECT_EQ(tp.full, sh * 2);
  const LayerActivations sp = layer_activations(w, block, ActivationSplit{8, 8});
  EXPECT_EQ(sp.none, sh * 114 / 8);      // sbh/t (34 + 5as/h)
  EXPECT_EQ(sp.selective, sh * 34 / 8);  // 34 sbh / t
  EXPECT_EQ(sp.full, sh * 2 / 8);
}

TEST(Block, HeadKeepsKorthikantisLogitTerm) {
  // Sec. 4.3 with sequence parallelism: 4 sbh/t (1 + v/h) bytes = 4 s (h + v) / t.
  const TransformerShape t = gpt_shape();
  EXPECT_EQ(head_kept_bytes(t, 2, ActivationSplit{8, 8}), 4 * 2048.0 * (12288 + 51200) / 8);
  EXPECT_EQ(embedding_kept_bytes(t, ActivationSplit{8, 8}), 2048.0 * 12288 / 8);  // 1-byte dropout mask
}

TEST(Block, SelectiveRecomputationRecomputesTheTablesAttentionCore) {
  const Model m = transformer_model("gpt", gpt_shape());
  Workload w = make_workload(m, builtin_device("a100"), "fp16", 8);
  w.fused_attention = false;
  Strategy s;
  s.recompute = Recompute::Selective;
  double core = 0;
  for (const BlockOp& op : describe_block(*m.transformer))
    if (op.kind == OpKind::AttentionCore) core += op.flops();
  EXPECT_EQ(recomputed_forward_flops(w, s, m.layers[1]), core);
  EXPECT_EQ(core, 4 * 2048.0 * 2048 * 12288);  // 4 s^2 h
}

TEST(Block, SelectiveRecomputationDropsExactlyTheScoreTensors) {
  const TransformerShape t = gpt_shape();
  double dropped = 0;
  for (const BlockOp& op : describe_block(t))
    if (op.recompute == RecomputeClass::DroppedUnderSelective) {
      EXPECT_EQ(op.axis, ParallelAxis::Tensor) << op.name;
      EXPECT_EQ(op.batch, t.heads) << op.name;  // per-head s x s tensors
      dropped += op.kept_sharded;
    }
  EXPECT_EQ(dropped, 2.5 * 96 * 2048.0 * 2048);  // 5 a s^2 bytes at 2 bytes per element
  EXPECT_EQ(block_totals(describe_block(t)).kept_scores, dropped);
}

TEST(Block, TiedEmbeddingCopyOnlyOnTheLastOfSeveralStages) {
  const Model gpt = builtin_model("gpt3-1.3b");  // tied
  EXPECT_EQ(tied_embedding_copy(gpt, 2, 1), 0.0);
  EXPECT_EQ(tied_embedding_copy(gpt, 2, 4), 50257.0 * 2048 / 2);
  EXPECT_EQ(tied_embedding_copy(builtin_model("llama-70b"), 8, 4), 0.0);  // untied
}

TEST(Block, StageAggregatesAddUpToTheModelPlusTheTiedCopy) {
  const Model m = builtin_model("gpt3-1.3b");
  Workload w = make_workload(m, builtin_device("a100"), "fp16", 8);
  const std::uint32_t tp = 2, pp = 4;
  const auto whole = stage_aggregate(w, partition_stages(m, 1)[0], ActivationSplit{tp, 1}, 1, true);
  const auto ranges = partition_stages(m, pp);
  double params = 0, selective = 0;
  for (std::uint32_t p = 0; p < pp; ++p) {
    const StageAggregate a = stage_aggregate(w, ranges[p], ActivationSplit{tp, 1}, pp, p + 1 == pp);
    params += a.params;
    selective += a.act.selective;
    // stage_memory reads the same aggregate: fp16 weights at 2 bytes per parameter.
    Strategy s;
    s.tp = tp;
    s.pp = pp;
    s.dp = 1;
    s.recompute = Recompute::Selective;
    EXPECT_EQ(stage_memory(w, s, ranges, p).weights, a.params * 2);
  }
  EXPECT_NEAR(params, whole.params + 50257.0 * 2048 / tp, 1e-6 * params);
  EXPECT_NEAR(selective, whole.act.selective, 1e-9 * selective);
}

TEST(Block, TpMustDivideTheKvHeads) {
  const Model llama = builtin_model("llama-70b");  // 64 heads, 8 KV heads
  EXPECT_NO_THROW(check_tp_against_kv_heads(llama, 8));
  EXPECT_THROW(check_tp_against_kv_heads(llama, 16), InvalidDesign);
  EXPECT_NO_THROW(check_tp_against_kv_heads(builtin_model("gpt3-175b"), 32));  // 96 KV heads
  EXPECT_FALSE(tp_divides_kv_heads(llama, 16));
  EXPECT_TRUE(tp_divides_kv_heads(builtin_model("resnet50"), 16));  // no transformer shape
}

TEST(Block, ValidationAndEnumerationRejectTpNotDividingKvHeads) {
  const Workload w = make_workload(builtin_model("llama-70b"), builtin_device("h100"), "bf16", 64);
  Strategy s;
  s.tp = 16;
  s.pp = 4;
  s.dp = 1;
  s.microbatches = 64;
  EXPECT_THROW(validate_strategy(s, w, 64), InvalidDesign);
  s.tp = 8;
  s.pp = 8;
  EXPECT_NO_THROW(validate_strategy(s, w, 64));
  bool saw_tp8 = false;
  for_each_strategy(w, 64, StrategySpace{}, [&](const Strategy& c, double, bool) {
    EXPECT_EQ(8u % c.tp, 0u);
    saw_tp8 = saw_tp8 || c.tp == 8;
  });
  EXPECT_TRUE(saw_tp8);
}

// On an idealised device (every tile full, memory free, no floor) a SwiGLU block with grouped
// KV heads takes its FLOPs at the sustained rate: the table's tensor-split GEMM shapes on one
// rank add up to the layer's FLOPs over t.
TEST(Block, IdealDeviceTimesASwigluGqaBlockAtItsFlops) {
  Model m = builtin_model("llama-70b");
  Workload w = make_workload(m, builtin_device("a100"), "fp16", 8);
  Strategy s;
  s.tp = 8;
  s.dp = 1;
  s.microbatches = 4;  // 2 sequences per microbatch
  const LayerCostKey key = test::idealised(layer_cost_key(w, s));
  const double rate = key.device.peak_flops * key.device.gemm_efficiency;
  const TransformerCosts c = transformer_costs(key);
  EXPECT_NEAR(c.block.forward.compute_s, 2 * m.layers[1].forward_flops / 8 / rate, 1e-12);
  EXPECT_NEAR(c.block.backward.compute_s, 2 * m.layers[1].backward_flops / 8 / rate, 1e-12);
}

}  // namespace
}  // namespace toposweep
