// Transformer Engine's fp8 quantization traffic (fp8_quantize.hpp).
#include "toposweep/workload/fp8_quantize.hpp"

namespace toposweep {

namespace {
constexpr double kRead = 2;               // a pass over the bf16 operand
constexpr double kFp8Copy = 1;            // each fp8 copy the cast writes (row-wise, column-wise)
constexpr double kTileScale = 4.0 / 128;  // block scaling: an fp32 scale per 128 values of a copy
constexpr double kTranspose = 2;          // a transpose of an fp8 tensor: 1 byte read, 1 written
}  // namespace

std::optional<Fp8Recipe> fp8_recipe_from_name(std::string_view name) {
  for (const auto& [n, recipe] : kFp8Recipes)
    if (n == name) return recipe;
  return std::nullopt;
}

double fp8_quantize_bytes(double elements, double gathered_over, Fp8Recipe recipe, bool amax_known) {
  // Current scaling's amax kernel reads the operand once more, unless its writer took the amax.
  const double reads = recipe == Fp8Recipe::Tensorwise && !amax_known ? 2 * kRead : kRead;
  const double copy = kFp8Copy + (recipe == Fp8Recipe::Blockwise ? kTileScale : 0);
  if (gathered_over > 1) return (reads + copy) * elements / gathered_over;
  return (reads + 2 * copy) * elements;
}

double fp8_transpose_bytes(double elements) {
  return kTranspose * elements;
}

bool fp8_norm_writes_fp8(Fp8Recipe recipe) {
  return recipe == Fp8Recipe::Delayed;
}

double fp8_norm_fed_bytes(double elements, double gathered_over, Fp8Recipe recipe) {
  if (fp8_norm_writes_fp8(recipe)) return gathered_over > 1 ? 0.0 : fp8_transpose_bytes(elements);
  return fp8_quantize_bytes(elements, gathered_over, recipe, true);
}

}  // namespace toposweep
