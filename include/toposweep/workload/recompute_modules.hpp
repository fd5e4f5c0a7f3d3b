#pragma once
// Selective recomputation by module (Megatron-Core's --recompute-modules, used with
// --recompute-granularity selective): the parts of a transformer block whose forward reruns in
// the backward pass instead of keeping what they produce. Each operator of the block table
// (block.hpp) names the module that reruns it and the module whose recomputation drops what it
// keeps; strategy.recompute_modules lists the modules (docs/models.md, "Recomputation by module").
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace toposweep {

// A set of modules, one bit each, named as Megatron-Core's recompute_modules values
// (megatron/core/transformer/transformer_config.py):
//   core_attn    the attention core: QK^T, softmax, dropout, x V (Korthikanti et al. 2022's
//                selective recomputation; Megatron-Core's default);
//   layernorm    the two block norms (input_layernorm, pre_mlp_layernorm): their outputs are
//                dropped and the norms run again;
//   mla_up_proj  multi-head latent attention's up projections and RoPE: Q, K and V are dropped,
//                the latents kept (DeepSeek-V3, arXiv:2412.19437 Sec. 3.2.3);
//   mlp          the dense MLP: only its input is kept, its GEMMs and activation run again;
//   moe_act      the routed experts' activation (SwiGLU): its output is dropped, its input kept
//                (DeepSeek-V3 Sec. 3.3.2).
// Megatron-Core's moe, shared_experts (whole MoE layer, shared experts) are not modelled.
enum class RecomputeModules : std::uint8_t {
  None = 0,
  CoreAttn = 1,
  Layernorm = 2,
  MlaUpProj = 4,
  Mlp = 8,
  MoeAct = 16,
};
constexpr RecomputeModules operator|(RecomputeModules a, RecomputeModules b) {
  return static_cast<RecomputeModules>(static_cast<std::uint8_t>(a) | static_cast<std::uint8_t>(b));
}
constexpr RecomputeModules operator&(RecomputeModules a, RecomputeModules b) {
  return static_cast<RecomputeModules>(static_cast<std::uint8_t>(a) & static_cast<std::uint8_t>(b));
}
// Whether the set `set` holds a module of `m` (an operator's tag; None: never).
constexpr bool recomputes(RecomputeModules set, RecomputeModules m) {
  return (set & m) != RecomputeModules::None;
}
// The modules besides the attention core (what selective recomputation did before the list).
constexpr RecomputeModules without_core_attn(RecomputeModules set) {
  return static_cast<RecomputeModules>(static_cast<std::uint8_t>(set) &
                                       ~static_cast<std::uint8_t>(RecomputeModules::CoreAttn));
}

// "core_attn,layernorm": the names of the set's modules in the order above.
std::string recompute_modules_name(RecomputeModules set);
// A comma-separated list of module names (spaces around each ignored, repeats allowed); nullopt
// for an empty list or an unknown name.
std::optional<RecomputeModules> parse_recompute_modules(std::string_view text);

}  // namespace toposweep
