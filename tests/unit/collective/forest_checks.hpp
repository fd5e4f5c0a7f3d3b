#pragma once
// Independent checks for the forest tests: the cut bound by brute force over vertex subsets, and
// the validity of a tree packing against the original graph.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "toposweep/collective/forest.hpp"
#include "toposweep/topology/network.hpp"

namespace toposweep::testnet {

// x* = min over S (weight inside, a receiver outside) of B+(S) / w(S), every subset enumerated.
inline double brute_force_rate(const ArcGraph& g, const std::vector<std::uint32_t>& w,
                               const std::vector<VertexId>& receivers) {
  const std::uint32_t V = g.vertex_count;
  double best = std::numeric_limits<double>::infinity();
  for (std::uint32_t mask = 1; mask < (1u << V); ++mask) {
    std::uint64_t ws = 0;
    bool misses = false;
    for (VertexId v = 0; v < V; ++v)
      if (mask >> v & 1) ws += w[v];
    for (VertexId v : receivers)
      if (!(mask >> v & 1)) misses = true;
    if (ws == 0 || !misses) continue;
    double out = 0;
    for (const Arc& a : g.arcs)
      if ((mask >> a.src & 1) && !(mask >> a.dst & 1)) out += a.bandwidth_Bps;
    best = std::min(best, out / static_cast<double>(ws));
  }
  return best;
}

// The ratio B+(S) / w(S) of one given set S, recomputed from the arcs.
inline double cut_rate(const ArcGraph& g, const std::vector<std::uint32_t>& w,
                       const std::vector<VertexId>& set) {
  std::vector<char> in(g.vertex_count, 0);
  std::uint64_t ws = 0;
  for (VertexId v : set) in[v] = 1, ws += w[v];
  double out = 0;
  for (const Arc& a : g.arcs)
    if (in[a.src] && !in[a.dst]) out += a.bandwidth_Bps;
  return out / static_cast<double>(ws);
}

// Every tree an arborescence of the original graph (arcs exist, each arc leaves a vertex already
// in the tree, every vertex but the root entered at most once, the root never) reaching every
// receiver; each source's trees carry exactly its w_u units; every arc's bytes / bandwidth at most
// the packing's time, which is the largest such ratio and no less than the bound unit / x*.
inline void check_packing(const ArcGraph& g, const std::vector<std::uint32_t>& w,
                          const std::vector<VertexId>& receivers, double rate_Bps, const ForestPacking& pack,
                          double unit) {
  std::vector<double> load(g.arcs.size(), 0), carried(g.vertex_count, 0);
  for (const Arborescence& t : pack.trees) {
    ASSERT_LT(t.root, g.vertex_count);
    ASSERT_GT(w[t.root], 0u) << "tree rooted at a vertex without data";
    std::vector<int> entered(g.vertex_count, 0);
    std::vector<char> reached(g.vertex_count, 0);
    reached[t.root] = 1;
    for (ArcId a : t.arcs) {
      ASSERT_LT(a, g.arcs.size());
      ASSERT_TRUE(reached[g.arcs[a].src]) << "arc " << a << " hangs off the tree";
      ++entered[g.arcs[a].dst];
      reached[g.arcs[a].dst] = 1;
      load[a] += t.bytes;
    }
    EXPECT_EQ(entered[t.root], 0);
    for (VertexId v = 0; v < g.vertex_count; ++v)
      ASSERT_LE(entered[v], 1) << "vertex " << v << " entered twice";
    for (VertexId v : receivers) ASSERT_TRUE(reached[v]) << "tree from " << t.root << " misses " << v;
    carried[t.root] += t.bytes;
  }
  for (VertexId u = 0; u < g.vertex_count; ++u)
    EXPECT_NEAR(carried[u], w[u] * unit, unit * 1e-9) << "source " << u;
  double busiest = 0;
  for (ArcId a = 0; a < g.arcs.size(); ++a) {
    EXPECT_LE(load[a] / g.arcs[a].bandwidth_Bps, pack.time_s * (1 + 1e-12))
        << "arc " << a << " over capacity";
    busiest = std::max(busiest, load[a] / g.arcs[a].bandwidth_Bps);
  }
  EXPECT_NEAR(pack.time_s, busiest, busiest * 1e-12);
  EXPECT_GE(pack.time_s, unit / rate_Bps * (1 - 1e-9));
}

inline std::vector<std::uint32_t> unit_weights(std::uint32_t vertices, const std::vector<VertexId>& members) {
  std::vector<std::uint32_t> w(vertices, 0);
  for (VertexId v : members) w[v] = 1;
  return w;
}

}  // namespace toposweep::testnet
