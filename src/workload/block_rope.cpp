// Rotary position embeddings (RoPE; Su et al. 2021), as Llama and Megatron-Core apply them: after
// the QKV projection each head of Q and K is rotated pairwise by position-dependent angles. No
// parameters and no GEMM: a memory-bound elementwise kernel that reads and writes Q (s x heads d) and K
// (s x kv_dim), split over the TP ranks by heads like Q and K. Its backward is the inverse rotation
// of the gradients, the same traffic; it keeps nothing (the rotation is linear, and the rotated Q
// and K are what the scores keep).
#include "toposweep/workload/block.hpp"

namespace toposweep {

void describe_rope(const TransformerShape& t, std::vector<BlockOp>& ops) {
  if (t.position != PositionKind::Rotary) return;
  const double s = t.seq_len, d = head_width(t);
  const double q = d * t.heads, kv = d * (t.kv_heads > 0 ? t.kv_heads : t.heads);
  BlockOp rope{.name = "rope", .kind = OpKind::MemoryBound, .role = OpRole::Rotary};
  rope.M = s;
  rope.N = q + kv;  // Q and K side by side
  rope.axis = ParallelAxis::Tensor;
  rope.forward = {2, 0};   // read, write
  rope.backward = {2, 0};  // read the gradient, write it rotated back
  ops.push_back(rope);
}

}  // namespace toposweep
