#include "toposweep/workload/devices.hpp"

#include <algorithm>
#include <numeric>

#include "toposweep/util/error.hpp"
#include "toposweep/util/runs.hpp"

namespace toposweep {
namespace {
const std::string kKey = "key server.device";
}

bool mixed_devices(const std::string& device_text) {
  if (!has_run_counts(device_text)) return false;
  return distinct_run_values(parse_runs(device_text, kKey)).size() > 1;
}

std::vector<std::uint16_t> server_device_kinds(const std::string& device_text, std::uint32_t servers) {
  const auto runs = parse_runs(device_text, kKey);
  const auto distinct = distinct_run_values(runs);
  std::vector<std::uint16_t> kinds;
  kinds.reserve(servers);
  for (const auto& name : expand_runs(runs, servers, kKey))
    kinds.push_back(
        static_cast<std::uint16_t>(std::find(distinct.begin(), distinct.end(), name) - distinct.begin()));
  return kinds;
}

ServerDevices server_devices(const std::string& device_text, std::uint32_t servers,
                             const std::function<Device(const std::string&)>& resolve) {
  ServerDevices d;
  d.kind_of_server = server_device_kinds(device_text, servers);
  for (const auto& name : distinct_run_values(parse_runs(device_text, kKey)))
    d.kinds.push_back(resolve(name));
  return d;
}

Workload make_workload(const WorkloadSpec& spec, Model model, const ServerDevices& devices,
                       std::span<const std::uint32_t> gpus_of_server) {
  const std::uint32_t gpus = std::accumulate(gpus_of_server.begin(), gpus_of_server.end(), 0u);
  if (devices.kinds.size() == 1) return make_workload(spec, gpus, std::move(model), devices.kinds[0]);
  if (devices.kind_of_server.size() != gpus_of_server.size())
    throw BadInput("server.device lists " + std::to_string(devices.kind_of_server.size()) +
                       " servers but the topology has " + std::to_string(gpus_of_server.size()),
                   kKey);
  // The per-operator model when every kind has one (and no server.efficiency overrides it): the
  // reference device's per-operator times, scaled per stage by the kinds' sustained GEMM rates.
  // Otherwise every layer at FLOPs / (peak x efficiency) of its device.
  const bool per_operator =
      !(spec.efficiency > 0) && std::all_of(devices.kinds.begin(), devices.kinds.end(),
                                            [](const Device& d) { return d.per_operator(); });
  std::vector<double> rate(devices.kinds.size());
  for (std::size_t k = 0; k < devices.kinds.size(); ++k) {
    const Device& d = devices.kinds[k];
    // fp8: the weight GEMMs' fp8 rate (workload.hpp) compares the kinds.
    const bool fp8_gemms = spec.datatype == "fp8" && d.fp8_gemm_efficiency > 0;
    const double eff = spec.efficiency > 0 ? spec.efficiency
                       : per_operator      ? (fp8_gemms ? d.fp8_gemm_efficiency : d.gemm_efficiency)
                                           : d.efficiency;
    rate[k] = d.peak(spec.datatype, "key model.datatype (device " + d.name + ")") * eff;
  }
  const auto ref = static_cast<std::size_t>(std::max_element(rate.begin(), rate.end()) - rate.begin());
  Workload w = make_workload(spec, gpus, std::move(model), devices.kinds[ref]);
  // Unset model.fused_attention: fused attention only where every kind's stack runs it (a cluster
  // with A100 or V100 servers keeps the score kernels).
  if (!spec.fused_attention)
    w.fused_attention = std::all_of(devices.kinds.begin(), devices.kinds.end(),
                                    [](const Device& d) { return d.fused_attention_default; });
  w.per_operator = per_operator;
  if (!per_operator) w.flops_per_s = rate[ref];
  w.reference_rate = rate[ref];
  w.kinds = devices.kinds;
  w.kind_flops_per_s = rate;
  w.rank_kind.reserve(gpus);
  for (std::size_t s = 0; s < gpus_of_server.size(); ++s)
    w.rank_kind.insert(w.rank_kind.end(), gpus_of_server[s], devices.kind_of_server[s]);
  return w;
}

}  // namespace toposweep
