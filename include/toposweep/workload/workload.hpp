#pragma once
// A workload ready to plan: the model, the device it runs on, the training datatype and the
// global batch. Built once per design point from model.*, server.* keys.
#include <cstdint>
#include <string>
#include <vector>

#include "toposweep/util/config.hpp"
#include "toposweep/workload/device.hpp"
#include "toposweep/workload/fp8_quantize.hpp"
#include "toposweep/workload/model.hpp"

namespace toposweep {

struct Workload {
  Model model;
  Device device;
  std::string datatype = "fp16";
  double bytes_per_element = 2;       // activations and weights
  double grad_bytes_per_element = 2;  // gradient buffers (model.grad_datatype; Megatron keeps fp32 ones)
  double flops_per_s = 0;             // achievable: device peak for the datatype x efficiency
  double peak_flops_per_s = 0;        // device peak for the datatype
  // model.datatype = fp8 (Transformer Engine's recipe, docs/models.md "FP8 training"): the weight
  // GEMMs read 1-byte operands at the device's fp8 peak x fp8_gemm_efficiency; everything else
  // (bytes_per_element, peak_flops_per_s) is bf16. Otherwise the training datatype's values.
  double gemm_bytes_per_element = 2;
  double gemm_peak_flops_per_s = 0;
  double gemm_efficiency = 0;   // the per-operator model's sustained GEMM fraction of that peak
  double fp8_weight_bytes = 0;  // fp8: TE's fp8 copy of the weights, bytes per parameter (1)
  bool fp8() const { return datatype == "fp8"; }
  // model.fp8_recipe: how Transformer Engine scales the fp8 GEMMs' operands, which decides the
  // bytes of quantizing them (fp8_quantize.hpp). fp8 only.
  Fp8Recipe fp8_recipe = Fp8Recipe::Delayed;
  // Transformer layers are timed per operator (workload/layer_cost.hpp) when the device has the
  // model's parameters and no server.efficiency overrides it; otherwise FLOPs / flops_per_s.
  bool per_operator = false;
  bool fused_attention = false;  // one flash-attention kernel instead of the s x s attention ops
  double global_batch = 0;       // samples per iteration over all GPUs
  // model.moe_imbalance (>= 1): the busiest expert-parallel rank's routed tokens over the mean;
  // with ep > 1 its expert GEMMs, All-to-Alls and expert activations carry that many times the
  // mean (the simulator runs the slowest rank).
  double moe_imbalance = 1;
  // model.moe_capacity_factor (the model's capacity_factor unless set): each expert takes at most
  // that many times its mean share of the routed tokens, the rest dropped; 0: dropless. With
  // model.moe_pad_to_capacity every expert's input is padded to exactly its capacity.
  double moe_capacity_factor = 0;
  bool moe_pad_to_capacity = false;
  // The routed tokens the busiest expert-parallel rank's experts compute, send and keep, over the
  // mean share (1): dropless, model.moe_imbalance with ep > 1 (1 with every expert on each rank);
  // with a capacity factor c, at most c (the excess dropped); padded to capacity, exactly c.
  double expert_load(std::uint32_t ep) const;
  // model.moe_dispatch_datatype: bytes per element of the tokens a MoE layer sends to its experts
  // (the forward dispatch, and the output gradients sent to them in the backward); the combine
  // and the input gradients coming back stay at bytes_per_element. fp8: 1 byte plus one fp32
  // scale per 128 elements (DeepSeek-V3, arXiv:2412.19437 Sec. 3.3.2). 0: bytes_per_element.
  double dispatch_bytes_per_element = 0;
  double dispatch_bytes() const {
    return dispatch_bytes_per_element > 0 ? dispatch_bytes_per_element : bytes_per_element;
  }
  // model.moe_activation_datatype: bytes per element at most of what the routed experts keep for
  // the backward pass (their GEMMs' inputs, the activation's input); fp8: 1 byte plus one fp32
  // scale per 128 elements (DeepSeek-V3, arXiv:2412.19437 Sec. 3.3.2). 0: as the other activations.
  double expert_kept_bytes_per_element = 0;
  // model.moe_probs_in_activation: the router probabilities multiply the routed experts'
  // activation output (Megatron-Core >= v0.13's GroupedMLP, release notes "Memory efficient token
  // permutation"), so the unpermutation sums the k expert outputs of a token without keeping them
  // for the probabilities' gradient: it keeps the k probabilities only.
  bool moe_probs_in_activation = false;
  // model.optimizer_moments: bytes of each optimizer moment (Adam's first and second, momentum's
  // one): 4 (fp32) or 2 (bf16, DeepSeek-V3 Sec. 3.3.2 "Low-Precision Optimizer States").
  double moment_bytes = 4;
  // Table weights are kept in fp32 (as DLRM does); sparse SGD keeps no optimizer state.
  double table_bytes_per_element = 4;
  // "adam" (default), "momentum" (SGD with momentum) or "sgd" (plain SGD, as FlexFlow/TopoOpt).
  std::string optimizer = "adam";
  // Mixed servers (workload/devices.hpp): the device kinds, their compute rates and the kind of
  // every GPU rank in rank order. Empty: every GPU is `device`. With several kinds `device` is the
  // fastest one. Rates compare kinds: peak x efficiency, or with the per-operator model (every
  // kind has one) peak x sustained GEMM fraction; reference_rate is the reference kind's.
  std::vector<Device> kinds;
  std::vector<double> kind_flops_per_s;
  std::vector<std::uint16_t> rank_kind;
  double reference_rate = 0;
  bool mixed() const { return !rank_kind.empty(); }
  double rate_reference() const { return mixed() ? reference_rate : flops_per_s; }
  // The device GPU rank r runs (rank order: placements only swap servers of the same kind).
  const Device& device_of_rank(std::uint32_t r) const { return mixed() ? kinds[rank_kind[r]] : device; }
  double flops_of_rank(std::uint32_t r) const {
    return mixed() ? kind_flops_per_s[rank_kind[r]] : flops_per_s;
  }
  // Optimizer state per dense parameter: below fp32 an fp32 master copy (4 bytes) plus the
  // moments (Adam two, momentum one, moment_bytes each: fp32 Adam 8, momentum 4); in fp32 just the
  // moments.
  double optimizer_bytes_per_param() const {
    const double count = optimizer == "adam" ? 2 : optimizer == "momentum" ? 1 : 0;
    const double moments = count * moment_bytes;
    return moments + (bytes_per_element < 4 ? 4 : 0);
  }
  // HBM bytes an optimizer step moves per local parameter (Megatron-LM's mixed-precision step,
  // g = gradient bytes): unscale and inf check (read and write g), gradient norm (read g), the
  // update (read the gradient, read and write the state K), the fp32 master copied to the
  // training weights (read 4, write B; in fp32 the update writes the weights: 2B), zeroing the
  // gradient buffer (write g). Mixed-precision Adam with fp32 gradients: 20 + 24 + 6 = 50 bytes.
  double optimizer_step_bytes_per_param() const {
    const double g = grad_bytes_per_element;
    const bool master = bytes_per_element < 4;
    return 5 * g + 2 * optimizer_bytes_per_param() + (master ? 4 + bytes_per_element : 2 * bytes_per_element);
  }
};

// make_workload(workload_spec_from_config(config), gpus) (spec.hpp): model.name (built-in or
// JSON path), model.batch_per_gpu (0: the model's default), model.global_batch (overrides
// batch_per_gpu x gpus), model.datatype, model.optimizer, server.device, server.efficiency.
Workload workload_from_config(const Config& config, std::uint32_t gpus);
// Same, reusing an already-resolved model and device (a sweep caches them).
Workload make_workload(Model model, Device device, const std::string& datatype, double global_batch,
                       double efficiency_override = 0, const std::string& optimizer = "adam");

}  // namespace toposweep
