#pragma once
// From a communication task's GPU ranks to what the network sees: the compute nodes taking
// part (a group entirely inside one node never touches the network), the time of purely
// intra-node communication, and hop-count shortest paths for point-to-point transfers.
#include <cstdint>
#include <span>
#include <vector>

#include "toposweep/topology/network.hpp"
#include "toposweep/util/collective_op.hpp"
#include "toposweep/workload/task_graph.hpp"

namespace toposweep::sim {

struct GroupNodes {
  std::vector<VertexId> nodes;    // distinct nodes in order of first appearance among the ranks
  std::uint32_t gpus_per_node = 1;  // most members any one node holds
  std::uint32_t ranks = 0;
};

GroupNodes group_nodes(std::span<const std::uint32_t> ranks, const Placement& placement);

// A collective among `ranks` GPUs of one node over its internal fabric: ring-style, moving
// busbw_factor(op, ranks) x bytes through each GPU at `intra_Bps` (0 s for one rank). Throws
// RuntimeFailure when the node has no intra-node bandwidth but must use it.
double intra_node_collective_time(CollectiveOp op, std::uint32_t ranks, double bytes, double intra_Bps);
double intra_node_transfer_time(double bytes, double intra_Bps);

// Hop-count shortest paths, one BFS tree per source, built on first use. Ties go to the
// lowest arc id, so paths are deterministic.
class Router {
 public:
  explicit Router(const Network& net) : net_(&net), parent_(net.vertex_count()) {}
  // Arcs from src to dst (empty when src == dst). Throws BadInput when dst is unreachable.
  std::vector<ArcId> path(VertexId src, VertexId dst);

 private:
  const Network* net_;
  std::vector<std::vector<ArcId>> parent_;  // parent_[src][v]: arc entering v on the BFS tree
};

// Time of a point-to-point transfer alone on `path`: summed latency + bytes / narrowest arc.
double path_transfer_time(const Network& net, std::span<const ArcId> path, double bytes);

}  // namespace toposweep::sim
