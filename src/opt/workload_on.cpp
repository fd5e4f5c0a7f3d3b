#include "toposweep/opt/workload_on.hpp"

#include "toposweep/util/error.hpp"
#include "toposweep/workload/model_library.hpp"

namespace toposweep::opt {

std::vector<std::uint16_t> device_of_servers(const Workload& w, const Network& net) {
  std::vector<std::uint16_t> out;
  if (!w.mixed()) return out;
  for (VertexId v = 0; v < net.compute_count(); ++v) out.push_back(w.rank_kind[net.first_gpu(v)]);
  return out;
}

void check_device_servers(const WorkloadSpec& spec, const Network& net) {
  if (spec.device_servers != 0 && spec.device_servers != net.compute_count())
    throw BadInput("server.device counts " + std::to_string(spec.device_servers) +
                       " servers but the topology has " + std::to_string(net.compute_count()),
                   "key server.device");
}

Workload workload_on(const WorkloadSpec& spec, const Network& net,
                     const std::function<Model(const std::string&)>& model,
                     const std::function<Device(const std::string&)>& device) {
  check_device_servers(spec, net);
  const auto resolve = [&](const std::string& name) {
    return device ? device(name) : resolve_device(name, "key server.device");
  };
  Model m = model ? model(spec.model) : resolve_model(spec.model, "key model.name");
  if (!mixed_devices(spec.device))
    return make_workload(spec, net.gpu_count(), std::move(m), resolve(spec.device));
  const ServerDevices devices = server_devices(spec.device, net.compute_count(), resolve);
  const auto gpus = net.gpus_of_nodes();
  return make_workload(spec, std::move(m), devices, gpus);
}

}  // namespace toposweep::opt
