// Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434, Sec. 2.1; DeepSeek-V3,
// arXiv:2412.19437, Sec. 2.1.1) in place of the block's attention, described by its GEMMs
// (parameters and FLOPs) and its attention core. With H heads, query latent r_q, key/value
// latent r_kv, per-head no-rope / rope query-key dimensions d_n / d_r and value dimension d_v:
//   q_down   h -> r_q (+ its RMSNorm's r_q scale),       replicated over TP ranks;
//   kv_down  h -> r_kv + d_r (+ the r_kv norm's scale),   replicated (d_r: the shared rope key);
//   q_up     r_q -> H (d_n + d_r),   column-parallel;
//   kv_up    r_kv -> H (d_n + d_v),  column-parallel;
//   rope     on the rope part of Q (H d_r) and the shared key (d_r);
//   scores   H products s x (d_n + d_r) x s; softmax, dropout as block_attention.cpp;
//   context  H products s x s x d_v;
//   out      H d_v -> h, row-parallel.
// The two latent norms' kernels (s x r elements, under a third of the block norms' s x h) are
// not timed; their scales are counted with the down projections' parameters. Kept for backward:
// the down projections' input (s h), the latents (s r_q, s r_kv), Q and K (2 s H (d_n + d_r)), V
// (s H d_v), the s x s tensors as block_attention.cpp, the output projection's input (s H d_v).
#include "toposweep/workload/block.hpp"

namespace toposweep {

void describe_mla(const TransformerShape& t, std::vector<BlockOp>& ops) {
  const MlaShape& m = *t.mla;
  const double s = t.seq_len, h = t.hidden, H = t.heads;
  const double rq = m.q_lora_rank, rkv = m.kv_lora_rank, dn = m.qk_nope_head_dim, dr = m.qk_rope_head_dim,
               dv = m.v_head_dim;

  BlockOp q_down{.name = "q_down", .kind = OpKind::Gemm, .role = OpRole::Projection};
  q_down.M = s;
  q_down.N = rq;
  q_down.K = h;
  q_down.axis = ParallelAxis::Sequence;
  q_down.kept_replicated = s * h;                    // its input (kv_down's too)
  q_down.kept_module = RecomputeModules::Layernorm;  // the attention norm's output
  q_down.params_replicated = h * rq + rq;
  ops.push_back(q_down);

  BlockOp kv_down{.name = "kv_down", .kind = OpKind::Gemm, .role = OpRole::Projection};
  kv_down.M = s;
  kv_down.N = rkv + dr;
  kv_down.K = h;
  kv_down.axis = ParallelAxis::Sequence;
  kv_down.params_replicated = h * kv_down.N + rkv;
  ops.push_back(kv_down);

  describe_sublayer_enter("attention_enter", t, ops);

  BlockOp q_up{.name = "q_up", .kind = OpKind::Gemm, .role = OpRole::Projection};
  q_up.M = s;
  q_up.N = H * (dn + dr);
  q_up.K = rq;
  q_up.axis = ParallelAxis::Tensor;
  q_up.column = true;
  q_up.kept_replicated = s * rq;  // the query latent
  // Megatron-Core's mla_up_proj recompute module (DeepSeek-V3, arXiv:2412.19437 Sec. 3.2.3:
  // "Recomputation of ... MLA Up-Projection"): the up projections and RoPE run again in the
  // backward pass from the kept latents; Q, K and V are dropped.
  q_up.module = RecomputeModules::MlaUpProj;
  // The latent norm runs inside the up projection's module (Megatron-Core's MLA spec with
  // qk_layernorm: TELayerNormColumnParallelLinear), which takes the amax current scaling needs.
  q_up.norm_fused_input = true;
  q_up.params_sharded = rq * q_up.N;
  ops.push_back(q_up);

  BlockOp kv_up{.name = "kv_up", .kind = OpKind::Gemm, .role = OpRole::Projection};
  kv_up.M = s;
  kv_up.N = H * (dn + dv);
  kv_up.K = rkv;
  kv_up.axis = ParallelAxis::Tensor;
  kv_up.column = true;
  kv_up.kept_replicated = s * rkv;  // the key/value latent
  kv_up.module = RecomputeModules::MlaUpProj;
  kv_up.norm_fused_input = true;  // as q_up
  kv_up.params_sharded = rkv * kv_up.N;
  ops.push_back(kv_up);

  if (t.position == PositionKind::Rotary) {
    BlockOp rope{.name = "rope", .kind = OpKind::MemoryBound, .role = OpRole::Rotary};
    rope.M = s;
    rope.N = H * dr + dr;
    rope.axis = ParallelAxis::Tensor;
    rope.forward = {2, 0};
    rope.backward = {2, 0};
    rope.module = RecomputeModules::MlaUpProj;
    ops.push_back(rope);
  }

  BlockOp scores{.name = "scores", .kind = OpKind::AttentionCore, .role = OpRole::Scores};
  scores.M = s;
  scores.N = s;
  scores.K = dn + dr;
  scores.batch = H;
  scores.axis = ParallelAxis::Tensor;
  // Backward: dQ = dS K and dK = dS^T Q have the scores' shape (d_n + d_r deep), dP = dO V^T and
  // dV = P^T dO the context's (d_v): two each (block_attention.cpp's 1 + 3 holds only when the
  // two shapes are equal).
  scores.backward_gemms = 2;
  scores.kept_sharded = 2 * s * H * (dn + dr);  // Q and K
  scores.module = RecomputeModules::CoreAttn;
  scores.kept_module = RecomputeModules::MlaUpProj;
  ops.push_back(scores);

  describe_score_softmax(t, H, ops);

  BlockOp context{.name = "context", .kind = OpKind::AttentionCore, .role = OpRole::Context};
  context.M = s;
  context.N = dv;
  context.K = s;
  context.batch = H;
  context.axis = ParallelAxis::Tensor;
  context.backward_gemms = 2;
  context.kept_sharded = s * H * dv;  // V
  context.module = RecomputeModules::CoreAttn;
  context.kept_module = RecomputeModules::MlaUpProj;
  ops.push_back(context);

  BlockOp permute{.name = "context_permute", .kind = OpKind::MemoryBound, .role = OpRole::ContextPermute};
  permute.M = s;
  permute.N = H * dv;
  permute.axis = ParallelAxis::Tensor;
  permute.forward = {2, 0};
  permute.backward = {2, 0};
  ops.push_back(permute);

  BlockOp out{.name = "attention_out", .kind = OpKind::Gemm, .role = OpRole::Projection};
  out.M = s;
  out.N = h;
  out.K = H * dv;
  out.axis = ParallelAxis::Tensor;
  out.kept_sharded = s * H * dv;
  out.params_sharded = H * dv * h;
  ops.push_back(out);

  describe_sublayer_exit("attention_exit", "attention_residual", t, ops);
}

}  // namespace toposweep
