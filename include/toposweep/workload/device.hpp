#pragma once
// An accelerator: peak dense FLOP/s per datatype, HBM capacity and bandwidth, the server it
// usually comes in, and what training kernels reach on it: the per-operator compute model's
// parameters (sustained GEMM fraction, SM count for wave quantization, memory-bound kernels'
// bandwidth, flash-attention fractions) and the GPU fabric's link class. Built-ins a100, h100,
// v100 (also as files in inputs/devices/, with the source of every number); user devices from
// JSON (docs/models.md). A device without the per-operator fields runs every layer at
// FLOPs / (peak x efficiency).
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "toposweep/util/link_class.hpp"

namespace toposweep {

struct Device {
  std::string name;
  std::string description;
  std::map<std::string, double> peak_flops;  // datatype ("fp16", "bf16", "fp32", ...) -> FLOP/s
  double efficiency = 0.5;                   // achieved / peak for layers without a per-operator model
  double hbm_bytes = 0;
  double hbm_Bps = 0;
  // Bytes the framework cannot use for the model: CUDA context, NCCL and cuBLAS buffers,
  // caching-allocator fragmentation. A strategy fits when its bytes + this <= hbm_bytes.
  double memory_reserve_bytes = 0;
  std::uint32_t gpus_per_server = 8;
  // The GPU fabric inside a server (NVLink/NVSwitch): line rate per GPU and direction, NCCL's
  // achievable fraction and latencies; the network's intra-server fabric by default.
  LinkClass intra_server;
  // SMs a collective's kernels occupy while it overlaps compute (NCCL channels).
  std::uint32_t collective_sms = 0;

  // Per-operator compute model (workload/layer_cost.hpp); unused when gemm_efficiency is 0.
  std::uint32_t sms = 0;
  double gemm_efficiency = 0;    // sustained fraction of peak of a large GEMM in a training step
  double memory_efficiency = 0;  // fraction of hbm_Bps memory-bound training kernels reach
  // model.datatype = fp8 (Transformer Engine): the sustained fraction of peak_flops["fp8"] of a
  // large fp8 GEMM; 0: gemm_efficiency.
  double fp8_gemm_efficiency = 0;
  // The MoE layer's expert GEMMs (one batched / grouped GEMM over a rank's experts): their
  // sustained fraction of the bf16 peak; 0: gemm_efficiency. With model.datatype = fp8 they run at
  // fp8_gemm_efficiency x grouped_gemm_efficiency / gemm_efficiency.
  double grouped_gemm_efficiency = 0;
  double kernel_floor_s = 4e-6;  // shortest dependent kernel
  std::vector<std::pair<std::uint32_t, std::uint32_t>> gemm_tiles{{256, 128}, {128, 256}, {128, 128}};
  double flash_forward_efficiency = 0;  // fused attention (model.fused_attention), fraction of peak
  double flash_backward_efficiency = 0;
  // What model.fused_attention means when not given: the attention the device's usual training
  // stack runs (Transformer Engine's fused attention on Hopper and later; false before).
  bool fused_attention_default = false;
  // Field -> where its value comes from; shared, so copying a device (every plan does) stays cheap.
  std::shared_ptr<const std::map<std::string, std::string>> sources;
  const std::string& source(const std::string& field) const;  // "" when none is given

  bool per_operator() const { return gemm_efficiency > 0 && memory_efficiency > 0 && sms > 0; }
  // Peak FLOP/s for a datatype; BadInput naming `where` when the device has none.
  double peak(const std::string& datatype, const std::string& where) const;
};

// Bytes per element of a training datatype ("fp16" -> 2); BadInput for an unknown one.
double datatype_bytes(const std::string& datatype, const std::string& where);

std::vector<std::string> builtin_device_names();
Device builtin_device(const std::string& name);
// The built-in device of that name, or nullptr (no copy: for callers that read one field).
const Device* find_builtin_device(const std::string& name);
Device device_from_json(const nlohmann::json& j, const std::string& where);
Device load_device_file(const std::string& path);
Device resolve_device(const std::string& name_or_path, const std::string& where);
nlohmann::json device_to_json(const Device& d);

}  // namespace toposweep
