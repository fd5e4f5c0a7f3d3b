#pragma once
// A workload ready to plan: the model, the device it runs on, the training datatype and the
// global batch. Built once per design point from model.*, server.* keys.
#include <cstdint>
#include <string>

#include "toposweep/util/config.hpp"
#include "toposweep/workload/device.hpp"
#include "toposweep/workload/model.hpp"

namespace toposweep {

struct Workload {
  Model model;
  Device device;
  std::string datatype = "fp16";
  double bytes_per_element = 2;  // activations, weights and gradients
  double flops_per_s = 0;        // achievable: device peak for the datatype x efficiency
  double global_batch = 0;       // samples per iteration over all GPUs
  // Table weights are kept in fp32 (as DLRM does); sparse SGD keeps no optimizer state.
  double table_bytes_per_element = 4;
  // Mixed-precision Adam: fp32 master weights, momentum and variance (12 bytes/param); 8 in fp32.
  double optimizer_bytes_per_param() const { return bytes_per_element < 4 ? 12 : 8; }
};

// model.name (built-in or JSON path), model.batch_per_gpu (0: the model's default),
// model.global_batch (overrides batch_per_gpu x gpus), model.datatype, server.device,
// server.efficiency (overrides the device's).
Workload workload_from_config(const Config& config, std::uint32_t gpus);
// Same, reusing an already-resolved model and device (a sweep caches them).
Workload make_workload(Model model, Device device, const std::string& datatype, double global_batch,
                       double efficiency_override = 0);

}  // namespace toposweep
