#pragma once
// Shortest-path sums in closed form on tree families (a fat-tree), without a search.
//
// Where every compute node hangs from one leaf switch by one (merged) link and every
// switch-to-switch link has the same bandwidth and latency, all shortest paths between two compute
// nodes carry the same sums: the first and last arcs are the nodes' own links and every arc between
// is a switch link. Only the hop count differs between pairs, and the family knows it: two nodes
// whose groups (TopologyInfo::tree_groups: leaf, then pod) first agree at level i are 2(i + 1)
// hops apart, 2(levels + 1) when none agrees. The analytical model times a pipeline's transfers
// from these sums (on 131,072 GPUs: 1,920 searches of ~120k instructions each, before).
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "toposweep/topology/network.hpp"

namespace toposweep {

// What the analytical model needs of a path: its hop count, the sum of its latencies (added in
// path order, from 0) and its narrowest bandwidth (+inf for an empty path).
struct PathSums {
  std::uint32_t hops = 0;
  double latency_s = 0;
  double narrowest_Bps = std::numeric_limits<double>::infinity();
};

class TreePaths {
 public:
  // The closed form of `net`, or nullopt where it does not hold (no tree_groups, a compute node
  // with other than one link up and one down to the same switch, unlike switch links, or leaf
  // groups that disagree with the links).
  static std::optional<TreePaths> of(const Network& net);

  // The sums of a shortest path between compute nodes src and dst.
  PathSums sums(VertexId src, VertexId dst) const;

 private:
  const Network* net_ = nullptr;
  double switch_bandwidth_Bps_ = 0, switch_latency_s_ = 0;
};

}  // namespace toposweep
