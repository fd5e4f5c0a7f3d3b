#pragma once
// What plan_collective may reuse between calls on one network: its routes (memoised ECMP paths,
// distances, search scratch) and the ring set multiring() picks for a member group, which depends
// on the network and the members only, not on the operation or the bytes. A sweep times the same
// groups with many message sizes (gradient buckets, stages, microbatch counts), so the ring
// search runs once per group instead of once per size. Everything memoised is a pure function of
// the network and the query, so plans are bit-identical with or without a memo.
//
// The ring sets can also be shared between the memos of networks that differ only by a
// power-of-two factor on every link's bandwidth (a sweep's 100/200/400 Gb/s variants of one
// topology): every cost the ring search compares (a phase's busiest-link time, each link's busy
// time, the relative tolerance of `cheaper`) then scales by that same factor, which is exact in
// floating point, and the latencies do not change, so the search picks the same rings.
#include <map>
#include <memory>
#include <vector>

#include "toposweep/collective/multiring.hpp"
#include "toposweep/collective/routing.hpp"

namespace toposweep {

// Ring sets by member list (what multiring() picked).
using RingSets = std::map<std::vector<VertexId>, MultiRing>;

// Whether b is a with every arc's bandwidth times one power of two (1 included): the same
// vertices, arcs, latencies and ring strides. Then multiring() picks the same rings on both.
bool bandwidth_power_of_two_twins(const Network& a, const Network& b);

class CollectiveMemo {
 public:
  // `rings`: ring sets to share with the memos of bandwidth twins (a fresh store when null).
  explicit CollectiveMemo(const Network& net, std::shared_ptr<RingSets> rings = nullptr)
      : routes_(net), multirings_(rings ? std::move(rings) : std::make_shared<RingSets>()) {}

  const Network& network() const { return routes_.network(); }
  RouteCache& routes() { return routes_; }
  // multiring(network(), routes(), members), computed once per member list.
  const MultiRing& multiring(const std::vector<VertexId>& members);
  const std::shared_ptr<RingSets>& ring_sets() const { return multirings_; }

 private:
  RouteCache routes_;
  std::shared_ptr<RingSets> multirings_;
};

}  // namespace toposweep
