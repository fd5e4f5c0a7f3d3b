// Exact arborescence packing (see forest.hpp): relays removed by splitting off, then Edmonds'
// branching theorem grown one arc at a time.
#include <algorithm>
#include <cmath>
#include <limits>

#include "toposweep/collective/forest.hpp"
#include "toposweep/collective/maxflow.hpp"

namespace toposweep {

namespace {

// `cap` copies of an arc src -> dst standing for the path `path` of original arcs (longer than
// one arc once relays have been split off).
struct CapArc {
  VertexId src = 0;
  VertexId dst = 0;
  std::int64_t cap = 0;
  std::vector<ArcId> path;
};

// Edmonds' condition as max-flows: a super source sends one unit per unfinished tree into its
// root set (trees not yet started grouped per root, plus the tree being grown with root set
// `current`); every vertex in `check` must receive all of them.
bool condition_holds(std::uint32_t V, const std::vector<CapArc>& arcs,
                     const std::vector<std::uint32_t>& untouched, const std::vector<char>& current,
                     const std::vector<VertexId>& check) {
  const std::uint32_t s = V, cur = V + 1;
  MaxFlow mf(V + 2 + V);  // vertices, source, current tree, one group node per root
  // "Infinite" arcs only need to exceed any cut; a finite value keeps MaxFlow's rounding
  // tolerance (relative to its largest capacity) tiny.
  double big = 2;
  for (const CapArc& a : arcs) big += static_cast<double>(std::max<std::int64_t>(a.cap, 0));
  for (std::uint32_t u : untouched) big += u;
  double trees = 0;
  for (const CapArc& a : arcs)
    if (a.cap > 0 && a.src != a.dst) mf.add_edge(a.src, a.dst, static_cast<double>(a.cap));
  for (VertexId u = 0; u < V; ++u) {
    if (untouched[u] == 0) continue;
    mf.add_edge(s, V + 2 + u, untouched[u]);
    mf.add_edge(V + 2 + u, u, big);
    trees += untouched[u];
  }
  if (!current.empty()) {
    mf.add_edge(s, cur, 1);
    for (VertexId u = 0; u < V; ++u)
      if (current[u]) mf.add_edge(cur, u, big);
    trees += 1;
  }
  for (VertexId v : check)
    if (mf.run(s, v) < trees - 0.5) return false;
  return true;
}

// Splits off every arc pair (u -> z, z -> w) at relay z into u -> w while the condition holds
// for the receivers, until z has no arcs left (possible when z is Eulerian: Frank's splitting
// theorem for rooted connectivity). False when z is not Eulerian or no pair can be split.
bool split_off(std::uint32_t V, VertexId z, std::vector<CapArc>& arcs,
               const std::vector<std::uint32_t>& untouched, const std::vector<VertexId>& receivers) {
  std::int64_t in = 0, out = 0;
  for (const CapArc& a : arcs) {
    if (a.src == a.dst) continue;
    if (a.dst == z) in += a.cap;
    if (a.src == z) out += a.cap;
  }
  if (in != out) return false;
  const std::vector<char> none;
  while (true) {
    std::size_t i = arcs.size();
    for (std::size_t j = 0; j < arcs.size(); ++j)
      if (arcs[j].dst == z && arcs[j].src != z && arcs[j].cap > 0) {
        i = j;
        break;
      }
    if (i == arcs.size()) return true;
    bool split = false;
    for (std::size_t j = 0; j < arcs.size() && !split; ++j) {
      if (arcs[j].src != z || arcs[j].dst == z || arcs[j].cap <= 0) continue;
      auto apply = [&](std::int64_t gamma) {
        std::vector<CapArc> trial = arcs;
        trial[i].cap -= gamma;
        trial[j].cap -= gamma;
        if (trial[i].src != trial[j].dst) {
          CapArc merged{trial[i].src, trial[j].dst, gamma, trial[i].path};
          merged.path.insert(merged.path.end(), trial[j].path.begin(), trial[j].path.end());
          trial.push_back(std::move(merged));
        }
        return trial;
      };
      // Largest admissible amount by bisection (admissibility is monotone in gamma).
      std::int64_t lo = 0, hi = std::min(arcs[i].cap, arcs[j].cap);
      if (condition_holds(V, apply(hi), untouched, none, receivers)) {
        lo = hi;
      } else {
        while (hi - lo > 1) {
          const std::int64_t mid = lo + (hi - lo) / 2;
          (condition_holds(V, apply(mid), untouched, none, receivers) ? lo : hi) = mid;
        }
      }
      if (lo > 0) {
        arcs = apply(lo);
        split = true;
      }
    }
    if (!split) return false;
  }
}

// Grows k-many spanning arborescences per root of `untouched` over all V vertices, one arc at a
// time, each arc kept only if Edmonds' condition still holds. Trees as (root, arc indices in
// growth order: parents before children). nullopt if the premise fails.
std::optional<std::vector<std::pair<VertexId, std::vector<std::size_t>>>> grow_branchings(
    std::uint32_t V, std::vector<CapArc> arcs, std::vector<std::uint32_t> untouched) {
  std::vector<VertexId> all(V);
  for (VertexId v = 0; v < V; ++v) all[v] = v;
  if (!condition_holds(V, arcs, untouched, {}, all)) return std::nullopt;
  std::vector<std::pair<VertexId, std::vector<std::size_t>>> trees;
  for (VertexId root = 0; root < V; ++root) {
    while (untouched[root] > 0) {
      --untouched[root];
      std::vector<char> current(V, 0);
      current[root] = 1;
      std::vector<std::uint32_t> depth(V, 0);
      std::vector<std::size_t> tree;
      for (std::uint32_t size = 1; size < V; ++size) {
        // Nearest the root first keeps trees shallow; the theorem guarantees some candidate works.
        std::vector<std::size_t> candidates;
        for (std::size_t a = 0; a < arcs.size(); ++a)
          if (arcs[a].cap > 0 && current[arcs[a].src] && !current[arcs[a].dst]) candidates.push_back(a);
        std::stable_sort(candidates.begin(), candidates.end(), [&](std::size_t a, std::size_t b) {
          return depth[arcs[a].src] < depth[arcs[b].src];
        });
        bool grown = false;
        for (std::size_t a : candidates) {
          --arcs[a].cap;
          current[arcs[a].dst] = 1;
          if (condition_holds(V, arcs, untouched, current, all)) {
            tree.push_back(a);
            depth[arcs[a].dst] = depth[arcs[a].src] + 1;
            grown = true;
            break;
          }
          ++arcs[a].cap;
          current[arcs[a].dst] = 0;
        }
        if (!grown) return std::nullopt;
      }
      trees.emplace_back(root, std::move(tree));
    }
  }
  return trees;
}

}  // namespace

std::optional<ForestPacking> pack_forest_exact(const ArcGraph& g, const std::vector<std::uint32_t>& weight,
                                               const std::vector<VertexId>& receivers,
                                               const ForestOptimum& opt, double unit_bytes, std::uint32_t k) {
  const std::uint32_t V = g.vertex_count;
  const double x = opt.rate_Bps();
  if (!(x > 0) || k == 0) return std::nullopt;
  std::vector<char> is_receiver(V, 0);
  for (VertexId v : receivers) is_receiver[v] = 1;
  std::vector<CapArc> arcs;
  for (ArcId a = 0; a < g.arcs.size(); ++a) {
    const auto cap = static_cast<std::int64_t>(std::floor(k * g.arcs[a].bandwidth_Bps / x * (1 + 1e-9)));
    if (cap > 0 && g.arcs[a].src != g.arcs[a].dst)
      arcs.push_back(CapArc{g.arcs[a].src, g.arcs[a].dst, cap, {a}});
  }
  std::vector<std::uint32_t> untouched(V, 0);
  for (VertexId u = 0; u < V; ++u) {
    if (weight[u] > 0 && !is_receiver[u]) return std::nullopt;  // sources are members
    untouched[u] = k * weight[u];
  }
  if (!condition_holds(V, arcs, untouched, {}, receivers)) return std::nullopt;  // rounding lost capacity
  for (VertexId z = 0; z < V; ++z)
    if (!is_receiver[z] && !split_off(V, z, arcs, untouched, receivers)) return std::nullopt;

  // Relays are now isolated: grow the branchings over the receivers alone.
  std::vector<VertexId> compact(V, 0);
  for (std::size_t i = 0; i < receivers.size(); ++i) compact[receivers[i]] = static_cast<VertexId>(i);
  const auto R = static_cast<std::uint32_t>(receivers.size());
  std::vector<CapArc> reduced;
  std::vector<std::size_t> origin;  // index in `arcs` of each reduced arc
  for (std::size_t a = 0; a < arcs.size(); ++a) {
    if (arcs[a].cap <= 0 || arcs[a].src == arcs[a].dst) continue;
    reduced.push_back(CapArc{compact[arcs[a].src], compact[arcs[a].dst], arcs[a].cap, {}});
    origin.push_back(a);
  }
  std::vector<std::uint32_t> compact_untouched(R, 0);
  for (std::size_t i = 0; i < receivers.size(); ++i) compact_untouched[i] = untouched[receivers[i]];
  const auto grown = grow_branchings(R, std::move(reduced), std::move(compact_untouched));
  if (!grown) return std::nullopt;

  // Expand split arcs into their paths. A relay reached twice in one tree keeps its first entry
  // (its source was reached earlier, so the tree stays connected) and forwards from there.
  ForestPacking pack;
  pack.trees_per_unit = k;
  pack.complete = true;
  std::vector<char> entered(V, 0);
  for (const auto& [croot, tree_arcs] : *grown) {
    Arborescence t{receivers[croot], {}, unit_bytes / k};
    std::fill(entered.begin(), entered.end(), 0);
    entered[t.root] = 1;
    for (std::size_t ra : tree_arcs) {
      for (ArcId a : arcs[origin[ra]].path) {
        if (entered[g.arcs[a].dst]) continue;
        entered[g.arcs[a].dst] = 1;
        t.arcs.push_back(a);
      }
    }
    pack.trees.push_back(std::move(t));
  }
  std::vector<double> load(g.arcs.size(), 0);
  for (const auto& t : pack.trees)
    for (ArcId a : t.arcs) load[a] += t.bytes;
  for (ArcId a = 0; a < g.arcs.size(); ++a)
    if (load[a] > 0) pack.time_s = std::max(pack.time_s, load[a] / g.arcs[a].bandwidth_Bps);
  return pack;
}

}  // namespace toposweep
