#pragma once
// Mixed servers (server.device = a100*4,v100-pcie*4): which device each server holds, resolved
// once, and the workload on them. A workload on several device kinds keeps `device` as its
// reference (the fastest kind for the datatype: every compute time is that device's times a
// stage's slowdown factor, workload/hetero.hpp) and times every layer by FLOPs / (peak x
// efficiency) of the device it runs on (the per-operator model is calibrated per device and is
// used with one kind only).
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "toposweep/workload/device.hpp"
#include "toposweep/workload/model.hpp"
#include "toposweep/workload/spec.hpp"
#include "toposweep/workload/workload.hpp"

namespace toposweep {

struct ServerDevices {
  std::vector<Device> kinds;                  // distinct devices, in order of first appearance
  std::vector<std::uint16_t> kind_of_server;  // per server (server 0 first)
};

// More than one distinct device in a server.device run list.
bool mixed_devices(const std::string& device_text);
// Each server's device as an index into the list's distinct names (first appearance order):
// which servers hold the same device, without reading any device file.
std::vector<std::uint16_t> server_device_kinds(const std::string& device_text, std::uint32_t servers);
// server.device as runs over `servers` servers (a lone name covers all); resolve(name) is called
// once per distinct name. BadInput naming key server.device on a bad list or a wrong sum.
ServerDevices server_devices(const std::string& device_text, std::uint32_t servers,
                             const std::function<Device(const std::string&)>& resolve);

// The workload on servers holding gpus_of_server[i] GPUs of device kinds[kind_of_server[i]]
// (GPU ranks fill servers in order). One kind: exactly make_workload(spec, gpus, model, kind).
Workload make_workload(const WorkloadSpec& spec, Model model, const ServerDevices& devices,
                       std::span<const std::uint32_t> gpus_of_server);

}  // namespace toposweep
