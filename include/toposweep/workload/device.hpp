#pragma once
// An accelerator: peak dense FLOP/s per datatype, the fraction of peak training kernels
// achieve, HBM capacity and bandwidth, and the server it usually comes in. Built-ins a100,
// h100, v100 (also as files in inputs/devices/); user devices from JSON (docs/models.md).
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace toposweep {

struct Device {
  std::string name;
  std::string description;
  std::map<std::string, double> peak_flops;  // datatype ("fp16", "bf16", "fp32", ...) -> FLOP/s
  double efficiency = 0.5;                   // achieved / peak for training kernels
  double hbm_bytes = 0;
  double hbm_Bps = 0;
  std::uint32_t gpus_per_server = 8;
  double intra_server_Bps = 0;  // per GPU, one direction (NVLink)

  // Peak FLOP/s for a datatype; BadInput naming `where` when the device has none.
  double peak(const std::string& datatype, const std::string& where) const;
};

// Bytes per element of a training datatype ("fp16" -> 2); BadInput for an unknown one.
double datatype_bytes(const std::string& datatype, const std::string& where);

std::vector<std::string> builtin_device_names();
Device builtin_device(const std::string& name);
Device device_from_json(const nlohmann::json& j, const std::string& where);
Device load_device_file(const std::string& path);
Device resolve_device(const std::string& name_or_path, const std::string& where);
nlohmann::json device_to_json(const Device& d);

}  // namespace toposweep
