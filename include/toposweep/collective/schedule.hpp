#pragma once
// A collective algorithm as a sequence of phases of concurrent point-to-point transfers between
// compute nodes, and its alpha-beta cost on a network: each transfer is routed on a shortest
// path, the arcs' loads add up, and a phase lasts as long as its most loaded arc (load /
// bandwidth) plus the latency of its longest path. The same phases give the flows a flow-level
// simulator plays (one stage per phase, one flow per transfer carrying all its repeats).
#include <cstdint>
#include <vector>

#include "toposweep/collective/plan.hpp"
#include "toposweep/collective/routing.hpp"

namespace toposweep {

struct Transfer {
  VertexId src = 0;
  VertexId dst = 0;
  double bytes = 0;
};

struct Phase {
  std::vector<Transfer> transfers;  // concurrent within one step
  // A phase made of identical steps (a ring's p-1 steps): the bandwidth part is paid `repeat`
  // times and alpha `latency_steps` times.
  double repeat = 1;
  double latency_steps = 1;
  // > 0: a pipeline `pipeline_depth` hops deep (a chain or a tree); `transfers` carry the whole
  // message and the cost picks the chunk count c that minimises (depth - 1 + c)(T/c + alpha),
  // T being the bandwidth time of the whole message. With alpha = 0 the cost is T.
  std::uint32_t pipeline_depth = 0;
  // Steps (of `repeat`) that reduce what they receive: the reduce-scatter half of a ring
  // AllReduce. Only ASTRA-sim's reduction cost (CollectiveOptions::reduction_Bps) uses it.
  double reduce_steps = 0;
  // How multi-hop transfers are routed. Shortest: each takes the first shortest path (lowest arc
  // ids). Spread: over equal-cost paths, least busy arc first (RouteCache::spread_path),
  // transfers between neighbours placed first. Ecmp: the load split evenly over the equal-cost
  // next hops at every hop (RouteCache::ecmp_split), each flow on one hashed path
  // (RouteCache::hashed_path).
  Routing routing = Routing::Shortest;
};

struct PhaseCost {
  double bandwidth_s = 0;  // the beta part
  double latency_s = 0;    // the alpha part (incl. pipeline fill)
  double total() const { return bandwidth_s + latency_s; }
};

// Cost of one phase; with `flows` non-null, appends its flows in `stage`. Throws BadInput when a
// transfer's destination is unreachable.
PhaseCost phase_cost(RouteCache& routes, const Phase& phase, std::vector<Flow>* flows = nullptr,
                     std::uint32_t stage = 0);

// Phases run one after the other; fills time_s, latency_s, stages and (optionally) flows.
void cost_phases(RouteCache& routes, const std::vector<Phase>& phases, bool with_flows, CollectivePlan& plan);

}  // namespace toposweep
