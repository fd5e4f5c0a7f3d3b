#include "toposweep/topology/config_keys.hpp"

namespace toposweep::topology {

std::vector<KeySpec> config_keys() {
  return {
      {"topology.kind", "switch", "switch, fattree, topoopt, multidim, torus, expander or file"},
      {"topology.servers", "16", "number of servers (compute nodes); multidim/torus: checked against dims when set"},
      {"topology.degree", "4", "ports per server (topoopt: 2 per bidirectional ring)"},
      {"topology.link_bandwidth", "100Gbps", "bandwidth of one port / link, each direction"},
      {"topology.link_latency", "1us", "latency of one link"},
      {"topology.strides", "", "topoopt: explicit ring strides, e.g. 1,5,11 (default: TotientPerms)"},
      {"topology.ring_group", "0", "topoopt TotientPerms: data-parallel group size g dividing servers (0 = servers)"},
      {"topology.rings", "0", "topoopt TotientPerms: bidirectional rings to pick (0 = degree/2)"},
      {"topology.extra_links", "", "topoopt: extra bidirectional links on leftover ports, e.g. 0-5,3-9"},
      {"topology.oversubscription", "1", "fattree: leaf down:up port ratio (1 = full bisection)"},
      {"topology.fattree_tiers", "3", "fattree: 2 (leaf-spine) or 3 (k-ary fat-tree)"},
      {"topology.fattree_radix", "0", "fattree: switch ports k, even (0 = smallest that fits)"},
      {"topology.dims", "", "multidim: type:size list, e.g. ring:4,fc:8,switch:32; torus: sizes, e.g. 8,8,8"},
      {"topology.dim_bandwidth", "", "multidim: per-NPU bandwidth of each dimension, e.g. 200GB/s,100GB/s (default: link_bandwidth)"},
      {"topology.dim_latency", "", "multidim: latency of each dimension, e.g. 500ns,1us (default: link_latency)"},
      {"topology.dim_levels", "", "multidim: cost level of each dimension, chiplet/package/node/pod (default: the top D levels)"},
      {"topology.optical", "auto", "direct-connect reconfiguration device priced per port: patch_panel, ocs, none (auto: patch_panel for topoopt/expander)"},
      {"topology.allow_disconnected", "false", "accept a disconnected topology instead of rejecting it"},
      {"topology.file", "", "file: path of an edge-list topology"},
      {"topology.seed", "1", "expander: random seed"},
      {"server.gpus", "4", "GPUs per server"},
      {"server.intra_bandwidth", "300GB/s", "GPU-to-GPU bandwidth inside a server"},
      {"costs.table", "", "price table file (INI, see inputs/costs/); default: the built-in LIBRA + component table"},
  };
}

}  // namespace toposweep::topology
