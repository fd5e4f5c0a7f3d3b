#include "toposweep/topology/config_keys.hpp"

namespace toposweep::topology {

std::vector<KeySpec> config_keys() {
  return {
      {"topology.kind", "switch", "switch, fattree, topoopt, multidim, torus, expander or file"},
      {"topology.servers", "16", "number of servers (compute nodes)"},
      {"topology.degree", "4", "ports per server"},
      {"topology.link_bandwidth", "100Gbps", "bandwidth of one port / link"},
      {"topology.link_latency", "1us", "latency of one link"},
      {"topology.strides", "", "topoopt: explicit ring strides, e.g. 1,5,11 (default: TotientPerms)"},
      {"topology.oversubscription", "1", "fattree: oversubscription ratio at the leaves"},
      {"topology.dims", "", "multidim: dimensions as type:size, e.g. ring:4,fc:8,switch:32"},
      {"topology.dim_bandwidth", "", "multidim: per-NPU bandwidth of each dimension, e.g. 200GB/s,100GB/s"},
      {"topology.dim_latency", "", "multidim: latency of each dimension, e.g. 500ns,1us"},
      {"topology.file", "", "file: path of an edge-list topology"},
      {"topology.seed", "1", "expander: random seed"},
      {"server.gpus", "4", "GPUs per server"},
      {"server.intra_bandwidth", "300GB/s", "GPU-to-GPU bandwidth inside a server"},
      {"costs.table", "", "price table file (INI); default: the built-in LIBRA table"},
  };
}

}  // namespace toposweep::topology
