#pragma once
// Maximum flow on a small directed graph with real capacities (Dinic's algorithm). Reusable:
// capacities can be changed and the flow reset between runs without rebuilding the graph.
#include <cstdint>
#include <vector>

namespace toposweep {

class MaxFlow {
 public:
  explicit MaxFlow(std::uint32_t vertices);
  // Adds an edge u -> v; returns its id for set_capacity.
  std::uint32_t add_edge(std::uint32_t u, std::uint32_t v, double capacity);
  void set_capacity(std::uint32_t edge, double capacity);
  // Resets the flow to zero and computes the maximum s -> t flow.
  double run(std::uint32_t s, std::uint32_t t);
  // After run(): the vertices reachable from s in the residual graph (the source side of a
  // minimum cut).
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

  std::uint32_t n_;
  std::vector<Edge> edges_;  // edge 2i forward, 2i+1 its reverse (capacity 0)
  std::vector<std::vector<std::uint32_t>> adj_;
  std::vector<std::int32_t> level_;
  std::vector<std::uint32_t> next_;
  double eps_ = 0;
};

}  // namespace toposweep
