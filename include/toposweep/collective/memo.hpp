#pragma once
// What plan_collective may reuse between calls on one network: its routes (memoised ECMP paths,
// distances, search scratch) and the ring set multiring() picks for a member group, which depends
// on the network and the members only, not on the operation or the bytes. A sweep times the same
// groups with many message sizes (gradient buckets, stages, microbatch counts), so the ring
// search runs once per group instead of once per size. Everything memoised is a pure function of
// the network and the query, so plans are bit-identical with or without a memo.
//
// Networks that differ only by a power-of-two factor on every link's bandwidth (a sweep's
// 100/200/400 Gb/s variants of one topology: bandwidth twins) share what does not depend on the
// factor (TwinShared):
// - the ring sets: every cost the ring search compares (a phase's busiest-link time, each link's
//   busy time, the relative tolerance of `cheaper`) scales by that same factor, which is exact
//   in floating point, and the latencies do not change, so the search picks the same rings;
// - the hop distances of the routes;
// - the sums of the transfer paths: the same hops and latency sum; the narrowest bandwidth times
//   the factor (exact).
#include <cstdint>
#include <map>
#include <memory>
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
};

// Whether b is a with every arc's bandwidth times one power of two (1 included): the same
// vertices, arcs, latencies and ring strides. Then multiring() picks the same rings on both.
bool bandwidth_power_of_two_twins(const Network& a, const Network& b);

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
  double factor_ = 1;  // this network's bandwidths over the reference twin's (a power of two)
};

}  // namespace toposweep
