#include "toposweep/opt/topology_finder.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>

#include "toposweep/opt/matching.hpp"
#include "toposweep/topology/totient_perms.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::opt {
namespace {

// Ring AllReduce: each of the g members sends 2 b (g-1)/g.
double ring_volume(const AllReduceDemand& ar) {
  const double g = static_cast<double>(ar.nodes.size());
  return g < 2 ? 0.0 : g * 2.0 * ar.bytes * (g - 1) / g;
}

struct GroupLayout {
  std::uint32_t g = 0;
  std::vector<std::uint32_t> position_of_node;
};

// The group size with the largest AllReduce volume, and a numbering of the servers that puts
// each group of that size on one coset of the stride n/g (identity if they already are).
GroupLayout layout_groups(const TrafficDemand& demand, bool relabel) {
  const std::uint32_t n = demand.nodes;
  GroupLayout out;
  out.position_of_node.resize(n);
  std::iota(out.position_of_node.begin(), out.position_of_node.end(), 0u);
  out.g = n;
  std::map<std::uint32_t, double> volume_by_size;
  for (const auto& ar : demand.allreduce)
    if (ar.nodes.size() >= 2) volume_by_size[static_cast<std::uint32_t>(ar.nodes.size())] += ring_volume(ar);
  if (volume_by_size.empty()) return out;
  const auto best = std::max_element(volume_by_size.begin(), volume_by_size.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  const std::uint32_t g = best->first;
  if (g == n || n % g != 0) return out;  // full-size rings serve any group
  const std::uint32_t step = n / g;
  std::vector<const AllReduceDemand*> groups;
  std::vector<bool> taken(n, false);
  bool already_strided = true;
  for (const auto& ar : demand.allreduce) {
    if (ar.nodes.size() != g) continue;
    for (std::uint32_t v : ar.nodes)
      if (v >= n || taken[v]) return out;  // overlapping groups: no single coset layout
    for (std::uint32_t v : ar.nodes) taken[v] = true;
    for (std::size_t i = 1; i < ar.nodes.size(); ++i)
      if (ar.nodes[i] != ar.nodes[0] + i * step) already_strided = false;
    groups.push_back(&ar);
  }
  if (groups.size() > step) return out;
  out.g = g;
  if (already_strided || !relabel) {
    if (!already_strided) out.g = n;
    return out;
  }
  std::vector<bool> used(n, false);
  for (std::uint32_t b = 0; b < groups.size(); ++b)
    for (std::uint32_t i = 0; i < g; ++i) {
      const std::uint32_t pos = i * step + b;
      out.position_of_node[groups[b]->nodes[i]] = pos;
      used[pos] = true;
    }
  std::uint32_t next = 0;
  for (std::uint32_t v = 0; v < n; ++v) {
    if (taken[v]) continue;
    while (used[next]) ++next;
    out.position_of_node[v] = next;
    used[next] = true;
  }
  return out;
}

}  // namespace

std::uint32_t ring_ports_for(std::uint32_t degree, double allreduce_volume, double mp_volume) {
  const double total = allreduce_volume + mp_volume;
  std::uint32_t ring = degree;
  if (total > 0 && mp_volume > 0)
    ring = static_cast<std::uint32_t>(std::lround(degree * allreduce_volume / total));
  ring -= ring % 2;
  return std::clamp<std::uint32_t>(ring, 2, degree - degree % 2);
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> match_mp_links(std::uint32_t nodes,
                                                                    const std::vector<NodeDemand>& demand,
                                                                    std::uint32_t rounds) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, double> weight;
  for (const auto& d : demand)
    if (d.src != d.dst && d.src < nodes && d.dst < nodes && d.bytes > 0)
      weight[std::minmax(d.src, d.dst)] += d.bytes;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> links;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  for (std::uint32_t round = 0; round < rounds && !weight.empty(); ++round) {
    std::vector<WeightedEdge> edges;
    edges.reserve(weight.size());
    for (const auto& [pair, w] : weight) {
      auto it = links.find(pair);
      const double conn = it == links.end() ? 0.0 : it->second;
      edges.push_back({pair.first, pair.second, w / (conn + 1.0)});
    }
    const auto matched = maximum_weight_matching(nodes, edges);
    if (matched.empty()) break;
    for (const auto& pair : matched) {
      ++links[pair];
      out.push_back(pair);
    }
  }
  return out;
}

TopologyDesign find_topology(const TrafficDemand& demand, const FinderSettings& s) {
  const std::uint32_t n = demand.nodes;
  if (s.degree < 2)
    throw BadInput("TopologyFinder needs at least 2 ports per server (one bidirectional ring)",
                   "topology.degree");
  if (s.degree >= n)
    throw BadInput(
        "degree " + std::to_string(s.degree) + " must be below the number of servers " + std::to_string(n),
        "topology.degree");
  if (!(s.link_bandwidth_Bps > 0))
    throw BadInput("link bandwidth must be positive", "topology.link_bandwidth");

  TopologyDesign out;
  for (const auto& ar : demand.allreduce) out.allreduce_volume_bytes += ring_volume(ar);
  for (const auto& d : demand.mp) out.mp_volume_bytes += d.bytes;

  const GroupLayout layout = layout_groups(demand, s.relabel);
  out.position_of_node = layout.position_of_node;
  out.ring_group = layout.g;
  const std::uint32_t want_ring_ports =
      ring_ports_for(s.degree, out.allreduce_volume_bytes, out.mp_volume_bytes);
  out.strides = topology::totient_perms(n, layout.g, want_ring_ports / 2, "TopologyFinder ring group");
  // A stride of n/2 is one ring whose two directions reach the same neighbour; the topology
  // module counts it as 2 ports like any other.
  out.ring_ports = static_cast<std::uint32_t>(2 * out.strides.size());
  out.mp_ports = s.degree - out.ring_ports;

  std::vector<NodeDemand> mp = demand.mp;
  for (auto& d : mp) {
    d.src = out.position_of_node[d.src];
    d.dst = out.position_of_node[d.dst];
  }
  if (out.mp_ports > 0) out.mp_links = match_mp_links(n, mp, out.mp_ports);

  topology::TopoOptSpec spec;
  spec.servers = n;
  spec.degree = s.degree;
  spec.link_bandwidth_Bps = s.link_bandwidth_Bps;
  spec.link_latency_s = s.link_latency_s;
  spec.strides = out.strides;
  spec.extra_links = out.mp_links;
  spec.ring_group = layout.g;
  spec.server = s.server;
  out.network = topology::build_topoopt(spec, "TopologyFinder strides");
  return out;
}

Placement relabel_placement(const Placement& placement, const std::vector<std::uint32_t>& position_of_node) {
  Placement out = placement;
  for (auto& node : out.node_of_gpu)
    if (node < position_of_node.size()) node = position_of_node[node];
  return out;
}

}  // namespace toposweep::opt
