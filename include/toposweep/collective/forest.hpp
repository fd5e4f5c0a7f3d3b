#pragma once
// Topology-adaptive collectives (DOMAIN.md section 2.3): the exact optimal AllGather /
// ReduceScatter time on any directed network with heterogeneous links and relay vertices, and a
// packing of spanning arborescences (one broadcast tree set per member) that realises it.
//
// Sources u carry weight w_u (units of data, AllGather: 1 per member; Broadcast: 1 at the root),
// every member must receive every unit. The best rate per unit is
//     x* = min over S of B+(S) / w(S),
// S ranging over vertex sets holding some weight and missing at least one member, B+(S) the
// bandwidth leaving S; the optimal time for units of D bytes is D / x*.
#include <cstdint>
#include <optional>
#include <vector>

#include "toposweep/collective/plan.hpp"
#include "toposweep/topology/network.hpp"
#include "toposweep/util/collective_op.hpp"

namespace toposweep {

// A directed graph for the forest computations (a Network's arcs, possibly reversed).
struct ArcGraph {
  std::uint32_t vertex_count = 0;
  std::vector<Arc> arcs;
};

ArcGraph arc_graph(const Network& net, bool reversed = false);

struct ForestOptimum {
  // x* = bandwidth_Bps / weight exactly: the bandwidth leaving the critical set (a sum of link
  // bandwidths) over the weight inside it (an integer).
  double bandwidth_Bps = 0;
  std::uint64_t weight = 0;
  double rate_Bps() const { return weight ? bandwidth_Bps / static_cast<double>(weight) : 0; }
  std::vector<VertexId> critical_set;  // a set S attaining the minimum
  std::uint32_t max_flow_calls = 0;
};

// Exact x* by parametric search: each round runs one max-flow per receiver (super source with
// arcs of capacity lambda * w_u into every source u, links at their bandwidth; feasible iff every
// receiver gets lambda * W); an infeasible round's minimum cut is a set with a smaller ratio,
// which becomes the next lambda (Dinkelbach), so the search ends on a cut's exact ratio.
// Throws BadInput when some receiver cannot be reached from a source.
ForestOptimum forest_optimum(const ArcGraph& g, const std::vector<std::uint32_t>& weight,
                             const std::vector<VertexId>& receivers);

struct Arborescence {
  VertexId root = 0;
  std::vector<ArcId> arcs;  // each non-root vertex of the tree entered by exactly one arc
  double bytes = 0;         // data this tree carries
};

struct ForestPacking {
  std::vector<Arborescence> trees;
  std::uint32_t trees_per_unit = 0;  // k: each unit of weight split over k trees
  double time_s = 0;                 // max over arcs of carried bytes / bandwidth
  bool complete = false;             // every source got k * w_u trees: time_s equals the optimum
};

// Greedy packing at the optimum: arc e may carry floor(k * b_e / x*) trees; trees are grown
// widest-residual-first (ties: nearer the root), pruned to the receivers; the best of a few k.
// `unit_bytes` is the data of one unit of weight.
ForestPacking pack_forest(const ArcGraph& g, const std::vector<std::uint32_t>& weight,
                          const std::vector<VertexId>& receivers, const ForestOptimum& opt,
                          double unit_bytes);

// Exact packing with capacities floor(k b_e / x*), which a complete packing of k w_u trees per
// source uses in exactly the optimal time. Relays (vertices that are not receivers, e.g.
// switches) are first removed by splitting off arc pairs u->z, z->w into u->w while the cut
// condition holds (complete splitting exists when each relay's in- and out-capacity are equal:
// Frank's theorem for rooted connectivity); then Edmonds' branching theorem (arc-disjoint
// spanning arborescences with root sets R_i exist iff every nonempty S has in-degree >=
// #{i : R_i misses S}) grows the trees one arc at a time, keeping an arc only if the condition
// still holds (Lovasz's proof). Split arcs expand back into their paths. nullopt when rounding
// to whole trees violates the condition for this k, or a relay is not Eulerian. Costs about
// trees x vertices^2 max-flows: meant for small networks.
std::optional<ForestPacking> pack_forest_exact(const ArcGraph& g, const std::vector<std::uint32_t>& weight,
                                               const std::vector<VertexId>& receivers,
                                               const ForestOptimum& opt, double unit_bytes, std::uint32_t k);

struct ForestSchedule {
  double optimal_time_s = 0;   // bandwidth time of the exact optimum (all phases)
  double built_time_s = 0;     // bandwidth time of the built packing (all phases)
  ForestOptimum last_optimum;  // the last phase's exact optimum (its critical cut)
  double latency_s = 0;        // deepest tree's path latency, per phase
  std::uint32_t trees = 0;     // trees of the last phase's packing
  std::uint32_t stages = 0;
  std::vector<Flow> flows;  // one flow per arc per phase
};

// AllGather, ReduceScatter (AllGather on the reversed network, trees reversed), AllReduce
// (ReduceScatter then AllGather), Broadcast / Reduce (one source). AllToAll does not apply.
ForestSchedule forest_schedule(const Network& net, CollectiveOp op, const std::vector<VertexId>& members,
                               double bytes, VertexId root, bool with_flows);

}  // namespace toposweep
