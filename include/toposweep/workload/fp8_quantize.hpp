#pragma once
// Transformer Engine's FP8 GEMM operands (model.datatype = fp8; docs/models.md, "FP8"): before an
// fp8 GEMM, Transformer Engine quantizes each operand it does not already hold in fp8 (the input in
// the forward pass, the output gradient in the backward pass; the weights once per step, not
// counted). A quantization reads the bf16 tensor and writes the row-wise fp8 copy and, for the GEMM
// that reads the operand transposed (Hopper's fp8 GEMMs take TN layouts only), the column-wise
// (transposed) copy; the scaling recipe (model.fp8_recipe) decides what more it moves.
#include <optional>
#include <string_view>
#include <utility>

namespace toposweep {

enum class Fp8Recipe {
  // Per-tensor delayed scaling (Transformer Engine's and Megatron-Core's default): the scale comes
  // from earlier steps' amax history, the cast records this tensor's amax as it goes: one pass.
  Delayed,
  // Per-tensor current scaling (Megatron-Bridge's fp8_cs): an amax kernel reads the tensor first,
  // then the cast (Float8CurrentScalingQuantizer::quantize_impl, transformer_engine/pytorch/csrc/
  // quantizer.cpp): two reads. One when the kernel that wrote the tensor took its amax: a norm
  // fused into the GEMM's module (fp8_quantize_bytes' `amax_known`).
  Tensorwise,
  // Block scaling, 1 x 128 activation tiles and 128 x 128 weight tiles (DeepSeek-V3,
  // arXiv:2412.19437 Sec. 3.3.1; Transformer Engine's Float8BlockScaling): one pass, plus an fp32
  // scale per 128 values of each copy.
  Blockwise
};
// The recipes by their model.fp8_recipe names.
inline constexpr std::pair<std::string_view, Fp8Recipe> kFp8Recipes[] = {
    {"delayed", Fp8Recipe::Delayed},
    {"tensorwise", Fp8Recipe::Tensorwise},
    {"blockwise", Fp8Recipe::Blockwise}};
std::optional<Fp8Recipe> fp8_recipe_from_name(std::string_view name);

// HBM bytes one rank moves to quantize a GEMM operand of `elements` (the rank's whole operand,
// bf16) with both copies. `gathered_over` > 1: the operand is all-gathered in fp8 over that many
// TP ranks (sequence parallelism): each rank quantizes its 1 / gathered_over share row-wise only
// (an fp8 transpose cannot be gathered: _all_gather_fp8 in transformer_engine/pytorch/
// distributed.py); the column-wise copy is then fp8_transpose_bytes of the gathered tensor.
// `amax_known`: the kernel that wrote the operand also took its amax, so current scaling needs no
// amax pass (Transformer Engine's LayerNormLinear: its norm kernel computes the amax with the
// output, Impl::FUSED_NORM_AMAX_FP8 in transformer_engine/pytorch/csrc/extensions/normalization.cpp,
// since TE commit 51eb6362b, 2025-07-31, "Fuse amax computation into normalization kernel for
// current scaling").
double fp8_quantize_bytes(double elements, double gathered_over, Fp8Recipe recipe, bool amax_known = false);
// HBM bytes of transposing an fp8 tensor of `elements`: 1 byte read, 1 written per element.
double fp8_transpose_bytes(double elements);

// A GEMM input its norm writes inside the GEMM's Transformer Engine module (BlockOp::
// norm_fused_input). fp8_norm_writes_fp8: whether the norm kernel writes the fp8 row-wise copy
// itself, 1 byte an element instead of the activations' (delayed scaling: Impl::FULLY_FUSED in
// transformer_engine/pytorch/csrc/extensions/normalization.cpp). fp8_norm_fed_bytes: the HBM
// bytes of the quantization kernels the operand still needs on one rank (as fp8_quantize_bytes'
// arguments): delayed, a transpose for the column-wise copy (ln_api.cpp / rmsnorm_api.cpp,
// nvte_transpose), none when the copy is gathered in fp8 (the backward transposes the gathered
// tensor); tensorwise, the cast with the amax the norm took (`amax_known`); blockwise, the cast.
bool fp8_norm_writes_fp8(Fp8Recipe recipe);
double fp8_norm_fed_bytes(double elements, double gathered_over, Fp8Recipe recipe);

}  // namespace toposweep
