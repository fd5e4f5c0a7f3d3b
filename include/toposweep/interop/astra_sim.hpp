#pragma once
// ASTRA-sim inputs for one design point (docs/interop.md, "ASTRA-sim"): the analytical network
// (network.yml), the system layer (system.json), the remote memory (none) and the workload as
// Chakra traces with their communicator groups, so that ASTRA-sim's analytical backend runs the
// iteration toposweep simulated.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "toposweep/interop/chakra.hpp"
#include "toposweep/topology/network.hpp"
#include "toposweep/workload/iteration.hpp"

namespace toposweep::interop {

// One dimension of ASTRA-sim's analytical network and the collective implementation that
// matches what toposweep runs on it.
struct AstraSimDim {
  std::string topology;        // Ring, FullyConnected, Switch
  std::uint32_t npus = 0;      // npus_count
  double bandwidth_GBps = 0;   // per link, ASTRA-sim's GB = 2^30 B
  double latency_ns = 0;       // per hop (a Switch message takes two)
  std::string implementation;  // ring, direct, halvingDoubling
};

// The design point's network and collective settings, as far as the mapping needs them.
struct AstraSimInput {
  TopologyInfo topology;              // the built network's info()
  std::uint32_t gpus_per_server = 1;  // server.gpus
  std::uint32_t servers = 0;          // compute nodes of the network
  std::string algorithm = "auto";     // collective.algorithm
  std::uint32_t chunks = 1;           // collective.chunks
  double endpoint_delay_s = 0;        // collective.endpoint_delay
  double reduction_Bps = 0;           // collective.reduction_bandwidth (0: free)
};

// The analytical network the point maps to: a multidim network dimension by dimension (ring:
// per-NPU bandwidth on the ring's links, fc: split over the n-1 peers, switch: half the crossing
// latency per hop), a `switch` network of one-GPU servers as one Switch dimension running rings.
// BadInput naming the key (topology.kind, server.gpus, collective.algorithm) for anything else.
std::vector<AstraSimDim> astra_sim_network(const AstraSimInput& in);

// network.yml's text (topology, npus_count, bandwidth, latency lists).
std::string astra_sim_network_yaml(const std::vector<AstraSimDim>& dims);

// system.json's text: the implementations per dimension and the system costs
// (preferred-dataset-splits = chunks, endpoint-delay in ns, local-mem-bw in decimal GB/s).
std::string astra_sim_system_json(const std::vector<AstraSimDim>& dims, const AstraSimInput& in);

struct AstraSimExport {
  std::vector<AstraSimDim> dims;
  std::filesystem::path network, system, remote_memory, readme;
  std::filesystem::path workload;  // the traces' prefix path, DIR/workload/<prefix>
  ChakraExport chakra;
  // The command line that runs it, with the binary as $ASTRA_SIM.
  std::string command;
};

// Writes DIR/network.yml, DIR/system.json, DIR/remote_memory.json, DIR/workload/ (Chakra traces
// and comm groups, write_chakra) and DIR/README.md. Maps the network before writing anything.
AstraSimExport write_astra_sim(const IterationPlan& plan, const AstraSimInput& in,
                               const std::filesystem::path& dir, const std::string& prefix = "toposweep");

}  // namespace toposweep::interop
