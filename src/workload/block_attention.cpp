// The block's attention part as Megatron-LM runs it: QKV projection (column-parallel), rotary
// embeddings on Q and K (block_rope.cpp, rotary models only), scores QK^T, scale-mask-softmax,
// dropout, scores x V, the heads back to tokens, output projection (row-parallel), bias +
// dropout + residual. Kept bytes follow Korthikanti et al. 2022 Sec. 4.1 (2 bytes per element):
// the QKV input 2sbh, Q and K 4sbh, softmax output 2as^2b, dropout mask as^2b, dropout output
// 2as^2b, V 2sbh, the output projection's input 2sbh (and the residual's mask sbh,
// block_sublayer.cpp): 11sbh + 5as^2b, of which the s x s tensors (softmax output, dropout mask
// and output) are what selective recomputation drops. With grouped-query attention (kv_heads <
// heads) K and V have kv_dim = (h / heads) kv_heads columns, not h: Q 2sbh, K and V 2sb kv_dim
// each, so 7sbh + 4sb kv_dim + 5as^2b (docs/models.md, "The block table"). With a head_dim that
// is not h / heads (Qwen3) the queries, the context and the output projection's input are
// q_dim = heads x head_dim wide instead of h.
#include "toposweep/workload/block.hpp"

namespace toposweep {

void describe_attention(const TransformerShape& t, std::vector<BlockOp>& ops) {
  const double s = t.seq_len, h = t.hidden, a = t.heads;
  const double d = head_width(t), q = a * d;
  // K and V have kv_heads heads (grouped-query attention): fewer QKV weights, and fewer K and V
  // columns kept for the backward pass.
  const double kv = d * (t.kv_heads > 0 ? t.kv_heads : t.heads);
  const bool bias = t.biases;

  describe_sublayer_enter("attention_enter", t, ops);

  BlockOp qkv{.name = "qkv", .kind = OpKind::Gemm, .role = OpRole::Projection};
  qkv.M = s;
  qkv.N = q + 2 * kv;
  qkv.K = h;
  qkv.axis = ParallelAxis::Tensor;
  qkv.column = true;
  qkv.kept_replicated = s * h;                    // its input
  qkv.kept_module = RecomputeModules::Layernorm;  // the attention norm's output
  qkv.norm_fused_input = true;                    // TELayerNormColumnParallelLinear
  qkv.params_sharded = h * qkv.N + (bias ? qkv.N : 0);
  ops.push_back(qkv);

  describe_rope(t, ops);

  BlockOp scores{.name = "scores", .kind = OpKind::AttentionCore, .role = OpRole::Scores};
  scores.M = s;
  scores.N = s;
  scores.K = d;
  scores.batch = a;
  scores.axis = ParallelAxis::Tensor;
  scores.backward_gemms = 1;
  scores.kept_sharded = s * q + s * kv;  // Q and K
  scores.module = RecomputeModules::CoreAttn;
  ops.push_back(scores);

  describe_score_softmax(t, a, ops);

  BlockOp context{.name = "context", .kind = OpKind::AttentionCore, .role = OpRole::Context};
  context.M = s;
  context.N = d;
  context.K = s;
  context.batch = a;
  context.axis = ParallelAxis::Tensor;
  context.backward_gemms = 3;     // with the scores' second, the four backward batched GEMMs
  context.kept_sharded = s * kv;  // V
  context.module = RecomputeModules::CoreAttn;
  ops.push_back(context);

  BlockOp permute{.name = "context_permute", .kind = OpKind::MemoryBound, .role = OpRole::ContextPermute};
  permute.M = s;
  permute.N = q;
  permute.axis = ParallelAxis::Tensor;
  permute.forward = {2, 0};
  permute.backward = {2, 0};
  ops.push_back(permute);

  BlockOp proj{.name = "attention_out", .kind = OpKind::Gemm, .role = OpRole::Projection};
  proj.M = s;
  proj.N = h;
  proj.K = q;
  proj.axis = ParallelAxis::Tensor;
  proj.kept_sharded = s * q;  // its input
  proj.params_sharded = q * h;
  proj.params_replicated = bias ? h : 0;  // row-parallel bias, added after the reduction
  ops.push_back(proj);

  describe_sublayer_exit("attention_exit", "attention_residual", t, ops);
}

double kv_elements(const TransformerShape& t) {
  const double d = head_width(t);
  return 2.0 * t.seq_len * d * (t.kv_heads > 0 ? t.kv_heads : t.heads);
}

}  // namespace toposweep
