// The block's MLP: FFN in (column-parallel), activation, FFN out (row-parallel), bias + dropout +
// residual. GeLU and SwiGLU differ only in data here: SwiGLU's first GEMM has two halves (gate
// and up, 2 f columns), its activation reads both (3 e bytes per output element forward, 5 e
// backward against GeLU's 2 e and 4 e) and keeps both.
#include "toposweep/workload/block.hpp"

namespace toposweep {

namespace {

// What distinguishes the MLP variants.
struct MlpVariant {
  double first_halves;        // output blocks of f columns of the first GEMM
  Traffic forward, backward;  // activation kernel, per f-wide element
  std::string_view activation;
};

MlpVariant variant(const TransformerShape& t) {
  if (t.gated_mlp) return {2, {3, 0}, {5, 0}, "swiglu"};
  return {1, {2, 0}, {4, 0}, "gelu"};
}

}  // namespace

void describe_mlp(const TransformerShape& t, std::vector<BlockOp>& ops) {
  const double s = t.seq_len, h = t.hidden;
  const double f = t.ffn_hidden > 0 ? t.ffn_hidden : 4 * h;
  const MlpVariant v = variant(t);
  const bool bias = t.biases;

  // Megatron-Core's mlp recompute module checkpoints the whole MLP (its TP collectives
  // included): only its input is kept, and its forward runs again in the backward pass.
  describe_sublayer_enter("mlp_enter", t, ops);
  ops.back().module = RecomputeModules::Mlp;

  BlockOp in{.name = "ffn_in", .kind = OpKind::Gemm, .role = OpRole::Projection};
  in.M = s;
  in.N = v.first_halves * f;
  in.K = h;
  in.axis = ParallelAxis::Tensor;
  in.column = true;
  in.kept_replicated = s * h;  // its input
  in.module = RecomputeModules::Mlp;
  in.kept_module = RecomputeModules::Layernorm;  // the MLP norm's output
  in.norm_fused_input = true;                    // TELayerNormColumnParallelLinear
  in.params_sharded = h * in.N + (bias ? in.N : 0);
  ops.push_back(in);

  BlockOp act{.name = v.activation, .kind = OpKind::MemoryBound, .role = OpRole::Activation};
  act.M = s;
  act.N = f;
  act.axis = ParallelAxis::Tensor;
  act.forward = v.forward;
  act.backward = v.backward;
  act.kept_sharded = v.first_halves * s * f;  // its input (both halves for SwiGLU)
  act.module = act.kept_module = RecomputeModules::Mlp;
  ops.push_back(act);

  BlockOp out{.name = "ffn_out", .kind = OpKind::Gemm, .role = OpRole::Projection};
  out.M = s;
  out.N = h;
  out.K = f;
  out.axis = ParallelAxis::Tensor;
  out.kept_sharded = s * f;  // its input
  out.module = out.kept_module = RecomputeModules::Mlp;
  out.params_sharded = f * h;
  out.params_replicated = bias ? h : 0;
  ops.push_back(out);

  describe_sublayer_exit("mlp_exit", "mlp_residual", t, ops);
  ops[ops.size() - 2].module = RecomputeModules::Mlp;  // the exit collective, not the residual add
}

}  // namespace toposweep
