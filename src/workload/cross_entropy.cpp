// The cross entropy's byte counts per logit, worked out from each implementation's kernels
// (Megatron-LM d98e8a64dd, Transformer Engine d0067d0da and its history).
#include "toposweep/workload/cross_entropy.hpp"

namespace toposweep {

std::optional<CrossEntropyKind> cross_entropy_from_name(std::string_view name) {
  for (const auto& [n, kind] : kCrossEntropyKinds)
    if (n == name) return kind;
  return std::nullopt;
}

CrossEntropyBytes cross_entropy_bytes(CrossEntropyKind kind, double elem) {
  switch (kind) {
    case CrossEntropyKind::Unfused:
      // tensor_parallel.vocab_parallel_cross_entropy, one PyTorch kernel per step: .float() (2 + 4),
      // max (4), subtract in place (4 + 4), exp in place (4 + 4), sum (4), divide in place (4 + 4);
      // the backward as counted since the per-operator model (issue 16), 22 bytes; the fp32
      // softmax kept. Fixed counts (bf16 logits), as the A100 calibration has them.
      return {38, 22, 4};
    case CrossEntropyKind::Native:
      // fused_vocab_parallel_cross_entropy (megatron/core/fusions/fused_cross_entropy.py): the same
      // steps in three jit-fused functions (torch.compile, megatron/core/jit.py), one kernel each:
      // logits to fp32 with their max (elem + 4), subtract and exp written back with the sum
      // (4 + 4), the divide in place (4 + 4). Backward, one kernel (calculate_gradients): read the
      // softmax, write back the updated fp32 gradient (the function mutates its input) and its
      // bf16 copy (4 + 4 + elem). The fp32 softmax kept.
      return {elem + 20, 8 + elem, 4};
    case CrossEntropyKind::Te:
      // Transformer Engine's parallel_cross_entropy (transformer_engine/pytorch/triton/
      // cross_entropy.py, before TE commit 01bbe3eea of 2026-07-09): an online-softmax kernel reads
      // the logits (elem), then cross_entropy_kernel reads them again and writes the gradient over
      // them in place (elem + elem); backward element_mul_kernel scales it by the per-token loss
      // gradient in place (elem + elem; Megatron-Core's loss is per token, so the kernel runs). The
      // logits, which hold the gradient, are what is kept: elem bytes.
      return {3 * elem, 2 * elem, elem};
  }
  return {};
}

}  // namespace toposweep
