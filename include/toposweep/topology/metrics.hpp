#pragma once
// Structural metrics of a Network: hop counts between compute nodes (switches relay),
// bisection bandwidth, connectivity, ports and egress bandwidth.
#include <cstdint>
#include <string>
#include <vector>

#include "toposweep/topology/network.hpp"

namespace toposweep::topology {

// Hop counts over ordered pairs of distinct compute nodes (a hop is one arc, so two servers on
// one switch are 2 hops apart). Exact: bit-parallel BFS, 64 sources per sweep, or one BFS when
// info().vertex_transitive.
struct HopStats {
  std::uint32_t diameter = 0;  // over reachable pairs
  double mean_hops = 0;        // over reachable pairs
  std::uint64_t unreachable_pairs = 0;
  bool connected() const { return unreachable_pairs == 0; }
};
HopStats hop_stats(const Network& network);

// Every compute node reaches every other (directed).
bool is_connected(const Network& network);
// BadInput naming `where` when the network is not connected.
void require_connected(const Network& network, const std::string& where);

// Minimum over balanced splits of the compute nodes (sizes floor(C/2) and ceil(C/2), switches
// on either side) of the bandwidth leaving one side, whichever side is smaller: B/s, one direction.
// method "closed_form": the family's formula; "exact": enumeration (<= 20 compute nodes and no
// switches, or <= 18 vertices); "metis_estimate": METIS bisection of the bandwidth-weighted
// graph, an upper bound.
struct Bisection {
  double bandwidth_Bps = 0;
  std::string method;
};
Bisection bisection_bandwidth(const Network& network);

struct PortStats {
  std::uint32_t min_ports = 0, max_ports = 0;     // physical ports per compute node (see docs)
  double min_egress_Bps = 0, max_egress_Bps = 0;  // sum of a compute node's out-arc bandwidth
  std::uint64_t total_ports = 0;                  // compute + switch ports
};
PortStats port_stats(const Network& network);
// Each vertex's switch level: 0 for compute nodes, else hops to the nearest compute node (1: a
// leaf, rail switch or router; 2: a spine or aggregation switch; 3: a core). Unreached: max.
std::vector<std::uint32_t> switch_levels(const Network& network);
// Physical ports behind one arc: bandwidth / info().link_bandwidth_Bps rounded (merged parallel
// links), 1 when the family has no uniform link bandwidth.
std::uint32_t arc_ports(const Network& network, const Arc& arc);

}  // namespace toposweep::topology
