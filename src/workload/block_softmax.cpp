// The kernels between an unfused attention's scores (QK^T) and scores x V: the softmax and the
// attention dropout, on `heads` s x s matrices per sequence. Bytes per score element, e bytes
// per activation element, 1 per dropout-mask element, 4 per fp32 value (docs/models.md, "The
// block table"):
//   fused (Megatron's scale-mask-softmax kernel): reads the scores, writes the probabilities
//     (2e); backward reads the probabilities and their gradient, writes the scores' gradient
//     (3e). Keeps its output (a s^2 elements).
//   eager (Megatron's fallback, FusedScaleMaskSoftmax.forward_torch_softmax with softmax in
//     fp32, and stock PyTorch): five kernels, each reading and writing the whole matrix:
//       scale        x * 1/sqrt(d)       forward 2e, backward 2e
//       mask         masked_fill(-inf)   forward 2e, backward 2e (the s x s mask is broadcast)
//       to fp32      x.float()           forward e + 4, backward 4 + e
//       softmax      fp32                forward 8, backward 12 (output, its gradient, result)
//       to e         .to(bf16)           forward 4 + e, backward e + 4
//     6e + 16 forward, 6e + 20 backward (fused: 2e, 3e). The fp32 probabilities are what the
//     softmax backward keeps: 4 bytes = 2 two-byte elements per score (fused: 1).
//   dropout, both: forward reads e, writes e and the 1-byte mask; backward reads the gradient and
//     the mask, writes e. Keeps the mask and its output (1.5 two-byte elements per score).
// Selective recomputation drops all of them and runs them again.
#include "toposweep/workload/block.hpp"

namespace toposweep {

namespace {

BlockOp score_op(std::string_view name, OpRole role, double s, double heads, Traffic forward,
                 Traffic backward, double kept) {
  BlockOp op{.name = name, .kind = OpKind::MemoryBound, .role = role};
  op.M = s;
  op.N = s;
  op.batch = heads;
  op.axis = ParallelAxis::Tensor;
  op.forward = forward;
  op.backward = backward;
  op.kept_sharded = kept;
  op.recompute = RecomputeClass::DroppedUnderSelective;
  op.module = op.kept_module = RecomputeModules::CoreAttn;
  return op;
}

}  // namespace

void describe_score_softmax(const TransformerShape& t, double heads, std::vector<BlockOp>& ops) {
  const double s = t.seq_len, scores = heads * s * s;
  if (t.softmax == SoftmaxKind::Eager) {
    ops.push_back(score_op("score_scale", OpRole::Softmax, s, heads, {2, 0}, {2, 0}, 0));
    ops.push_back(score_op("score_mask", OpRole::Softmax, s, heads, {2, 0}, {2, 0}, 0));
    ops.push_back(score_op("score_to_fp32", OpRole::Softmax, s, heads, {1, 4}, {1, 4}, 0));
    ops.push_back(score_op("softmax", OpRole::Softmax, s, heads, {0, 8}, {0, 12}, 2 * scores));
    ops.push_back(score_op("softmax_to_elem", OpRole::Softmax, s, heads, {1, 4}, {1, 4}, 0));
  } else {
    ops.push_back(score_op("softmax", OpRole::Softmax, s, heads, {2, 0}, {3, 0}, scores));
  }
  ops.push_back(score_op("score_dropout", OpRole::ScoreDropout, s, heads, {2, 1}, {2, 1}, 1.5 * scores));
}

}  // namespace toposweep
