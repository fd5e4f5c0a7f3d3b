#include "toposweep/collective/forest.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>
#include <string>
#include <tuple>

#include "toposweep/collective/maxflow.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep {

ArcGraph arc_graph(const Network& net, bool reversed) {
  ArcGraph g;
  g.vertex_count = net.vertex_count();
  g.arcs = net.arcs();
  if (reversed)
    for (Arc& a : g.arcs) std::swap(a.src, a.dst);
  return g;
}

namespace {

double bandwidth_leaving(const ArcGraph& g, const std::vector<char>& in_set) {
  double b = 0;
  for (const Arc& a : g.arcs)
    if (in_set[a.src] && !in_set[a.dst]) b += a.bandwidth_Bps;
  return b;
}

}  // namespace

ForestOptimum forest_optimum(const ArcGraph& g, const std::vector<std::uint32_t>& weight,
                             const std::vector<VertexId>& receivers) {
  const std::uint32_t V = g.vertex_count;
  std::uint64_t W = 0;
  for (std::uint32_t w : weight) W += w;
  if (W == 0) throw BadInput("forest: no source holds data", "collective members");
  ForestOptimum best;
  // Start from the cuts around single receivers: S = V \ {v} has B+(S) = bandwidth into v.
  double lambda = std::numeric_limits<double>::infinity();
  for (VertexId v : receivers) {
    const std::uint64_t w_s = W - weight[v];
    if (w_s == 0) continue;
    double in = 0;
    for (const Arc& a : g.arcs)
      if (a.dst == v && a.src != v) in += a.bandwidth_Bps;
    if (in / static_cast<double>(w_s) < lambda) {
      lambda = in / static_cast<double>(w_s);
      best.bandwidth_Bps = in;
      best.weight = w_s;
      best.critical_set.clear();
      for (VertexId u = 0; u < V; ++u)
        if (u != v) best.critical_set.push_back(u);
    }
  }
  if (!std::isfinite(lambda)) return best;  // a single member: nothing to move
  if (lambda <= 0) throw BadInput("forest: a member cannot be reached from the others", "collective members");

  const std::uint32_t s = V;
  MaxFlow mf(V + 1);
  for (const Arc& a : g.arcs)
    if (a.src != a.dst) mf.add_edge(a.src, a.dst, a.bandwidth_Bps);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> source_edges;  // (edge id, weight)
  for (VertexId u = 0; u < V; ++u)
    if (weight[u] > 0) source_edges.emplace_back(mf.add_edge(s, u, 0), weight[u]);

  // Dinkelbach: a receiver that cannot get lambda * W exposes a cut S with B+(S) < lambda * w(S);
  // its exact ratio is the next lambda. Ratios strictly decrease over finitely many cuts.
  for (int round = 0; round < 1000; ++round) {
    for (auto [id, w] : source_edges) mf.set_capacity(id, lambda * w);
    bool improved = false;
    for (VertexId v : receivers) {
      const double need = lambda * static_cast<double>(W);
      const double got = mf.run(s, v);
      ++best.max_flow_calls;
      if (got >= need * (1 - 1e-10)) continue;
      std::vector<char> side = mf.source_side(s);
      side.resize(V);
      std::uint64_t w_s = 0;
      for (VertexId u = 0; u < V; ++u)
        if (side[u]) w_s += weight[u];
      const double b = bandwidth_leaving(g, side);
      if (w_s == 0) continue;
      if (b <= 0)
        throw BadInput("forest: member " + std::to_string(v) + " cannot be reached from every other member",
                       "collective members");
      const double ratio = b / static_cast<double>(w_s);
      if (ratio >= lambda * (1 - 1e-12)) continue;  // rounding noise, not a better cut
      lambda = ratio;
      best.bandwidth_Bps = b;
      best.weight = w_s;
      best.critical_set.clear();
      for (VertexId u = 0; u < V; ++u)
        if (side[u]) best.critical_set.push_back(u);
      improved = true;
      break;
    }
    if (!improved) break;
  }
  return best;
}

namespace {

struct TreeGrower {
  const ArcGraph& g;
  std::vector<std::vector<ArcId>> out;  // out-arcs per vertex
  std::vector<char> is_receiver;
  std::uint32_t receiver_count = 0;

  TreeGrower(const ArcGraph& graph, const std::vector<VertexId>& receivers)
      : g(graph), out(graph.vertex_count), is_receiver(graph.vertex_count, 0) {
    for (ArcId a = 0; a < g.arcs.size(); ++a)
      if (g.arcs[a].src != g.arcs[a].dst) out[g.arcs[a].src].push_back(a);
    for (VertexId v : receivers)
      if (!is_receiver[v]) is_receiver[v] = 1, ++receiver_count;
  }

  // Grows an arborescence from root over arcs with residual capacity, widest residual first
  // (ties: nearer the root, then lower arc id), until it holds every receiver; prunes branches
  // that lead to no receiver. Empty optional-like result (false) when a receiver is cut off.
  bool grow(VertexId root, const std::vector<double>& cap, std::vector<ArcId>& tree) const {
    const std::uint32_t V = g.vertex_count;
    std::vector<char> in(V, 0);
    std::vector<std::uint32_t> depth(V, 0);
    using Cand = std::tuple<double, std::int64_t, std::int64_t>;  // (cap, -depth, -arc)
    std::priority_queue<Cand> pq;
    auto push_out = [&](VertexId u) {
      for (ArcId a : out[u])
        if (cap[a] >= 1 && !in[g.arcs[a].dst])
          pq.emplace(cap[a], -static_cast<std::int64_t>(depth[u]), -static_cast<std::int64_t>(a));
    };
    in[root] = 1;
    std::uint32_t reached = is_receiver[root] ? 1 : 0;
    tree.clear();
    push_out(root);
    while (reached < receiver_count && !pq.empty()) {
      const ArcId a = static_cast<ArcId>(-std::get<2>(pq.top()));
      pq.pop();
      const VertexId v = g.arcs[a].dst;
      if (in[v]) continue;
      in[v] = 1;
      depth[v] = depth[g.arcs[a].src] + 1;
      tree.push_back(a);
      if (is_receiver[v]) ++reached;
      push_out(v);
    }
    if (reached < receiver_count) return false;
    // Prune relay leaves until every leaf is a receiver.
    std::vector<std::uint32_t> children(V, 0);
    for (ArcId a : tree) ++children[g.arcs[a].src];
    std::vector<char> keep(tree.size(), 1);
    bool changed = true;
    while (changed) {
      changed = false;
      for (std::size_t i = 0; i < tree.size(); ++i) {
        const VertexId v = g.arcs[tree[i]].dst;
        if (keep[i] && children[v] == 0 && !is_receiver[v]) {
          keep[i] = 0;
          --children[g.arcs[tree[i]].src];
          changed = true;
        }
      }
    }
    std::vector<ArcId> pruned;
    for (std::size_t i = 0; i < tree.size(); ++i)
      if (keep[i]) pruned.push_back(tree[i]);
    tree.swap(pruned);
    return true;
  }
};

double packing_time(const ArcGraph& g, const std::vector<Arborescence>& trees) {
  std::vector<double> load(g.arcs.size(), 0);
  for (const auto& t : trees)
    for (ArcId a : t.arcs) load[a] += t.bytes;
  double time = 0;
  for (ArcId a = 0; a < g.arcs.size(); ++a)
    if (load[a] > 0) time = std::max(time, load[a] / g.arcs[a].bandwidth_Bps);
  return time;
}

}  // namespace

ForestPacking pack_forest(const ArcGraph& g, const std::vector<std::uint32_t>& weight,
                          const std::vector<VertexId>& receivers, const ForestOptimum& opt,
                          double unit_bytes) {
  const TreeGrower grower(g, receivers);
  std::vector<VertexId> sources;
  for (VertexId u = 0; u < g.vertex_count; ++u)
    if (weight[u] > 0) sources.push_back(u);
  const double x = opt.rate_Bps();
  ForestPacking best;
  best.time_s = std::numeric_limits<double>::infinity();
  std::vector<ArcId> tree;
  auto attempt = [&](std::uint32_t k, bool capacitated) {
    std::vector<double> cap(g.arcs.size());
    for (ArcId a = 0; a < g.arcs.size(); ++a)
      cap[a] = capacitated ? std::floor(k * g.arcs[a].bandwidth_Bps / x * (1 + 1e-9)) : 1e18;
    std::vector<std::uint32_t> built(g.vertex_count, 0);
    std::vector<char> stuck(g.vertex_count, 0);
    std::vector<std::vector<std::vector<ArcId>>> per_source(g.vertex_count);
    // Round robin so that no source exhausts the shared links before the others start.
    bool progress = true;
    while (progress) {
      progress = false;
      for (VertexId u : sources) {
        if (stuck[u] || built[u] >= k * weight[u]) continue;
        if (!grower.grow(u, cap, tree)) {
          stuck[u] = 1;
          continue;
        }
        for (ArcId a : tree) cap[a] -= 1;
        per_source[u].push_back(tree);
        ++built[u];
        progress = true;
      }
    }
    ForestPacking p;
    p.trees_per_unit = k;
    p.complete = true;
    for (VertexId u : sources) {
      if (built[u] == 0) return;  // this k cannot serve every source
      if (built[u] < k * weight[u]) p.complete = false;
      for (auto& arcs : per_source[u])
        p.trees.push_back(Arborescence{u, std::move(arcs), unit_bytes * weight[u] / built[u]});
    }
    p.time_s = packing_time(g, p.trees);
    if (p.time_s < best.time_s * (1 - 1e-12)) best = std::move(p);
  };
  if (x > 0) {
    for (std::uint32_t k : {1u, 2u, 3u, 4u, 6u, 8u, 12u, 16u}) {
      attempt(k, true);
      if (best.complete) break;
    }
  }
  if (best.trees.empty()) attempt(1, false);  // one uncapacitated tree per source
  if (best.trees.empty())
    throw BadInput("forest: a member cannot be reached from a source", "collective members");
  return best;
}

namespace {

// Work budget of the exact packing in forest_schedule (edges scanned by its max-flows, about
// 4e8 per second here): past it the greedy packing stands, its gap reported.
constexpr std::uint64_t kExactForestWork = 400'000'000;

double deepest_latency(const ArcGraph& g, const std::vector<Arborescence>& trees) {
  double worst = 0;
  std::vector<double> at(g.vertex_count, 0);
  for (const auto& t : trees) {
    // Tree arcs were appended parent before child, so one pass accumulates root distances.
    at[t.root] = 0;
    for (ArcId a : t.arcs) {
      at[g.arcs[a].dst] = at[g.arcs[a].src] + g.arcs[a].latency_s;
      worst = std::max(worst, at[g.arcs[a].dst]);
    }
  }
  return worst;
}

}  // namespace

ForestSchedule forest_schedule(const Network& net, CollectiveOp op, const std::vector<VertexId>& members,
                               double bytes, VertexId root, bool with_flows, ForestAlgorithm algorithm) {
  if (op == CollectiveOp::AllToAll)
    throw BadInput("algorithm forest does not apply to alltoall", "collective.algorithm");
  ForestSchedule out;
  const double N = static_cast<double>(members.size());
  std::vector<std::uint32_t> weight(net.vertex_count(), 0);
  double unit = bytes / N;
  if (op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce) {
    weight[root] = 1;
    unit = bytes;
  } else {
    for (VertexId v : members) weight[v] = 1;
  }
  // Gathering phases run on the network; reducing phases on the reversed network, their trees
  // reversed (data flows from the leaves to the root).
  std::vector<bool> reversed_phases;
  switch (op) {
    case CollectiveOp::AllGather:
    case CollectiveOp::Broadcast:
      reversed_phases = {false};
      break;
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::Reduce:
      reversed_phases = {true};
      break;
    case CollectiveOp::AllReduce:
      reversed_phases = {true, false};
      break;
    case CollectiveOp::AllToAll:
      break;
  }
  for (bool reversed : reversed_phases) {
    const ArcGraph g = arc_graph(net, reversed);
    const ForestOptimum opt = forest_optimum(g, weight, members);
    // Exact: the greedy packing first, which meets the bound on regular fabrics in milliseconds;
    // the exact packing when it does not, within about a second of work.
    ForestPacking pack = pack_forest(g, weight, members, opt, unit);
    if (algorithm == ForestAlgorithm::Exact && !pack.complete)
      if (auto exact = pack_forest_exact(g, weight, members, opt, unit, nullptr, kExactForestWork))
        pack = std::move(*exact);
    out.optimal_time_s += unit / opt.rate_Bps();
    out.built_time_s += pack.time_s;
    out.last_optimum = opt;
    out.latency_s += deepest_latency(g, pack.trees);
    out.trees = static_cast<std::uint32_t>(pack.trees.size());
    if (with_flows) {
      std::vector<double> load(g.arcs.size(), 0);
      for (const auto& t : pack.trees)
        for (ArcId a : t.arcs) load[a] += t.bytes;
      for (ArcId a = 0; a < g.arcs.size(); ++a)
        if (load[a] > 0) out.flows.push_back(Flow{{a}, load[a], out.stages});
    }
    ++out.stages;
  }
  return out;
}

}  // namespace toposweep
