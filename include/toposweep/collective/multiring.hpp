#pragma once
// TopoOpt's multi-ring AllReduce (DOMAIN.md section 2.1): a ring collective may run over any
// permutation of its members, so on a topoopt network every ring stride whose cycle visits
// exactly the group's members carries its own ring, in both directions (a bidirectional stride
// link is two directed rings on their own ports), and the data is split across them.
#include <cstdint>
#include <vector>

#include "toposweep/collective/routing.hpp"
#include "toposweep/topology/network.hpp"

namespace toposweep {

struct MultiRing {
  std::vector<std::vector<VertexId>> rings;  // directed rings, members in ring order
  std::vector<double> shares;                // fraction of the data per ring, sums to 1
  std::vector<std::uint32_t> strides;        // the strides that serve the group (s and n-s once)
};

// Directed rings over `members` formed by the strides in net.info().strides (each stride s gives
// the ring x -> x+s mod n and its reverse), keeping only strides whose cycle through the first
// member is exactly the member set and whose arcs exist. `strides_out`, if given, receives the
// serving strides.
std::vector<std::vector<VertexId>> serving_stride_rings(const Network& net,
                                                        const std::vector<VertexId>& members,
                                                        std::vector<std::uint32_t>* strides_out = nullptr);

// The rings with shares proportional to each ring's bottleneck bandwidth (equal shares when all
// ports have one bandwidth). Throws BadInput when the network is not topoopt or no stride forms
// a ring over the group.
MultiRing multiring(const Network& net, RouteCache& routes, const std::vector<VertexId>& members);

}  // namespace toposweep
