#pragma once
// Routing of point-to-point traffic on a Network: shortest paths by hop count (one path, ECMP
// splitting over all shortest paths, or the k shortest loopless paths). On a dragonfly built with
// topology.routing = valiant (TopologyInfo::routing) the ECMP queries (ecmp_split, hashed_path,
// ecmp_paths) route traffic between two groups i != j by Valiant (Kim et al., ISCA 2008, Sec. 4):
// on shortest paths to the nearest router of an intermediate group k (k != i, j), then on shortest
// paths from there to the destination; the split takes every k evenly (expected load), a hashed
// flow one k. Traffic inside a group, and every pair on a dragonfly of two groups, stays minimal. A
// RouteCache belongs to one network and one thread; it memoises paths and keeps scratch space so that
// repeated queries (a ring over 16k members) do not allocate per query.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "toposweep/collective/plan.hpp"
#include "toposweep/collective/tree_paths.hpp"
#include "toposweep/topology/network.hpp"

namespace toposweep {

// An arc src->dst if one exists (the one with the highest bandwidth among parallel arcs).
std::optional<ArcId> direct_arc(const Network& net, VertexId src, VertexId dst);

// All arcs src->dst (parallel links), contiguous in the out-arc list; empty when none.
std::span<const ArcId> parallel_arcs(const Network& net, VertexId src, VertexId dst);

// Latency of a path: the sum of its arcs' latencies.
double path_latency(const Network& net, std::span<const ArcId> path);
// A path's hop count, latency sum (added in path order) and narrowest bandwidth.
PathSums path_sums(const Network& net, std::span<const ArcId> path);

// A transfer of `bytes` from compute node src to compute node dst (RouteCache::valiant_split).
struct PairBytes {
  VertexId src = 0, dst = 0;
  double bytes = 0;
};

struct WeightedPath {
  std::vector<ArcId> arcs;
  double fraction = 0;  // share of the traffic this path carries; fractions of one split sum to 1
};

// Hop distances to each destination (RouteCache::distances_to), filled as asked for. They depend
// on the arcs only, so route caches of networks with the same arcs may share them
// (bandwidth twins: collective/memo.hpp).
using HopDistances = std::vector<std::vector<std::uint32_t>>;

class RouteCache {
 public:
  // `distances`: hop distances to share (a fresh store when null).
  explicit RouteCache(const Network& net, std::shared_ptr<HopDistances> distances = nullptr);

  const Network& network() const { return *net_; }

  // One shortest path (fewest arcs) src->dst, deterministic (lowest arc ids first); empty when
  // src == dst; nullopt when dst is unreachable. Not memoised (cheap: direct arc or a
  // bidirectional BFS that stops where the two searches meet).
  std::optional<std::vector<ArcId>> shortest_path(VertexId src, VertexId dst);

  // The sums of the path shortest_path() returns (hop count, latencies added in path order,
  // narrowest bandwidth); nullopt when dst is unreachable. Between compute nodes of a tree family
  // they come in closed form (TreePaths), with no search; on a rotation-symmetric network whose
  // arcs are all alike, from the hop distance (every shortest path has the same sums).
  std::optional<PathSums> path_sums(VertexId src, VertexId dst);

  // A shortest path src->dst chosen hop by hop among the equal-cost next hops: the one whose
  // arc is least busy in `arc_busy_s` (indexed by ArcId, e.g. load / bandwidth of the phase so
  // far), ties broken from an offset hashed from (src, dst). Spreads a phase's transfers over a
  // fat-tree's cores instead of piling them on the lowest-id one. Costs a walk along the path over
  // the hop distances to dst (distances_to: one BFS the first time dst is asked for); nullopt
  // when dst is unreachable. The path itself is not memoised (it depends on arc_busy_s).
  std::optional<std::vector<ArcId>> spread_path(VertexId src, VertexId dst,
                                                std::span<const double> arc_busy_s);

  // The expected load of ECMP on a transfer of `bytes` src->dst: at every vertex the traffic
  // arriving splits evenly over the out-arcs that stay on a shortest path to dst (what per-packet
  // spraying gives, and hashed ECMP on average over many flows). Adds each arc's share to
  // arc_bytes (indexed by ArcId), appending an arc to `touched` the first time its entry leaves
  // 0. Returns the latency of the slowest equal-cost path; nullopt when dst is unreachable. Walks
  // the shortest-path DAG level by level (its vertices merged), no path enumeration.
  // Memoised per (src, dst) as each arc's share (up to kMaxSplitMemoArcs shares in all), replayed
  // in the walk's order: the same additions, bit for bit. Valiant: 1/(g-2) of the transfer per
  // intermediate group k, each leg split as above; the latency is that of the slowest leg pair.
  std::optional<double> ecmp_split(VertexId src, VertexId dst, double bytes, std::span<double> arc_bytes,
                                   std::vector<ArcId>& touched);

  // The Valiant transfers of one phase at once (each with intermediate_groups(src, dst) > 0): the
  // loads ecmp_split gives each, added in another order (equal up to floating-point rounding),
  // into arc_bytes and touched as ecmp_split adds them. Leg 1 is walked once per (source,
  // intermediate group) with the bytes of every transfer that takes it, leg 2 once per (entry
  // router, destination) with every share entering there, both memoised: about the minimal
  // split's work, where a walk per transfer and intermediate group costs g - 2 times it. `latency`
  // is the slowest leg pair's over all transfers; `unreachable` the index of a transfer whose
  // destination cannot be reached (nothing is added then).
  struct ValiantSplit {
    double latency = 0;
    std::optional<std::size_t> unreachable;
  };
  ValiantSplit valiant_split(std::span<const PairBytes> transfers, std::span<double> arc_bytes,
                             std::vector<ArcId>& touched);

  // The one equal-cost path a hashing ECMP fabric gives the flow src->dst: at every vertex u on
  // the way, a hash of (src, dst, u) picks among the next hops that stay on a shortest path (each
  // switch hashes the same header with its own seed). Deterministic; nullopt when unreachable.
  // Valiant: the intermediate group from the same hash, then both legs hashed hop by hop.
  std::optional<std::vector<ArcId>> hashed_path(VertexId src, VertexId dst);

  // Per-hop ECMP: at every vertex the traffic splits evenly over the out-arcs that stay on a
  // shortest path to dst. Memoised per (src, dst). Throws BadInput when dst is unreachable.
  // At most kMaxEcmpPaths paths are enumerated (depth first); past that the enumerated ones are
  // rescaled so that their fractions still sum to 1. Valiant: for every intermediate group k the
  // leg-1 paths each followed by the leg-2 paths from where it enters k, fractions multiplied,
  // 1/(g-2) per k (at most max(1, kMaxEcmpPaths / (g-2)) paths per k, rescaled likewise).
  const std::vector<WeightedPath>& ecmp_paths(VertexId src, VertexId dst);

  // Valiant's intermediate groups for src->dst: 0 when the pair routes minimally (not a Valiant
  // dragonfly, fewer than 3 groups, or src and dst in one group), else g - 2.
  std::uint32_t intermediate_groups(VertexId src, VertexId dst) const;
  // The t-th of them (t < intermediate_groups(src, dst)): the groups other than src's and dst's,
  // in increasing order.
  std::uint32_t intermediate_group(VertexId src, VertexId dst, std::uint32_t t) const;
  // Hop distance from every vertex to the nearest router of dragonfly group k (0 at its routers).
  // Memoised per group.
  const std::vector<std::uint32_t>& distances_to_group(std::uint32_t k);

  // ECMP paths as flows carrying `bytes` in `stage`.
  std::vector<Flow> ecmp_flows(VertexId src, VertexId dst, double bytes, std::uint32_t stage = 0);

  // Hop distance from every vertex to dst (UINT32_MAX when unreachable). Memoised per dst. On a
  // network that rotation maps onto itself (rotation_symmetric) one orbit: the distances to dst
  // are those to vertex 0, rotated, with no search.
  const std::vector<std::uint32_t>& distances_to(VertexId dst);

  // Whether v -> v + 1 (mod n) maps the network onto itself: no switches, and for every arc
  // u -> v an arc u + 1 -> v + 1 with the same bandwidth and latency (a circulant: topoopt's
  // rings). Checked once.
  bool rotation_symmetric();

  static constexpr std::uint32_t kMaxEcmpPaths = 256;
  static constexpr std::size_t kMaxSplitMemoArcs = std::size_t{1} << 22;  // 64 MiB of shares

  // One double per arc, all 0 between uses: a phase's per-arc busy time (phase_cost), which
  // puts back 0 in every entry it touched before it returns, so no query clears every arc.
  std::vector<double>& zeroed_arc_scratch() {
    if (arc_scratch_.size() != net_->arc_count()) arc_scratch_.assign(net_->arc_count(), 0.0);
    return arc_scratch_;
  }

 private:
  void ensure_scratch();
  std::uint32_t group_of(VertexId v) const;
  // ecmp_split()'s walk down `dist` (hop distances to dst or to a group) from src, which carries
  // `share` of the transfer and has seen `latency`: appends each arc's share to split_arcs_ and
  // leaves in frontier_a_ the vertices reached at distance 0, their shares and slowest arrival
  // latencies in split_share_ and split_latency_.
  void split_walk(VertexId src, const std::vector<std::uint32_t>& dist, double share, double latency);
  // hashed_path()'s walk down `dist` from u, appending to path; returns the vertex reached.
  VertexId hashed_walk(VertexId u, const std::vector<std::uint32_t>& dist, std::uint64_t flow,
                       std::vector<ArcId>& path);
  // Bidirectional BFS by whole levels; returns the hop length (UINT32_MAX when unreachable) and
  // an arc where the searches met, leaving stamps, depths and parents for the current epoch.
  std::uint32_t bidirectional_search(VertexId src, VertexId dst, ArcId& meet_arc);

  const Network* net_;
  std::optional<std::optional<TreePaths>> tree_;  // TreePaths::of(net), once asked for
  std::optional<bool> rotation_symmetric_;        // once asked for
  std::optional<bool> uniform_arcs_;              // every arc of one bandwidth and latency
  std::shared_ptr<HopDistances> dist_to_;         // per dst; empty until asked for
  // distances_to(): 1 + the least distance to any of a set of switches (a server's in-neighbours,
  // sorted), shared by every server under the same switches (a rail block, a fat-tree leaf).
  std::map<std::vector<VertexId>, std::vector<std::uint32_t>> under_switches_;
  std::map<std::pair<VertexId, VertexId>, std::vector<WeightedPath>> ecmp_;
  // Epoch-stamped scratch for the bidirectional BFS: a vertex is visited in this query iff its
  // stamp equals the current epoch, so nothing is cleared between queries.
  std::uint32_t epoch_ = 0;
  std::vector<std::uint32_t> fwd_stamp_, bwd_stamp_;
  std::vector<ArcId> fwd_parent_, bwd_parent_;
  std::vector<std::uint32_t> fwd_depth_, bwd_depth_;
  std::vector<VertexId> frontier_a_, frontier_b_, next_;
  std::vector<ArcId> candidates_;  // spread_path(): the next hops that stay on a shortest path
  // ecmp_split(): per-vertex share of the transfer and slowest arrival latency, valid where the
  // stamp equals split_epoch_.
  std::uint32_t split_epoch_ = 0;
  std::vector<std::uint32_t> split_stamp_;
  std::vector<double> split_share_, split_latency_;
  // ecmp_split()'s answers: each arc's share of the transfer in walk order, and the latency.
  struct EcmpShares {
    std::vector<std::pair<ArcId, double>> arcs;
    double latency = 0;
  };
  std::unordered_map<std::uint64_t, EcmpShares> split_memo_;
  std::size_t split_memo_arcs_ = 0;
  std::vector<std::pair<ArcId, double>> split_arcs_;  // the walk's shares before they are kept
  std::vector<double> arc_scratch_;                   // zeroed_arc_scratch()
  // Valiant dragonfly (TopologyInfo::routing == "valiant", 3 or more groups): its groups, routers
  // per group and servers per group; valiant_groups_ == 0 otherwise.
  std::uint32_t valiant_groups_ = 0, group_routers_ = 0, group_servers_ = 0;
  std::vector<std::vector<std::uint32_t>> group_dist_;  // distances_to_group(), per group
  // valiant_split()'s memoised walks: leg 1 per (source, intermediate group) as each arc's share
  // and each entry router's share and arrival latency; leg 2 per (entry router, destination).
  struct Leg1 {
    std::vector<std::pair<ArcId, double>> arcs;
    std::vector<std::tuple<VertexId, double, double>> entries;
  };
  std::unordered_map<std::uint64_t, Leg1> leg1_memo_;
  std::unordered_map<std::uint64_t, EcmpShares> leg2_memo_;
  std::size_t leg_memo_arcs_ = 0;
  const Leg1* leg1(VertexId src, std::uint32_t k, Leg1& scratch);
  const EcmpShares* leg2(VertexId entry, VertexId dst, const std::vector<std::uint32_t>& dist,
                         EcmpShares& scratch);
};

// The k shortest loopless paths src->dst by hop count (Yen's algorithm), shortest first, ties
// broken deterministically. Fewer than k when fewer exist; empty when unreachable or src == dst.
std::vector<std::vector<ArcId>> k_shortest_paths(const Network& net, VertexId src, VertexId dst,
                                                 std::uint32_t k);

}  // namespace toposweep
