#include "toposweep/workload/config_keys.hpp"

#include "toposweep/util/config.hpp"
#include "toposweep/util/config_checks.hpp"
#include "toposweep/util/runs.hpp"
#include "toposweep/workload/cross_entropy.hpp"
#include "toposweep/workload/device.hpp"
#include "toposweep/workload/fp8_quantize.hpp"
#include "toposweep/workload/model_library.hpp"
#include "toposweep/workload/strategy_knobs.hpp"

namespace toposweep::workload {
namespace {

void check_model(const std::string& value, const std::string& where) {
  resolve_model(value, where);
}
void check_device(const std::string& value, const std::string& where) {
  resolve_device(value, where);
}
void check_datatype(const std::string& value, const std::string& where) {
  datatype_bytes(value, where);
}

// The names of a (name, value) table (kCrossEntropyKinds, kFp8Recipes), for one_of checks.
template <class Table>
std::vector<std::string> names_of(const Table& table) {
  std::vector<std::string> out;
  for (const auto& [name, value] : table) out.emplace_back(name);
  return out;
}

}  // namespace

std::vector<KeySpec> config_keys() {
  std::vector<KeySpec> keys = {
      {"model.name", "bert-large", "built-in model name (toposweep models) or path to a model JSON file",
       check_model},
      {"model.batch_per_gpu", "0",
       "samples per GPU per iteration (0: the model's default); global batch = this x GPUs",
       checks::integer(0, 1 << 30)},
      {"model.global_batch", "", "samples per iteration over all GPUs (overrides model.batch_per_gpu)",
       checks::optional(checks::integer(1, INT64_C(1) << 40))},
      {"model.seq_len", "",
       "sequence length of a transformer model (default: the model's); at most its max_positions when it "
       "learns positions",
       checks::optional(checks::integer(1, 1 << 30))},
      {"model.datatype", "fp16", "training datatype: fp16, bf16, fp32, tf32, fp8", check_datatype},
      {"model.optimizer", "adam", "optimizer (sets its state memory): adam, momentum or sgd",
       checks::one_of({"adam", "momentum", "sgd"})},
      {"model.optimizer_moments", "fp32",
       "datatype of the optimizer's moments (Adam's two, momentum's one): fp32 (4 bytes each) or bf16 (2, "
       "DeepSeek-V3); the fp32 master weights stay",
       checks::one_of({"fp32", "bf16"})},
      {"model.fused_attention", "",
       "one fused (flash) attention kernel per layer instead of QK^T, softmax, dropout and x V; keeps no s x "
       "s activations (default: the device's fused_attention_default: true on Hopper and later, else false)",
       checks::optional(checks::boolean())},
      {"model.softmax", "fused",
       "unfused attention's score kernels: fused (Megatron's scale-mask-softmax kernel) or eager (scale, "
       "mask, to fp32, fp32 softmax, back: Megatron's fallback and stock PyTorch; 6e+16 instead of 2e bytes "
       "per score element forward); no effect with model.fused_attention",
       checks::one_of({"fused", "eager"})},
      {"model.cross_entropy", "unfused",
       "transformers: the loss's kernels over each rank's logits: unfused (Megatron-Core's vocab-parallel "
       "cross entropy, one PyTorch kernel a step: 38 + 22 bytes per logit, fp32 softmax kept; its default), "
       "native (its jit-fused version, cross_entropy_fusion_impl native: 22 + 10, fp32 kept) or te "
       "(Transformer Engine's Triton kernels in place, cross_entropy_fusion_impl te: 6 + 4, the bf16 logits "
       "kept; Megatron-Bridge's recipes)",
       checks::one_of(names_of(kCrossEntropyKinds))},
      {"model.moe_imbalance", "1",
       "MoE models with strategy.ep > 1: the busiest expert-parallel rank's routed tokens over the mean "
       "(>= 1); scales that rank's expert GEMMs, dispatch/combine All-to-Alls and expert activations",
       checks::number_in(1, 1e6)},
      {"model.moe_capacity_factor", "",
       "MoE models: each expert takes at most this many times its mean share of the routed tokens, the rest "
       "dropped (Megatron-Core's --moe-expert-capacity-factor; > 0); 0: dropless (default: the model's "
       "capacity_factor, else dropless)",
       checks::optional(checks::number_in(0, 1e6))},
      {"model.moe_pad_to_capacity", "false",
       "MoE models with a capacity factor: every expert's input is padded to its capacity, so each expert "
       "computes and each All-to-All carries capacity_factor x the mean share (Megatron-Core's "
       "--moe-pad-expert-input-to-capacity)",
       checks::boolean()},
      {"model.moe_router_groups", "",
       "MoE models: group-limited routing, the experts in this many equal groups of consecutive experts, "
       "each token's top_k chosen within model.moe_router_group_topk of them (Megatron-Core's "
       "--moe-router-num-groups; DeepSeek-V3's node-limited routing); 0: unlimited. With the groups on the "
       "EP group's nodes, strategy.ep_dispatcher = deepep sends fewer copies over the network (default: the "
       "model's router_groups)",
       checks::optional(checks::integer(0, 1 << 20))},
      {"model.moe_router_group_topk", "",
       "MoE models with model.moe_router_groups: the groups each token's experts may come from "
       "(Megatron-Core's --moe-router-group-topk; default: the model's router_group_topk, 0 when the groups "
       "are 0)",
       checks::optional(checks::integer(0, 1 << 20))},
      {"model.moe_dispatch_datatype", "",
       "MoE models with strategy.ep > 1: datatype of the tokens dispatched to the experts and of the output "
       "gradients sent to them (fp8: 1 byte + an fp32 scale per 128, DeepSeek-V3); the combine stays in the "
       "activations' datatype (default: the activations')",
       checks::optional(check_datatype)},
      {"model.fp8_recipe", "delayed",
       "model.datatype = fp8: how Transformer Engine scales the GEMM operands it quantizes, which sets the "
       "bytes of quantizing them: delayed (per tensor, from earlier steps' amax: one pass; Megatron-Core's "
       "default), tensorwise (per tensor, current: an amax pass first; Megatron-Bridge's fp8_cs) or "
       "blockwise (1 x 128 / 128 x 128 tiles: one pass plus tile scales; DeepSeek-V3)",
       checks::one_of(names_of(kFp8Recipes))},
      {"model.moe_activation_datatype", "",
       "MoE models: datatype the routed experts keep their activations in for the backward pass (their "
       "GEMMs' inputs, the activation's input; fp8: 1 byte + an fp32 scale per 128, DeepSeek-V3); never "
       "more than they would be (default: the activations')",
       checks::optional(check_datatype)},
      {"model.moe_probs_in_activation", "false",
       "MoE models: the router probabilities multiply the experts' activation output (Megatron-Core >= "
       "v0.13), so the unpermutation keeps k probabilities per token instead of its k expert outputs",
       checks::boolean()},
      {"model.grad_datatype", "",
       "datatype of the gradient buffers and their data-parallel reduction (default: model.datatype; "
       "Megatron "
       "keeps fp32)",
       checks::optional(check_datatype)},
      {"server.device", "a100",
       "accelerator: a100, h100, h200, h800, b200, v100 or a device JSON file; mixed servers: runs "
       "NAME*COUNT,... of "
       "consecutive "
       "servers, e.g. a100*4,v100*4",
       checks::runs(check_device)},
      {"server.efficiency", "", "achieved fraction of peak FLOP/s (default: the device's)",
       checks::optional(checks::number_in(1e-6, 1))},
  };
  // The strategy knobs' keys, from their table, with the two keys that are not knobs of a
  // strategy: a microbatch size (resolved into the count) and the deprecated ZeRO-1 flag.
  for (const StrategyKnob& k : kStrategyKnobs) {
    if (k.name.empty()) continue;
    keys.push_back(knob_key(k));
    if (k.member == KnobMember{&StrategyKnobs::microbatches})
      keys.push_back({"strategy.microbatch_size", "",
                      "samples per microbatch (sets strategy.microbatches from the batch)",
                      checks::optional(checks::integer(1, 1 << 30))});
    if (k.member == KnobMember{&StrategyKnobs::zero})
      keys.push_back({"strategy.zero1", "false", "deprecated: true is strategy.zero = 1", checks::boolean()});
  }
  return keys;
}

}  // namespace toposweep::workload
