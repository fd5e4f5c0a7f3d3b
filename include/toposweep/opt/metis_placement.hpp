#pragma once
// Topology-aware grouping with METIS (TAG's idea, docs/optimizers.md, placement): partition the
// bandwidth-weighted network into equal sets of well-connected servers, onto which tensor- or
// pipeline-parallel groups are mapped, and compare with rank order (servers 0..k-1, k..2k-1, ...).
#include <cstdint>
#include <string>
#include <vector>

#include "toposweep/topology/network.hpp"

namespace toposweep::opt {

struct NodeGrouping {
  std::vector<std::uint32_t> group_of_node;  // compute node -> group index
  double internal_bandwidth_Bps = 0;         // sum of arc bandwidth between servers of one group
  double rank_order_internal_bandwidth_Bps = 0;
  std::string method;  // "metis" or "rank_order" (when METIS was not better)
};

// Total bandwidth of arcs whose ends are compute nodes in the same group.
double internal_bandwidth(const Network& net, const std::vector<std::uint32_t>& group_of_node);

// `groups` equal sets of compute_count()/groups servers (BadInput if it does not divide). Direct
// links count; paths through switches do not (a switch joins everyone equally). The result is
// never worse than rank order: if METIS' partition is unbalanced or has no more internal
// bandwidth, rank order is returned. Rank order is `rank_order` when given (group of each
// compute node: e.g. the strided server sets of pipeline groups), else consecutive blocks.
NodeGrouping metis_node_groups(const Network& net, std::uint32_t groups, std::uint64_t seed = 1,
                               const std::vector<std::uint32_t>* rank_order = nullptr);

// Mixed servers: partition the servers `nodes` (a subset of the compute nodes) into `groups`
// equal sets with the most direct-link bandwidth inside, each set holding the same number of
// servers of every class (`class_of_node`, indexed by compute node; METIS with one balance
// constraint per class). Returns each node's set (parallel to `nodes`), or empty when METIS
// cannot balance them exactly or there are no direct links among them.
std::vector<std::uint32_t> metis_partition(const Network& net, const std::vector<std::uint32_t>& nodes,
                                           std::uint32_t groups,
                                           const std::vector<std::uint16_t>& class_of_node,
                                           std::uint64_t seed = 1);

// Order of servers that makes each METIS group contiguous: position_of_node for a Placement
// (see relabel_placement), so rank-order TP/PP groups land on well-connected servers.
std::vector<std::uint32_t> grouping_positions(const NodeGrouping& g, std::uint32_t groups);

}  // namespace toposweep::opt
