// Datasheet figures (dense, no sparsity): NVIDIA A100 80GB SXM, H100 SXM5 80GB, V100 SXM2
// 32GB. Efficiency 0.5 is a typical fraction of peak that large-model training reaches (Megatron
// reports 44-52 % on A100); override with server.efficiency.
#include "toposweep/workload/device.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "toposweep/util/error.hpp"
#include "toposweep/util/units.hpp"

namespace toposweep {
namespace {

using nlohmann::json;

Device a100() {
  Device d;
  d.name = "a100";
  d.description = "NVIDIA A100 80GB SXM4 (dense peaks; NVLink3 600 GB/s bidirectional)";
  d.peak_flops = {{"fp64", 19.5e12}, {"fp32", 19.5e12}, {"tf32", 156e12},
                  {"fp16", 312e12},  {"bf16", 312e12},  {"int8", 624e12}};
  d.hbm_bytes = 80e9;
  d.hbm_Bps = 2.039e12;
  d.gpus_per_server = 8;
  d.intra_server_Bps = 300e9;
  return d;
}

Device h100() {
  Device d;
  d.name = "h100";
  d.description = "NVIDIA H100 80GB SXM5 (dense peaks; NVLink4 900 GB/s bidirectional)";
  d.peak_flops = {{"fp64", 67e12},    {"fp32", 67e12},    {"tf32", 494.7e12}, {"fp16", 989.4e12},
                  {"bf16", 989.4e12}, {"fp8", 1978.9e12}, {"int8", 1978.9e12}};
  d.hbm_bytes = 80e9;
  d.hbm_Bps = 3.35e12;
  d.gpus_per_server = 8;
  d.intra_server_Bps = 450e9;
  return d;
}

Device v100() {
  Device d;
  d.name = "v100";
  d.description = "NVIDIA V100 32GB SXM2 (NVLink2 300 GB/s bidirectional)";
  d.peak_flops = {{"fp64", 7.8e12}, {"fp32", 15.7e12}, {"fp16", 125e12}};
  d.hbm_bytes = 32e9;
  d.hbm_Bps = 900e9;
  d.gpus_per_server = 8;
  d.intra_server_Bps = 150e9;
  return d;
}

double positive_number(const json& j, const std::string& key, const std::string& where) {
  if (!j.contains(key)) throw BadInput("missing field", where + "." + key);
  const json& v = j.at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
    throw BadInput("expected a positive number", where + "." + key);
  return v.get<double>();
}

double quantity(const json& j, const std::string& key, Quantity q, const std::string& where) {
  if (!j.contains(key)) throw BadInput("missing field", where + "." + key);
  const json& v = j.at(key);
  if (!v.is_string())
    throw BadInput(std::string("expected a ") + quantity_name(q) + " with a unit, e.g. \"80GB\"",
                   where + "." + key);
  const double x = parse_quantity(q, v.get<std::string>(), where + "." + key);
  if (x <= 0) throw BadInput("must be positive", where + "." + key);
  return x;
}

}  // namespace

double Device::peak(const std::string& datatype, const std::string& where) const {
  const auto it = peak_flops.find(datatype);
  if (it == peak_flops.end())
    throw BadInput("device '" + name + "' has no peak FLOP/s for datatype '" + datatype + "'", where);
  return it->second;
}

double datatype_bytes(const std::string& datatype, const std::string& where) {
  if (datatype == "fp16" || datatype == "bf16") return 2;
  if (datatype == "fp32" || datatype == "tf32") return 4;
  if (datatype == "fp8" || datatype == "int8") return 1;
  if (datatype == "fp64") return 8;
  throw BadInput("unknown datatype '" + datatype + "' (fp8, fp16, bf16, tf32, fp32, fp64)", where);
}

std::vector<std::string> builtin_device_names() {
  return {"a100", "h100", "v100"};
}

Device builtin_device(const std::string& name) {
  if (name == "a100") return a100();
  if (name == "h100") return h100();
  if (name == "v100") return v100();
  throw BadInput("unknown device '" + name + "' (a100, h100, v100 or a .json device file)", "device " + name);
}

Device device_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw BadInput("expected a JSON object", where);
  static const char* known[] = {"name",         "description",   "peak_flops",      "efficiency",
                                "hbm_capacity", "hbm_bandwidth", "gpus_per_server", "intra_server_bandwidth"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find(std::begin(known), std::end(known), it.key()) == std::end(known))
      throw BadInput("unknown field", where + "." + it.key());
  Device d;
  if (!j.contains("name") || !j.at("name").is_string())
    throw BadInput("missing or non-string field", where + ".name");
  d.name = j.at("name").get<std::string>();
  if (j.contains("description")) {
    if (!j.at("description").is_string()) throw BadInput("expected a string", where + ".description");
    d.description = j.at("description").get<std::string>();
  }
  if (!j.contains("peak_flops") || !j.at("peak_flops").is_object() || j.at("peak_flops").empty())
    throw BadInput("expected an object datatype -> FLOP/s", where + ".peak_flops");
  for (auto it = j.at("peak_flops").begin(); it != j.at("peak_flops").end(); ++it) {
    datatype_bytes(it.key(), where + ".peak_flops." + it.key());
    d.peak_flops[it.key()] = positive_number(j.at("peak_flops"), it.key(), where + ".peak_flops");
  }
  d.efficiency = positive_number(j, "efficiency", where);
  if (d.efficiency > 1) throw BadInput("efficiency must be in (0, 1]", where + ".efficiency");
  d.hbm_bytes = quantity(j, "hbm_capacity", Quantity::Size, where);
  d.hbm_Bps = quantity(j, "hbm_bandwidth", Quantity::Bandwidth, where);
  const double g = positive_number(j, "gpus_per_server", where);
  if (g != std::floor(g)) throw BadInput("expected a whole number", where + ".gpus_per_server");
  d.gpus_per_server = static_cast<std::uint32_t>(g);
  d.intra_server_Bps = quantity(j, "intra_server_bandwidth", Quantity::Bandwidth, where);
  return d;
}

Device load_device_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw BadInput("cannot read device file", path);
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw BadInput(std::string("malformed JSON: ") + e.what(), path);
  }
  return device_from_json(j, path);
}

Device resolve_device(const std::string& name_or_path, const std::string& where) {
  for (const auto& n : builtin_device_names())
    if (n == name_or_path) return builtin_device(n);
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json"))
    return load_device_file(name_or_path);
  throw BadInput("unknown device '" + name_or_path + "' (a100, h100, v100 or a .json device file)", where);
}

json device_to_json(const Device& d) {
  json peaks = json::object();
  for (const auto& [k, v] : d.peak_flops) peaks[k] = v;
  return {{"name", d.name},
          {"description", d.description},
          {"peak_flops", peaks},
          {"efficiency", d.efficiency},
          {"hbm_capacity_bytes", d.hbm_bytes},
          {"hbm_bandwidth_Bps", d.hbm_Bps},
          {"gpus_per_server", d.gpus_per_server},
          {"intra_server_bandwidth_Bps", d.intra_server_Bps}};
}

}  // namespace toposweep
