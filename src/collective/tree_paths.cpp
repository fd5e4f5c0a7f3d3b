#include "toposweep/collective/tree_paths.hpp"

#include <algorithm>
#include <cstdint>

namespace toposweep {

std::optional<TreePaths> TreePaths::of(const Network& net) {
  const auto& groups = net.info().tree_groups;
  const std::uint32_t n = net.compute_count();
  if (groups.empty()) return std::nullopt;
  for (const auto& level : groups)
    if (level.size() != n) return std::nullopt;
  // One link up and one down, to and from the same switch; a leaf group is one switch, and a
  // switch one leaf group.
  std::vector<VertexId> leaf_switch;
  std::vector<std::uint32_t> group_of_switch(net.switch_count(), UINT32_MAX);
  for (VertexId v = 0; v < n; ++v) {
    const auto out = net.out_arcs(v), in = net.in_arcs(v);
    if (out.size() != 1 || in.size() != 1) return std::nullopt;
    const VertexId s = net.arc(out[0]).dst;
    if (net.arc(in[0]).src != s || !net.is_switch(s)) return std::nullopt;
    const std::uint32_t g = groups[0][v];
    if (g >= leaf_switch.size()) leaf_switch.resize(g + 1, VertexId{0});
    if (leaf_switch[g] == 0) leaf_switch[g] = s;  // a switch id is never 0: vertex 0 is a compute node
    std::uint32_t& owner = group_of_switch[s - n];
    if (owner == UINT32_MAX) owner = g;
    if (leaf_switch[g] != s || owner != g) return std::nullopt;
  }
  TreePaths t;
  t.net_ = &net;
  bool first = true;
  for (const Arc& a : net.arcs()) {
    if (!net.is_switch(a.src) || !net.is_switch(a.dst)) continue;
    if (first) {
      t.switch_bandwidth_Bps_ = a.bandwidth_Bps;
      t.switch_latency_s_ = a.latency_s;
      first = false;
    } else if (a.bandwidth_Bps != t.switch_bandwidth_Bps_ || a.latency_s != t.switch_latency_s_) {
      return std::nullopt;
    }
  }
  return t;
}

PathSums TreePaths::sums(VertexId src, VertexId dst) const {
  PathSums s;
  if (src == dst) return s;
  const auto& groups = net_->info().tree_groups;
  std::uint32_t level = 0;
  while (level < groups.size() && groups[level][src] != groups[level][dst]) ++level;
  s.hops = 2 * (level + 1);
  // In path order, as a walk along the path would add them.
  const Arc& up = net_->arc(net_->out_arcs(src)[0]);
  const Arc& down = net_->arc(net_->in_arcs(dst)[0]);
  s.latency_s += up.latency_s;
  for (std::uint32_t h = 2; h < s.hops; ++h) s.latency_s += switch_latency_s_;
  s.latency_s += down.latency_s;
  s.narrowest_Bps = std::min(up.bandwidth_Bps, down.bandwidth_Bps);
  if (s.hops > 2) s.narrowest_Bps = std::min(s.narrowest_Bps, switch_bandwidth_Bps_);
  return s;
}

}  // namespace toposweep
