#pragma once
// The workload of a design point on a given network: server.device laid over the network's
// servers (mixed servers, workload/devices.hpp), the GPU count the network's. The optimizers
// and the point evaluator build workloads through here.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "toposweep/topology/network.hpp"
#include "toposweep/workload/devices.hpp"
#include "toposweep/workload/spec.hpp"

namespace toposweep::opt {

// The device kind of every server of a mixed workload (empty when it has one device).
std::vector<std::uint16_t> device_of_servers(const Workload& w, const Network& net);

// BadInput naming key server.device when its run list counts other than the network's servers.
void check_device_servers(const WorkloadSpec& spec, const Network& net);

// Model and devices resolved by the callbacks (a cache), or from names and files when empty.
Workload workload_on(const WorkloadSpec& spec, const Network& net,
                     const std::function<Model(const std::string&)>& model = {},
                     const std::function<Device(const std::string&)>& device = {});

}  // namespace toposweep::opt
