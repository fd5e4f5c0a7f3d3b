#pragma once
// What plan_collective may reuse between calls on one network: its routes (memoised ECMP paths,
// distances, search scratch) and the ring set multiring() picks for a member group, which depends
// on the network and the members only, not on the operation or the bytes. A sweep times the same
// groups with many message sizes (gradient buckets, stages, microbatch counts), so the ring
// search runs once per group instead of once per size. Everything memoised is a pure function of
// the network and the query, so plans are bit-identical with or without a memo.
#include <map>
#include <vector>

#include "toposweep/collective/multiring.hpp"
#include "toposweep/collective/routing.hpp"

namespace toposweep {

class CollectiveMemo {
 public:
  explicit CollectiveMemo(const Network& net) : routes_(net) {}

  const Network& network() const { return routes_.network(); }
  RouteCache& routes() { return routes_; }
  // multiring(network(), routes(), members), computed once per member list.
  const MultiRing& multiring(const std::vector<VertexId>& members);

 private:
  RouteCache routes_;
  std::map<std::vector<VertexId>, MultiRing> multirings_;
};

}  // namespace toposweep
