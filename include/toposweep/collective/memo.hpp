#pragma once
// What plan_collective may reuse between calls on one network: its routes (memoised ECMP paths,
// distances, search scratch) and the ring set multiring() picks for a member group, which depends
// on the network and the members only, not on the operation or the bytes. A sweep times the same
// groups with many message sizes (gradient buckets, stages, microbatch counts), so the ring
// search runs once per group instead of once per size. Everything memoised is a pure function of
// the network and the query, so plans are bit-identical with or without a memo.
//
// Networks that differ only by a power-of-two factor on every link's bandwidth and another on
// every link's latency (a sweep's 100/200/400 Gb/s and 0.5/1/2 us variants of one topology:
// twins) share what does not depend on the factors (TwinShared):
// - the ring sets: every bandwidth cost the ring search compares (a phase's busiest-link time,
//   each link's busy time, the relative tolerance of `cheaper`) scales by the bandwidth factor
//   and every latency it compares (sums of link latencies, their maxima) by the latency factor,
//   both exact in floating point, so the search picks the same rings;
// - the hop distances of the routes (networks with the same arcs share them whatever their
//   bandwidths and latencies: routing is by hop count);
// - the sums of the transfer paths: the same hops; the latency sum times the latency factor and
//   the narrowest bandwidth times the bandwidth factor (exact).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "toposweep/collective/multiring.hpp"
#include "toposweep/collective/routing.hpp"

namespace toposweep {

// Ring sets by member list (what multiring() picked).
using RingSets = std::map<std::vector<VertexId>, MultiRing>;

// What the memos of bandwidth twins share.
struct TwinShared {
  RingSets rings;
  std::shared_ptr<HopDistances> distances = std::make_shared<HopDistances>();
  // Path sums by (src << 32 | dst), with the narrowest bandwidth of the first twin that used it.
  std::unordered_map<std::uint64_t, PathSums> path_sums;
  double reference_Bps = 0;  // that twin's first arc's bandwidth
  // Its latencies: the latency sums are stored at that twin's scale too.
  double reference_latency_s = 0;  // that twin's first arc's latency (0: every arc's is 0)
};

// The factors that make b from a twin: every arc's bandwidth times `bandwidth` and every arc's
// latency times `latency`, both powers of two (1 included).
struct TwinFactors {
  double bandwidth = 1;
  double latency = 1;
};

// The factors when b is a with every arc's bandwidth times one power of two and every arc's
// latency times one power of two: the same vertices, arcs and ring strides. Then multiring()
// picks the same rings on both. nullopt otherwise.
std::optional<TwinFactors> power_of_two_twin_factors(const Network& a, const Network& b);
// Twins with the same latencies (latency factor 1).
bool bandwidth_power_of_two_twins(const Network& a, const Network& b);
// Whether a and b have the same vertices, compute nodes, arcs (source and destination; bandwidths
// and latencies aside) and ring strides: then their hop distances are the same.
bool same_arc_structure(const Network& a, const Network& b);
// A hash of what same_arc_structure compares (equal for equal structures), to find candidates.
std::uint64_t arc_structure_hash(const Network& net);

class CollectiveMemo {
 public:
  // `shared`: what to share with the memos of bandwidth twins of `net` (a fresh store when null).
  explicit CollectiveMemo(const Network& net, std::shared_ptr<TwinShared> shared = nullptr);

  const Network& network() const { return routes_.network(); }
  RouteCache& routes() { return routes_; }
  // multiring(network(), routes(), members), computed once per member list.
  const MultiRing& multiring(const std::vector<VertexId>& members);
  // routes().path_sums(src, dst), computed once per pair for all twins.
  std::optional<PathSums> path_sums(VertexId src, VertexId dst);
  const std::shared_ptr<TwinShared>& shared() const { return shared_; }

 private:
  std::shared_ptr<TwinShared> shared_;
  RouteCache routes_;
  double factor_ = 1;          // this network's bandwidths over the reference twin's (a power of two)
  double latency_factor_ = 1;  // its latencies over the reference twin's (a power of two)
};

}  // namespace toposweep
