#pragma once
// The aggregated traffic of one iteration at the level of compute nodes: what TopoOpt's
// TopologyFinder needs. Derived from a TaskGraph and a Placement.
#include <cstdint>
#include <vector>

#include "toposweep/workload/task_graph.hpp"

namespace toposweep {

// One mutable AllReduce group (e.g. a data-parallel group) and the bytes each member
// reduces per iteration (the per-rank buffer, summed over all its AllReduce tasks).
struct AllReduceDemand {
  std::vector<std::uint32_t> nodes;  // distinct compute nodes of the group, ascending
  double bytes = 0;
};

// Non-mutable (model-parallel) bytes from one node to another per iteration.
struct NodeDemand {
  std::uint32_t src = 0;
  std::uint32_t dst = 0;
  double bytes = 0;
};

struct TrafficDemand {
  std::uint32_t nodes = 0;
  std::vector<AllReduceDemand> allreduce;  // merged: one entry per distinct node group
  std::vector<NodeDemand> mp;              // merged: one entry per (src, dst), src != dst
  double total_allreduce_bytes() const;
  double total_mp_bytes() const;
};

// Aggregates the graph's communication between nodes. Traffic between GPUs of the same node
// is not network demand and is left out.
TrafficDemand derive_traffic(const TaskGraph& graph, const Placement& placement, std::uint32_t nodes);

}  // namespace toposweep
