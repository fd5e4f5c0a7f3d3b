#pragma once
// From a communication task's GPU ranks to what the network sees: the compute nodes taking
// part (a group entirely inside one node never touches the network) and the time of purely
// intra-node communication.
#include <cstdint>
#include <span>
#include <vector>

#include "toposweep/collective/plan.hpp"
#include "toposweep/sim/network_model.hpp"
#include "toposweep/topology/network.hpp"
#include "toposweep/util/collective_op.hpp"
#include "toposweep/workload/task_graph.hpp"

namespace toposweep::sim {

struct GroupNodes {
  std::vector<VertexId> nodes;      // distinct nodes in order of first appearance among the ranks
  std::uint32_t gpus_per_node = 1;  // most members any one node holds
  std::uint32_t ranks = 0;
  // Instances of the same task whose groups use the first node too (CollectiveRequest::
  // instances_per_node); set by models that time one instance for all.
  std::uint32_t instances_per_node = 1;
  // One member per node (gpus_per_node 1) whose local GPU indices are not all equal: each node's
  // member's index on its node, parallel to `nodes` (CollectiveRequest::member_locals: which
  // pairs cross rails on a rail-only fabric). Empty otherwise (all on one local index: every pair
  // shares its rails).
  std::vector<std::uint32_t> locals;
};

GroupNodes group_nodes(std::span<const std::uint32_t> ranks, const Placement& placement);
// The same into `g`, reusing its storage and `count` (scratch), for loops over many groups.
void group_nodes_into(std::span<const std::uint32_t> ranks, const Placement& placement, GroupNodes& g,
                      std::vector<std::uint32_t>& count);
// A shape's signature into `sig`: the group's nodes, its GPUs per node, ranks and `sharing`
// (instances per node), then its locals and a marker when it has any. Groups with equal
// signatures take equal times on one network.
void shape_signature_into(const GroupNodes& g, std::uint32_t sharing, std::vector<std::uint32_t>& sig);
// How many groups of `gs` have a member on the node of the first group's first rank: the
// instances that share that node's network links when the whole set runs at once.
std::uint32_t instances_on_first_node(const GroupSet& gs, const Placement& placement);

// A transfer set's timing inputs, shared by the analytical model and the communication layout so
// both sample and count alike: the groups whose shapes are timed (at most 64, evenly strided;
// the slowest of them stands for the set) and, per compute node, how many of the set's transfers
// leave it (`out`) and enter it (`in`); transfers inside one node count nowhere. RuntimeFailure
// when a group is not {src, dst}.
std::vector<std::size_t> sampled_transfer_groups(const GroupSet& gs);
void count_transfer_endpoints(const GroupSet& gs, const Placement& placement, std::vector<std::uint32_t>& out,
                              std::vector<std::uint32_t>& in);

// A collective among `ranks` GPUs of one node over its internal fabric: a ring moving
// busbw_factor(op, ranks) x bytes through each GPU at the fabric's achievable bandwidth, plus
// NCCL's latency (once, and per ring step); 0 s for one rank. Throws RuntimeFailure when the node
// has no intra-node bandwidth but must use it.
double intra_node_collective_time(CollectiveOp op, std::uint32_t ranks, double bytes, const LinkClass& intra);
// A point-to-point transfer between GPUs of one node: one step's latency plus the bytes.
double intra_node_transfer_time(double bytes, const LinkClass& intra);

// The collective of task `t` among the nodes of `g` (rooted at its first node) and the planning
// options the settings ask for, as both network models hand them to plan_collective.
CollectiveRequest node_collective_request(const Task& t, const GroupNodes& g);
CollectiveOptions collective_plan_options(const CommSettings& settings, bool with_flows);

}  // namespace toposweep::sim
