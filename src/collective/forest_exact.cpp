// Exact arborescence packing by Edmonds' branching theorem (see forest.hpp).
#include <algorithm>
#include <cmath>
#include <limits>

#include "toposweep/collective/forest.hpp"
#include "toposweep/collective/maxflow.hpp"

namespace toposweep {

namespace {

// Holds the trees not yet started (grouped per root: interchangeable), the tree being grown
// (root set `current`) and the remaining arc multiplicities; checks Edmonds' condition.
struct BranchingState {
  const ArcGraph& g;
  std::vector<std::int64_t> cap;           // remaining copies of each arc
  std::vector<std::uint32_t> untouched;    // trees per root not yet started
  std::vector<char> current;               // root set of the tree being grown (empty: none)

  // For every vertex v the max-flow from a super source through one unit per tree (into its root
  // set) must reach the number of unfinished trees.
  bool condition_holds() const {
    const std::uint32_t V = g.vertex_count;
    const std::uint32_t s = V, cur = V + 1;
    MaxFlow mf(V + 2 + V);  // vertices, source, current tree, one group node per root
    // "Infinite" arcs only need to exceed any cut: more than all arc copies and trees together
    // (a finite value keeps MaxFlow's rounding tolerance, relative to its largest capacity, tiny).
    double big = 1;
    for (ArcId a = 0; a < g.arcs.size(); ++a) big += static_cast<double>(std::max<std::int64_t>(cap[a], 0));
    for (VertexId u = 0; u < V; ++u) big += untouched[u];
    const double kInfinite = big;
    double trees = 0;
    for (ArcId a = 0; a < g.arcs.size(); ++a)
      if (cap[a] > 0) mf.add_edge(g.arcs[a].src, g.arcs[a].dst, static_cast<double>(cap[a]));
    for (VertexId u = 0; u < V; ++u) {
      if (untouched[u] == 0) continue;
      mf.add_edge(s, V + 2 + u, untouched[u]);
      mf.add_edge(V + 2 + u, u, kInfinite);
      trees += untouched[u];
    }
    if (!current.empty()) {
      mf.add_edge(s, cur, 1);
      for (VertexId u = 0; u < V; ++u)
        if (current[u]) mf.add_edge(cur, u, kInfinite);
      trees += 1;
    }
    for (VertexId v = 0; v < V; ++v)
      if (mf.run(s, v) < trees - 0.5) return false;
    return true;
  }
};

}  // namespace

std::optional<ForestPacking> pack_forest_exact(const ArcGraph& g, const std::vector<std::uint32_t>& weight,
                                               const ForestOptimum& opt, double unit_bytes, std::uint32_t k) {
  const std::uint32_t V = g.vertex_count;
  const double x = opt.rate_Bps();
  if (!(x > 0) || k == 0) return std::nullopt;
  BranchingState st{g, std::vector<std::int64_t>(g.arcs.size()), std::vector<std::uint32_t>(V, 0), {}};
  for (ArcId a = 0; a < g.arcs.size(); ++a)
    st.cap[a] = g.arcs[a].src == g.arcs[a].dst
                    ? 0
                    : static_cast<std::int64_t>(std::floor(k * g.arcs[a].bandwidth_Bps / x * (1 + 1e-9)));
  for (VertexId u = 0; u < V; ++u) st.untouched[u] = k * weight[u];
  if (!st.condition_holds()) return std::nullopt;  // rounding to whole trees lost capacity

  ForestPacking pack;
  pack.trees_per_unit = k;
  pack.complete = true;
  for (VertexId root = 0; root < V; ++root) {
    while (st.untouched[root] > 0) {
      --st.untouched[root];
      st.current.assign(V, 0);
      st.current[root] = 1;
      Arborescence tree{root, {}, unit_bytes / k};
      std::vector<std::uint32_t> depth(V, 0);
      for (std::uint32_t size = 1; size < V; ++size) {
        // Candidates nearest the root first keeps trees shallow; the theorem guarantees that
        // some candidate keeps the condition.
        std::vector<ArcId> candidates;
        for (ArcId a = 0; a < g.arcs.size(); ++a)
          if (st.cap[a] > 0 && st.current[g.arcs[a].src] && !st.current[g.arcs[a].dst]) candidates.push_back(a);
        std::stable_sort(candidates.begin(), candidates.end(),
                         [&](ArcId a, ArcId b) { return depth[g.arcs[a].src] < depth[g.arcs[b].src]; });
        bool grown = false;
        for (ArcId a : candidates) {
          --st.cap[a];
          st.current[g.arcs[a].dst] = 1;
          if (st.condition_holds()) {
            tree.arcs.push_back(a);
            depth[g.arcs[a].dst] = depth[g.arcs[a].src] + 1;
            grown = true;
            break;
          }
          ++st.cap[a];
          st.current[g.arcs[a].dst] = 0;
        }
        if (!grown) return std::nullopt;  // cannot happen when the theorem's premise holds
      }
      pack.trees.push_back(std::move(tree));
    }
  }
  st.current.clear();
  // Every tree carries unit/k of a unit of weight and no arc more than floor(k b_e / x*) trees.
  std::vector<double> load(g.arcs.size(), 0);
  for (const auto& t : pack.trees)
    for (ArcId a : t.arcs) load[a] += t.bytes;
  for (ArcId a = 0; a < g.arcs.size(); ++a)
    if (load[a] > 0) pack.time_s = std::max(pack.time_s, load[a] / g.arcs[a].bandwidth_Bps);
  return pack;
}

}  // namespace toposweep
