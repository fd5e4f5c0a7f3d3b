#pragma once
// Topology-adaptive collectives (docs/collectives.md, "forest"): the exact optimal AllGather /
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
// widest-residual-first (ties: nearer the root), pruned to the receivers; the best of k in
// {1, 2, 3, 4, 6, 8, 12, 16}. `unit_bytes` is the data of one unit of weight. Fast, but may fall
// short of the bound.
ForestPacking pack_forest(const ArcGraph& g, const std::vector<std::uint32_t>& weight,
                          const std::vector<VertexId>& receivers, const ForestOptimum& opt,
                          double unit_bytes);

struct ExactForestStats {
  std::uint64_t trees_per_unit = 0;  // k
  std::uint64_t distinct_trees = 0;
  std::uint64_t max_flows = 0;
  std::uint64_t work = 0;          // edges scanned by the max-flows (MaxFlow::scans)
  std::uint32_t relays_split = 0;  // relays removed by splitting off
  std::uint32_t relays_kept = 0;   // relays that send more than they take in, kept as tree vertices
};

// Exact packing at the optimum (ForestColl's construction). k trees per unit of weight, with k
// and integer capacities c_e = k b_e / x* chosen so that the critical cut is filled exactly (k = 1
// and real capacities when the bandwidths are not whole numbers of B/s). Relays (vertices that are
// not receivers: switches, non-member servers) are removed by splitting off arc pairs u -> z,
// z -> t into u -> t, each by the largest amount that keeps every receiver's rooted connectivity
// (Bang-Jensen, Frank and Jackson: a relay with in-capacity = out-capacity splits off completely;
// in-capacity beyond the out-capacity is dropped, as no tree can use it); a relay with more
// out- than in-capacity stays as a tree vertex when every tree can reach it. Then Edmonds' theorem
// on the receivers (pack_arborescences), and split arcs expand back into their paths. The trees'
// time equals the optimum unit / x* (up to rounding). nullopt when a relay can neither be split
// off nor kept, a cut was lost to rounding, or the work would exceed `max_work` (0: no limit).
std::optional<ForestPacking> pack_forest_exact(const ArcGraph& g, const std::vector<std::uint32_t>& weight,
                                               const std::vector<VertexId>& receivers,
                                               const ForestOptimum& opt, double unit_bytes,
                                               ExactForestStats* stats = nullptr, std::uint64_t max_work = 0);

enum class ForestAlgorithm { Exact, Greedy };

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
// Exact takes the greedy packing when that attains the bound (cheap on regular fabrics), else the
// exact one within a work budget of about a second, else (budget spent, or a relay that can
// neither be split off nor kept) the greedy packing with its gap.
ForestSchedule forest_schedule(const Network& net, CollectiveOp op, const std::vector<VertexId>& members,
                               double bytes, VertexId root, bool with_flows,
                               ForestAlgorithm algorithm = ForestAlgorithm::Exact);

}  // namespace toposweep
