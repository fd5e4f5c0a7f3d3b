#pragma once
// TopoOpt's multi-ring AllReduce (docs/collectives.md, "multiring"): a ring collective may run over any
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
  // No stride serves the group: the rings' consecutive members are not all neighbours, so their
  // transfers are routed over multi-hop paths, spread over equal-cost ones (Routing::Spread).
  bool routed = false;
};

// Directed rings over `members` formed by the strides in net.info().strides (each stride s gives
// the ring x -> x+s mod n and its reverse), keeping only strides whose cycle through the first
// member is exactly the member set and whose arcs exist. `strides_out`, if given, receives the
// serving strides.
std::vector<std::vector<VertexId>> serving_stride_rings(const Network& net,
                                                        const std::vector<VertexId>& members,
                                                        std::vector<std::uint32_t>* strides_out = nullptr);

// For every distinct stride link (s and n-s once), the members sorted by their position on the
// walk x -> x+s (mod n) from members[0] (cosets in turn when gcd(s, n) > 1). `strides_out`, if
// given, receives the stride of each order.
std::vector<std::vector<VertexId>> stride_walk_orders(const Network& net,
                                                      const std::vector<VertexId>& members,
                                                      std::vector<std::uint32_t>* strides_out = nullptr);

// The rings with shares proportional to each ring's bottleneck bandwidth (equal shares when all
// ports have one bandwidth). When no stride serves the group (a job's sub-group of the servers),
// the cheapest of these ring sets, routed on the network's links with loads summed per arc:
// the members' order (one way, both ways), each stride's walk order both ways, the walk orders
// of the first 2, 3, ... strides together; equal shares. So the result is never slower than the plain ring
// over the members. Throws BadInput when the network has no ring strides.
MultiRing multiring(const Network& net, RouteCache& routes, const std::vector<VertexId>& members);

}  // namespace toposweep
