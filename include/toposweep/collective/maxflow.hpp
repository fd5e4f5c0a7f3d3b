#pragma once
// Maximum flow on a small directed graph with real capacities (Dinic's algorithm). Reusable:
// capacities can be changed, the flow reset between runs and the graph cleared without giving
// back its storage (the forest packing runs many thousands of small flows).
#include <cstdint>
#include <limits>
#include <vector>

namespace toposweep {

class MaxFlow {
 public:
  explicit MaxFlow(std::uint32_t vertices = 0);
  // Drops every edge and sets the vertex count; keeps the allocated storage.
  void reset(std::uint32_t vertices);
  // Adds an edge u -> v; returns its id for set_capacity.
  std::uint32_t add_edge(std::uint32_t u, std::uint32_t v, double capacity);
  void set_capacity(std::uint32_t edge, double capacity);
  double capacity(std::uint32_t edge) const { return edges_[2 * edge].cap; }
  // Edges scanned by all runs so far (a machine-independent measure of their cost).
  std::uint64_t scans() const { return scans_; }
  // Residual capacities at or below `eps` count as zero. Default (0): 1e-13 of the largest
  // capacity of the run, for sums of bandwidths; callers whose values span a known range set it.
  void set_tolerance(double eps) { fixed_eps_ = eps; }
  // Resets the flow to zero and computes the maximum s -> t flow, stopping as soon as it reaches
  // `limit` (then the value is >= limit but not necessarily maximum, and no cut is meaningful).
  double run(std::uint32_t s, std::uint32_t t, double limit = std::numeric_limits<double>::infinity());
  // After a run() that stopped below its limit: the vertices reachable from s in the residual
  // graph (the source side of a minimum cut).
  std::vector<char> source_side(std::uint32_t s) const;

 private:
  struct Edge {
    std::uint32_t to;
    double cap;  // capacity
    double flow;
  };
  bool bfs(std::uint32_t s, std::uint32_t t);
  double dfs(std::uint32_t v, std::uint32_t t, double pushed);
  double residual(const Edge& e) const { return e.cap - e.flow; }

  std::uint32_t n_ = 0;
  std::vector<Edge> edges_;  // edge 2i forward, 2i+1 its reverse (capacity 0)
  std::vector<std::vector<std::uint32_t>> adj_;
  std::vector<std::int32_t> level_;
  std::vector<std::uint32_t> next_;
  std::vector<std::uint32_t> queue_;
  double eps_ = 0;
  double fixed_eps_ = 0;
  std::uint64_t scans_ = 0;
};

}  // namespace toposweep
