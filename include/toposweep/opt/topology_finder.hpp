#pragma once
// TopoOpt's TopologyFinder (NSDI'23 §4, docs/optimizers.md): from one iteration's traffic, a
// direct-connect topology of n servers with d ports of B each. The ports are split between
// AllReduce rings and model-parallel (MP) links in proportion to the two volumes (at least one
// bidirectional ring, so the graph stays connected); rings come from TotientPerms for the
// dominant AllReduce group size; MP ports are filled by repeated maximum-weight matching on the
// MP demand, a pair's weight divided by (links + 1) after each link it gets.
//
// TotientPerms needs each AllReduce group to sit at stride n/g. When the groups are, say,
// contiguous blocks, the finder renumbers the servers (server j -> network vertex
// position_of_node[j]) so that they do; callers move their placement with relabel_placement.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "toposweep/topology/families.hpp"
#include "toposweep/topology/network.hpp"
#include "toposweep/workload/task_graph.hpp"
#include "toposweep/workload/traffic.hpp"

namespace toposweep::opt {

struct FinderSettings {
  std::uint32_t degree = 4;
  double link_bandwidth_Bps = 0;
  double link_latency_s = 0;
  topology::ServerSpec server;
  bool relabel = true;  // renumber servers so AllReduce groups become strided
  bool operator==(const FinderSettings&) const = default;
};

struct TopologyDesign {
  Network network;
  std::vector<std::uint32_t> strides;                             // bidirectional ring strides (<= n/2)
  std::vector<std::pair<std::uint32_t, std::uint32_t>> mp_links;  // network vertices, one port each end
  std::uint32_t ring_ports = 0;
  std::uint32_t mp_ports = 0;                   // ports per server set aside for MP links
  std::uint32_t ring_group = 0;                 // g given to TotientPerms
  std::vector<std::uint32_t> position_of_node;  // demand node -> network vertex
  double allreduce_volume_bytes = 0;            // bytes all servers send for AllReduce (ring algorithm)
  double mp_volume_bytes = 0;
};

// Ring ports for a degree split: round(d * V_ar / (V_ar + V_mp)) made even and kept in
// [2, d] (all of d rounded down to even when there is no MP traffic).
std::uint32_t ring_ports_for(std::uint32_t degree, double allreduce_volume, double mp_volume);

// Repeated maximum-weight matching: up to `rounds` links per server, over the symmetric demand
// w(u,v) = bytes(u->v) + bytes(v->u), divided by (links(u,v) + 1) as links are placed. Pairs
// already joined by the rings are not excluded (a link adds capacity).
std::vector<std::pair<std::uint32_t, std::uint32_t>> match_mp_links(std::uint32_t nodes,
                                                                    const std::vector<NodeDemand>& demand,
                                                                    std::uint32_t rounds);

// Throws BadInput when d < 2, d >= n, or B <= 0.
TopologyDesign find_topology(const TrafficDemand& demand, const FinderSettings& settings);

// node_of_gpu[r] -> position_of_node[node_of_gpu[r]].
Placement relabel_placement(const Placement& placement, const std::vector<std::uint32_t>& position_of_node);

}  // namespace toposweep::opt
