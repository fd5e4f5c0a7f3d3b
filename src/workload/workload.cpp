#include "toposweep/workload/workload.hpp"

#include <algorithm>
#include <cmath>

#include "toposweep/util/error.hpp"
#include "toposweep/util/runs.hpp"
#include "toposweep/workload/model_library.hpp"
#include "toposweep/workload/moe_routing.hpp"
#include "toposweep/workload/spec.hpp"

namespace toposweep {

Workload make_workload(Model model, Device device, const std::string& datatype, double global_batch,
                       double efficiency_override, const std::string& optimizer) {
  if (optimizer != "adam" && optimizer != "momentum" && optimizer != "sgd")
    throw BadInput("unknown optimizer '" + optimizer + "' (adam, momentum or sgd)", "key model.optimizer");
  Workload w;
  w.optimizer = optimizer;
  w.model = std::move(model);
  w.device = std::move(device);
  w.datatype = datatype;
  w.bytes_per_element = datatype_bytes(datatype, "key model.datatype");
  const double eff = efficiency_override > 0 ? efficiency_override : w.device.efficiency;
  w.peak_flops_per_s = w.device.peak(datatype, "key model.datatype");
  w.flops_per_s = w.peak_flops_per_s * eff;
  w.gemm_bytes_per_element = w.bytes_per_element;
  w.gemm_peak_flops_per_s = w.peak_flops_per_s;
  w.gemm_efficiency = w.device.gemm_efficiency;
  if (w.fp8()) {
    // Transformer Engine: fp8 weight GEMMs (1-byte operands, bf16 outputs), the rest in bf16.
    // Layers without the per-operator model keep FLOPs / (fp8 peak x efficiency).
    w.gemm_peak_flops_per_s = w.peak_flops_per_s;
    if (w.device.fp8_gemm_efficiency > 0) w.gemm_efficiency = w.device.fp8_gemm_efficiency;
    w.bytes_per_element = datatype_bytes("bf16", "key model.datatype");
    w.peak_flops_per_s = w.device.peak("bf16", "key model.datatype");
    w.fp8_weight_bytes = 1;
  }
  w.grad_bytes_per_element = w.bytes_per_element;
  w.per_operator = w.device.per_operator() && !(efficiency_override > 0);
  w.global_batch = global_batch;
  return w;
}

double Workload::expert_load(std::uint32_t ep) const {
  const double dropless = ep > 1 ? moe_imbalance : 1.0;
  if (!(moe_capacity_factor > 0)) return dropless;
  return moe_pad_to_capacity ? moe_capacity_factor : std::min(dropless, moe_capacity_factor);
}

namespace {

// Bytes per element of a MoE tensor kept or sent in `datatype` (model.moe_activation_datatype,
// model.moe_dispatch_datatype): fp8 is e4m3 values with an fp32 scale per 1 x 128 tile (DeepSeek-V3,
// arXiv:2412.19437 Sec. 3.3.2); empty: 0, the activations' own.
double moe_element_bytes(const std::string& datatype, const std::string& key) {
  if (datatype.empty()) return 0;
  return datatype == "fp8" ? 1.0 + 4.0 / 128 : datatype_bytes(datatype, "key " + key);
}

}  // namespace

Workload make_workload(const WorkloadSpec& spec, std::uint32_t gpus, Model model, Device device) {
  if (spec.seq_len > 0) model = with_seq_len(model, spec.seq_len, "key model.seq_len");
  if (spec.softmax != SoftmaxKind::Fused) model = with_softmax(model, spec.softmax, "key model.softmax");
  if (spec.cross_entropy != CrossEntropyKind::Unfused)
    model = with_cross_entropy(model, spec.cross_entropy, "key model.cross_entropy");
  if (spec.moe_router_groups || spec.moe_router_group_topk) {
    // A key left unset keeps the model's value; groups set to 0 alone switch the limit off.
    const MoeShape* moe = model.transformer && model.transformer->moe ? &*model.transformer->moe : nullptr;
    const std::uint32_t groups = spec.moe_router_groups.value_or(moe ? moe->router_groups : 0);
    const std::uint32_t topk =
        spec.moe_router_group_topk.value_or(groups == 0 || !moe ? 0 : moe->router_group_topk);
    model = with_router_groups(
        model, groups, topk,
        spec.moe_router_groups ? "key model.moe_router_groups" : "key model.moe_router_group_topk");
  }
  double batch = static_cast<double>(spec.global_batch);
  if (spec.global_batch <= 0) {
    const std::int64_t per_gpu = spec.batch_per_gpu == 0 ? model.default_batch_per_gpu : spec.batch_per_gpu;
    batch = static_cast<double>(per_gpu) * gpus;
  }
  Workload w = make_workload(std::move(model), std::move(device), spec.datatype, batch, spec.efficiency,
                             spec.optimizer);
  if (!spec.grad_datatype.empty())
    w.grad_bytes_per_element = datatype_bytes(spec.grad_datatype, "key model.grad_datatype");
  w.fused_attention = spec.fused_attention.value_or(w.device.fused_attention_default);
  w.moe_imbalance = spec.moe_imbalance;
  const bool moe = w.model.transformer && w.model.transformer->moe;
  w.moe_capacity_factor =
      spec.moe_capacity_factor.value_or(moe ? w.model.transformer->moe->capacity_factor : 0.0);
  w.moe_pad_to_capacity = spec.moe_pad_to_capacity;
  if (w.moe_pad_to_capacity && !(w.moe_capacity_factor > 0))
    throw BadInput(
        "padding to capacity needs a capacity factor (model.moe_capacity_factor, or the model's "
        "capacity_factor)",
        "key model.moe_pad_to_capacity");
  if (spec.optimizer_moments == "bf16") w.moment_bytes = 2;
  w.moe_probs_in_activation = spec.moe_probs_in_activation;
  w.expert_kept_bytes_per_element =
      moe_element_bytes(spec.moe_activation_datatype, "model.moe_activation_datatype");
  w.dispatch_bytes_per_element = moe_element_bytes(spec.moe_dispatch_datatype, "model.moe_dispatch_datatype");
  w.fp8_recipe = spec.fp8_recipe;
  if (w.fused_attention && w.per_operator && !(w.device.flash_forward_efficiency > 0))
    throw BadInput(
        "device '" + w.device.name + "' has no flash-attention efficiency (flash_attention_efficiency)",
        "key model.fused_attention");
  return w;
}

Workload make_workload(const WorkloadSpec& spec, std::uint32_t gpus) {
  if (has_run_counts(spec.device))
    throw BadInput(
        "mixed servers (" + spec.device +
            ") are laid over a topology's servers: simulate, optimize and sweep take them, this command "
            "counts GPUs of one device",
        "key server.device");
  return make_workload(spec, gpus, resolve_model(spec.model, "key model.name"),
                       resolve_device(spec.device, "key server.device"));
}

}  // namespace toposweep
