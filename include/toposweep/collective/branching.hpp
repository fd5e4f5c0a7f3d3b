#pragma once
// Capacitated packing of spanning arborescences with given roots (Edmonds' branching theorem),
// the last step of the exact forest packing (forest.hpp).
//
// Vertices 0..n-1, arcs with capacities, a demand d_u >= 0 per vertex. A packing is a list of
// spanning arborescences (rooted at u, reaching every vertex) with multiplicities, the
// multiplicities of the trees rooted at u summing to d_u and no arc used more than its capacity.
// By Edmonds' theorem (capacitated form) one exists iff with a super source s -> u of capacity d_u,
// every vertex v has max-flow(s, v) >= D = sum of d_u.
#include <cstdint>
#include <optional>
#include <vector>

namespace toposweep {

struct PackArc {
  std::uint32_t src = 0;
  std::uint32_t dst = 0;
  double cap = 0;
};

struct PackedTree {
  std::uint32_t root = 0;
  std::vector<std::uint32_t> arcs;  // arc indices, each parent entered before its children
  double multiplicity = 0;
};

struct BranchingStats {
  std::uint64_t max_flows = 0;  // max-flow runs
  std::uint64_t work = 0;       // edges they scanned (MaxFlow::scans): the packing's cost
  std::uint64_t rejected = 0;   // candidate arcs that no copy of a tree could take
};

// Grows one tree at a time, all copies of it together, breadth first (shallow trees): an arc
// x -> y joins the tree with the largest multiplicity mu that keeps Edmonds' condition, found by
// one max-flow to y (only sets holding y lose capacity) and a Dinkelbach step on mu when a cut
// falls short; when mu is less than the tree's multiplicity the tree forks, the rest continuing
// later without y. Capacities and demands may be real; `tol` is the rounding tolerance (absolute,
// in capacity units): a root's multiplicities may sum to up to a few tol less than its demand
// (remainders are dropped, never forced over a tight cut). nullopt when the condition fails, or
// when the work would exceed `max_work` (0: no limit).
std::optional<std::vector<PackedTree>> pack_arborescences(std::uint32_t n, const std::vector<PackArc>& arcs,
                                                          const std::vector<double>& demand, double tol,
                                                          BranchingStats* stats = nullptr,
                                                          std::uint64_t max_work = 0);

}  // namespace toposweep
