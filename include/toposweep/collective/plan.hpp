#pragma once
// Collective algorithms turn (op, members, bytes, topology) into a plan: the alpha-beta time of
// the collective on an otherwise idle network, and the flows a flow-level simulator can play.
// Contract between the collective module (which implements it) and the simulator.
#include <cstdint>
#include <string>
#include <vector>

#include "toposweep/topology/network.hpp"
#include "toposweep/util/collective_op.hpp"

namespace toposweep {

struct CollectiveRequest {
  CollectiveOp op = CollectiveOp::AllReduce;
  // Distinct compute nodes taking part. Each contributes `gpus_per_node` GPUs of the group,
  // joined inside the node by Network::intra_bandwidth_Bps (a two-level collective when > 1).
  std::vector<VertexId> nodes;
  std::uint32_t gpus_per_node = 1;
  // Servers of different sizes: members per node, parallel to `nodes` (gpus_per_node is then the
  // largest); the intra-node part takes the slowest node. Empty: every node has gpus_per_node.
  std::vector<std::uint32_t> node_gpus;
  double bytes = 0;   // per-rank buffer, nccl-tests convention (docs/collectives.md)
  VertexId root = 0;  // Broadcast / Reduce
  // Identical instances of this collective running at the same time from each member node (the
  // other GPUs of the node in their own groups, e.g. the data-parallel groups of each TP rank):
  // they share the node's network links, so the network part carries this many times the bytes.
  std::uint32_t instances_per_node = 1;
  // One GPU per member node (gpus_per_node 1): each member's GPU index on its node, parallel to
  // `nodes`. On a rail-only fabric the network bytes between members that share no rail relay
  // through a GPU of the server over its fabric (topology/rail_relay.hpp), charged as an
  // intra-node part. Empty: the members are rail-aligned (nothing relays).
  std::vector<std::uint32_t> member_locals;
  // AllToAll of MoE tokens sent once per destination node (util/alltoall_dedup.hpp): the
  // network part carries dedup_network_fraction of the bytes; the part inside the nodes is as is.
  TokenDedup dedup;
};

// A flow moves `bytes` along `path` (arc ids). Flows of stage k start when every flow of
// stage k-1 has finished; flows within a stage run concurrently. Emitters keep the number of
// flows small by giving each pipelined phase one bandwidth-equivalent flow per arc.
struct Flow {
  std::vector<ArcId> path;
  double bytes = 0;
  std::uint32_t stage = 0;
};

struct CollectivePlan {
  std::string algorithm;  // the algorithm actually used ("ring", "multiring", "hierarchical", ...)
  double time_s = 0;      // alpha-beta time on an idle network
  double latency_s = 0;   // the alpha part of time_s (the flow model adds it to flow time)
  std::uint32_t stages = 0;
  std::vector<Flow> flows;  // empty when the caller asked for time only
  std::string model;        // e.g. "pipelined" / "sequential" for hierarchical, else ""
  // Two-level collectives (gpus_per_node > 1): the part of time_s spent inside nodes on
  // Network::intra_link(). Flows cannot express it (intra-node links are not arcs), so a
  // flow model adds it to the time it plays; 0 for single-GPU nodes.
  double intra_node_time_s = 0;
  // forest only: trees in the built packing, the exact cut bound (docs/collectives.md, "forest") and the
  // time of the built schedule (>= optimal_time_s; equal when the packing attains the bound).
  std::uint32_t trees = 0;
  double optimal_time_s = 0;
  double built_time_s = 0;
  // forest only: the bottleneck cut of the last phase as an exact rational, x* =
  // cut_bandwidth_Bps / cut_weight (bandwidth leaving the critical set over the members in it).
  double cut_bandwidth_Bps = 0;
  std::uint64_t cut_weight = 0;
};

// How multi-hop transfers are routed (collective.routing; on networks with switches only).
enum class Routing : std::uint8_t {
  // The default: Ecmp on the Clos families (info().kind fattree or switch), Shortest on every
  // other network (edge-list files, whose switches are not known to hash: an NVLink graph with a
  // PCIe switch routes as NCCL does, on its first shortest path).
  Auto,
  // The first shortest path found (lowest arc ids): every transfer of a pod goes through the same
  // aggregation and core switch.
  Shortest,
  // ECMP as a Clos fabric hashes flows: the time takes the expected load, each transfer split
  // evenly over the equal-cost next hops at every hop (RouteCache::ecmp_split; per-packet
  // spraying gives it exactly); the flows a flow model plays take one hashed path each
  // (RouteCache::hashed_path), so hash collisions show there as congestion.
  Ecmp,
  // Adaptive: each transfer takes the equal-cost path whose next arc is least busy so far in
  // its phase (RouteCache::spread_path), in the time and the flows alike.
  Spread,
};

struct CollectiveOptions {
  bool with_flows = false;             // build flows (flow network model) or only the time
  bool hierarchical_pipelined = true;  // multidim: max over dimensions (true) or sum (false)
  // Networks with switches: how multi-hop transfers are routed (collective.routing, default auto).
  // Networks without switches keep the first shortest path (their families route by it).
  Routing switch_routing = Routing::Auto;
  // forest: greedy tree packing only (collective.forest = greedy) instead of the exact one.
  bool greedy_forest = false;
  // ASTRA-sim's system costs (docs/collectives.md, "ASTRA-sim-compatible costs"); the defaults
  // switch them off. `chunks`: the collective runs in that many chunks, one chunk per dimension
  // at a time, each paying every step's latency; `endpoint_delay_s`: per message (step);
  // `reduction_Bps`: local memory bandwidth of reductions, a reduce step moving 3x its message
  // (0: reductions are free).
  std::uint32_t chunks = 1;
  double endpoint_delay_s = 0;
  double reduction_Bps = 0;
  bool system_costs() const { return chunks > 1 || endpoint_delay_s > 0 || reduction_Bps > 0; }
};

// `algorithm`: one of collective_algorithm_names() (below), "auto" being, for AllToAll,
// hierarchical on multidim sub-grids and direct otherwise; for the other ops multiring on
// topoopt, hierarchical on multidim, ring otherwise.
// Throws BadInput when the algorithm does not apply or members are unreachable.
CollectivePlan plan_collective(const Network& net, const CollectiveRequest& request,
                               const std::string& algorithm, const CollectiveOptions& options = {});
// The same on memo.network(), reusing what `memo` keeps from earlier calls (collective/memo.hpp):
// the same plan, bit for bit.
class CollectiveMemo;
CollectivePlan plan_collective(const CollectiveRequest& request, const std::string& algorithm,
                               const CollectiveOptions& options, CollectiveMemo& memo);

// The algorithm names plan_collective accepts, for help texts and validation.
const std::vector<std::string>& collective_algorithm_names();
// "name: what it does; ..." for help texts.
std::string collective_algorithm_help();

}  // namespace toposweep
