// The block's two norms (pre-attention and pre-MLP): each keeps its input for the backward pass
// and runs on the sequence axis (every TP rank normalises all tokens unless sequence parallel).
// LayerNorm and RMSNorm differ only in their parameters (RMSNorm: a scale, no shift); their
// kernels move the same bytes.
#include "toposweep/workload/block.hpp"

namespace toposweep {

namespace {

BlockOp norm(std::string_view name, const TransformerShape& t) {
  const double s = t.seq_len, h = t.hidden;
  BlockOp op;
  op.name = name;
  op.kind = OpKind::MemoryBound;
  op.role = OpRole::Norm;
  op.M = s;
  op.N = h;
  op.axis = ParallelAxis::Sequence;
  op.forward = {2, 0};   // read, write
  op.backward = {3, 0};  // read input and gradient, write gradient
  op.kept_replicated = s * h;
  op.params_replicated = norm_parameters(t);
  // Megatron-Core's `layernorm` recompute module reruns both norms; their outputs (the next
  // GEMM's kept input) are dropped, their inputs (the residual stream) still kept.
  op.module = RecomputeModules::Layernorm;
  return op;
}

}  // namespace

double norm_parameters(const TransformerShape& t) {
  const double h = t.hidden;
  if (t.norm == NormKind::RMSNorm) return h;  // scale
  return t.biases ? 2 * h : h;                // scale (+ shift)
}

void describe_norm(const TransformerShape& t, std::vector<BlockOp>& ops) {
  // The first norm opens the attention part, the second the MLP part.
  ops.push_back(norm(ops.empty() ? "attention_norm" : "mlp_norm", t));
}

}  // namespace toposweep
