#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <queue>
#include <vector>

#include "toposweep/topology/metrics.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::topology {
namespace {

// Bit-parallel BFS: bit i of a vertex's word says "source i has reached it". One sweep over
// the arcs per level advances up to 64 searches at once.
void bfs_batch(const Network& net, std::uint32_t first_source, std::uint32_t sources, HopStats& stats,
               std::uint64_t& reached_pairs, double& hop_sum) {
  const std::uint32_t V = net.vertex_count(), C = net.compute_count();
  std::vector<std::uint64_t> visited(V, 0), frontier(V, 0), next(V, 0);
  for (std::uint32_t i = 0; i < sources; ++i) {
    visited[first_source + i] |= std::uint64_t{1} << i;
    frontier[first_source + i] |= std::uint64_t{1} << i;
  }
  std::vector<std::uint32_t> active;
  for (std::uint32_t i = 0; i < sources; ++i) active.push_back(first_source + i);
  for (std::uint32_t level = 1; !active.empty(); ++level) {
    std::vector<std::uint32_t> touched;
    for (std::uint32_t u : active) {
      const std::uint64_t f = frontier[u];
      for (ArcId a : net.out_arcs(u)) {
        const VertexId v = net.arc(a).dst;
        const std::uint64_t fresh = f & ~visited[v] & ~next[v];
        if (fresh == 0) continue;
        if (next[v] == 0) touched.push_back(v);
        next[v] |= fresh;
      }
    }
    for (std::uint32_t u : active) frontier[u] = 0;
    active.clear();
    for (std::uint32_t v : touched) {
      visited[v] |= next[v];
      frontier[v] = next[v];
      if (v < C) {
        const int count = std::popcount(next[v]);
        reached_pairs += count;
        hop_sum += static_cast<double>(count) * level;
        if (level > stats.diameter) stats.diameter = level;
      }
      next[v] = 0;
      active.push_back(v);
    }
  }
}

std::vector<bool> reach(const Network& net, VertexId start, bool forward) {
  std::vector<bool> seen(net.vertex_count(), false);
  std::vector<VertexId> stack{start};
  seen[start] = true;
  while (!stack.empty()) {
    const VertexId u = stack.back();
    stack.pop_back();
    for (ArcId a : forward ? net.out_arcs(u) : net.in_arcs(u)) {
      const VertexId v = forward ? net.arc(a).dst : net.arc(a).src;
      if (!seen[v]) {
        seen[v] = true;
        stack.push_back(v);
      }
    }
  }
  return seen;
}

}  // namespace

HopStats hop_stats(const Network& net) {
  HopStats stats;
  const std::uint32_t C = net.compute_count();
  if (C < 2) return stats;
  std::uint64_t reached = 0;
  double hop_sum = 0;
  if (net.info().vertex_transitive) {
    // Every compute node sees the same distance profile as node 0.
    bfs_batch(net, 0, 1, stats, reached, hop_sum);
    reached *= C;
    hop_sum *= C;
  } else {
    for (std::uint32_t first = 0; first < C; first += 64)
      bfs_batch(net, first, std::min<std::uint32_t>(64, C - first), stats, reached, hop_sum);
  }
  const std::uint64_t pairs = std::uint64_t(C) * (C - 1);
  stats.unreachable_pairs = pairs - reached;
  stats.mean_hops = reached == 0 ? 0 : hop_sum / static_cast<double>(reached);
  return stats;
}

bool is_connected(const Network& net) {
  const std::uint32_t C = net.compute_count();
  if (C <= 1) return true;
  const std::vector<bool> fwd = reach(net, 0, true), bwd = reach(net, 0, false);
  for (std::uint32_t v = 0; v < C; ++v)
    if (!fwd[v] || !bwd[v]) return false;
  return true;
}

void require_connected(const Network& net, const std::string& where) {
  if (is_connected(net)) return;
  const std::vector<bool> fwd = reach(net, 0, true);
  std::uint32_t count = 0;
  for (std::uint32_t v = 0; v < net.compute_count(); ++v) count += fwd[v];
  throw InvalidDesign("the topology is disconnected: compute node 0 reaches only " + std::to_string(count) +
                          " of " + std::to_string(net.compute_count()) + " compute nodes",
                      where);
}

std::vector<std::uint32_t> switch_levels(const Network& net) {
  std::vector<std::uint32_t> level(net.vertex_count(), std::numeric_limits<std::uint32_t>::max());
  std::queue<VertexId> q;
  for (VertexId v = 0; v < net.compute_count(); ++v) level[v] = 0, q.push(v);
  while (!q.empty()) {
    const VertexId v = q.front();
    q.pop();
    for (ArcId a : net.out_arcs(v)) {
      const VertexId w = net.arc(a).dst;
      if (level[w] == std::numeric_limits<std::uint32_t>::max()) level[w] = level[v] + 1, q.push(w);
    }
  }
  return level;
}

std::uint32_t arc_ports(const Network& net, const Arc& arc) {
  const double link = net.info().link_bandwidth_Bps;
  if (!(link > 0)) return 1;
  const double ports = std::round(arc.bandwidth_Bps / net.link_efficiency() / link);
  return ports < 1 ? 1 : static_cast<std::uint32_t>(ports);
}

PortStats port_stats(const Network& net) {
  PortStats s;
  for (VertexId v = 0; v < net.compute_count(); ++v) {
    std::uint32_t ports = 0;
    double egress = 0;
    for (ArcId a : net.out_arcs(v)) {
      ports += arc_ports(net, net.arc(a));
      egress += net.arc(a).bandwidth_Bps;
    }
    if (v == 0 || ports < s.min_ports) s.min_ports = ports;
    if (v == 0 || ports > s.max_ports) s.max_ports = ports;
    if (v == 0 || egress < s.min_egress_Bps) s.min_egress_Bps = egress;
    if (v == 0 || egress > s.max_egress_Bps) s.max_egress_Bps = egress;
  }
  for (const Arc& a : net.arcs()) s.total_ports += arc_ports(net, a);
  return s;
}

}  // namespace toposweep::topology
