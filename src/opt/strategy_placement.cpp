#include "toposweep/opt/strategy_placement.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include "toposweep/opt/metis_placement.hpp"
#include "toposweep/opt/topology_finder.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/workload/ranks.hpp"

namespace toposweep::opt {

PlacementKind parse_placement_kind(const std::string& text, const std::string& where) {
  if (text == "rank_order") return PlacementKind::RankOrder;
  if (text == "metis") return PlacementKind::Metis;
  throw BadInput("placement must be rank_order or metis, not '" + text + "'", where);
}

const char* placement_kind_name(PlacementKind k) {
  return k == PlacementKind::Metis ? "metis" : "rank_order";
}

std::vector<std::vector<std::uint32_t>> logical_server_groups(std::uint32_t gpus, std::uint32_t gpus_per_node,
                                                              std::uint32_t tp, std::uint32_t pp,
                                                              bool pipeline) {
  if (gpus == 0 || gpus_per_node == 0 || tp == 0 || pp == 0 || gpus % gpus_per_node != 0 ||
      gpus % (tp * pp) != 0)
    return {};
  const std::uint32_t dp = gpus / (tp * pp);
  const std::uint32_t servers = gpus / gpus_per_node;
  std::set<std::vector<std::uint32_t>> distinct;
  // Every PP (or TP) group of the rank grid, as the set of servers it spans.
  const AxisGrid grid{{Axis::Tp, tp}, {Axis::Dp, dp}, {Axis::Pp, pp}};
  for (const auto& group : grid.groups(pipeline ? Axis::Pp : Axis::Tp).groups) {
    std::set<std::uint32_t> nodes;
    for (std::uint32_t r : group) nodes.insert(r / gpus_per_node);
    distinct.insert(std::vector<std::uint32_t>(nodes.begin(), nodes.end()));
  }
  // Mapping groups onto server sets only makes sense when they partition the servers equally.
  std::vector<std::vector<std::uint32_t>> groups(distinct.begin(), distinct.end());
  std::vector<std::uint32_t> seen(servers, 0);
  for (const auto& g : groups) {
    if (g.size() < 2 || g.size() != groups.front().size()) return {};
    for (std::uint32_t v : g)
      if (seen[v]++) return {};
  }
  return groups;
}

namespace {

// Servers that can take each other's place: same device, GPU count and fabric. All 0 when the
// servers are alike.
std::vector<std::uint16_t> server_classes(const Network& net,
                                          std::span<const std::uint16_t> device_of_server) {
  const std::uint32_t n = net.compute_count();
  std::vector<std::uint16_t> cls(n, 0);
  if (net.uniform_servers() && device_of_server.empty()) return cls;
  std::vector<std::tuple<std::uint16_t, std::uint32_t, LinkClass>> seen;
  for (VertexId v = 0; v < n; ++v) {
    const std::tuple<std::uint16_t, std::uint32_t, LinkClass> key{
        device_of_server.empty() ? std::uint16_t{0} : device_of_server[v], net.gpus_on(v), net.intra_link(v)};
    auto it = std::find(seen.begin(), seen.end(), key);
    if (it == seen.end()) it = seen.insert(seen.end(), key);
    cls[v] = static_cast<std::uint16_t>(it - seen.begin());
  }
  return cls;
}

// Mixed servers: logical groups mapped onto METIS sets of the same class composition, each
// logical server onto a physical server of its own class (header).
void place_by_class(const Network& net, std::uint32_t gpus, std::uint32_t tp, std::uint32_t pp,
                    const std::vector<std::uint16_t>& cls, std::uint64_t seed, StrategyPlacement& out) {
  const std::uint32_t n = net.compute_count(), g = net.gpus_per_node();
  if (!net.uniform_gpus() || gpus != net.gpu_count()) return;
  auto logical = logical_server_groups(gpus, g, tp, pp, false);
  out.grouped = "tp";
  if (logical.empty()) {
    logical = logical_server_groups(gpus, g, tp, pp, true);
    out.grouped = "pp";
  }
  if (logical.empty()) {
    out.grouped.clear();
    return;
  }
  out.node_groups = logical;
  const auto composition = [&](const std::vector<std::uint32_t>& servers) {
    std::vector<std::uint16_t> c;
    for (auto v : servers) c.push_back(cls[v]);
    std::sort(c.begin(), c.end());
    return c;
  };
  const auto size = static_cast<std::uint32_t>(logical.front().size());
  bool single = true, equal = true;
  for (const auto& grp : logical) {
    const auto c = composition(grp);
    single = single && c.front() == c.back();
    equal = equal && c == composition(logical.front());
  }
  // sets[i]: the physical servers playing logical group i.
  std::vector<std::vector<std::uint32_t>> sets(logical.size());
  if (single) {
    // Class by class: that class's logical groups onto METIS sets of that class's servers.
    std::vector<std::uint16_t> done;
    for (std::size_t i = 0; i < logical.size(); ++i) {
      const std::uint16_t c = cls[logical[i][0]];
      if (std::find(done.begin(), done.end(), c) != done.end()) continue;
      done.push_back(c);
      std::vector<std::size_t> mine;
      for (std::size_t j = 0; j < logical.size(); ++j)
        if (cls[logical[j][0]] == c) mine.push_back(j);
      std::vector<std::uint32_t> nodes;
      for (VertexId v = 0; v < n; ++v)
        if (cls[v] == c) nodes.push_back(v);
      const auto part = metis_partition(net, nodes, static_cast<std::uint32_t>(mine.size()), cls, seed);
      for (std::size_t k = 0; k < mine.size(); ++k)
        sets[mine[k]] = logical[mine[k]];  // rank order by default
      if (part.empty()) continue;
      for (std::size_t k = 0; k < mine.size(); ++k) sets[mine[k]].clear();
      for (std::size_t x = 0; x < nodes.size(); ++x) sets[mine[part[x]]].push_back(nodes[x]);
    }
  } else if (equal) {
    std::vector<std::uint32_t> nodes(n);
    for (VertexId v = 0; v < n; ++v) nodes[v] = v;
    const auto part = metis_partition(net, nodes, static_cast<std::uint32_t>(logical.size()), cls, seed);
    if (part.empty()) return;
    for (VertexId v = 0; v < n; ++v) sets[part[v]].push_back(v);
  } else {
    return;
  }
  // Member by member, class by class (both sides stable-sorted by class).
  std::vector<std::uint32_t> position(n), group_of(n), rank_group(n);
  for (VertexId v = 0; v < n; ++v) position[v] = v;
  for (std::size_t i = 0; i < logical.size(); ++i) {
    auto l = logical[i];
    auto p = sets[i];
    if (p.size() != size) return;
    const auto by_class = [&](std::uint32_t a, std::uint32_t b) { return cls[a] < cls[b]; };
    std::stable_sort(l.begin(), l.end(), by_class);
    std::stable_sort(p.begin(), p.end(), by_class);
    for (std::size_t j = 0; j < size; ++j) {
      if (cls[l[j]] != cls[p[j]]) return;
      position[l[j]] = p[j];
      group_of[p[j]] = static_cast<std::uint32_t>(i);
      rank_group[l[j]] = static_cast<std::uint32_t>(i);
    }
  }
  out.rank_order_internal_bandwidth_Bps = internal_bandwidth(net, rank_group);
  out.internal_bandwidth_Bps = internal_bandwidth(net, group_of);
  if (!(out.internal_bandwidth_Bps > out.rank_order_internal_bandwidth_Bps)) {
    out.internal_bandwidth_Bps = out.rank_order_internal_bandwidth_Bps;
    return;
  }
  out.node_groups = sets;
  out.placement = relabel_placement(out.placement, position);
  out.method = "metis";
}

}  // namespace

StrategyPlacement place_strategy(const Network& net, std::uint32_t gpus, std::uint32_t tp, std::uint32_t pp,
                                 PlacementKind kind, std::uint64_t seed,
                                 std::span<const std::uint16_t> device_of_server) {
  StrategyPlacement out;
  out.requested = kind;
  const std::uint32_t g = net.gpus_per_node();
  out.placement = sim::rank_order_on(net, gpus);
  if (kind == PlacementKind::RankOrder) return out;
  const auto cls = server_classes(net, device_of_server);
  if (std::any_of(cls.begin(), cls.end(), [](std::uint16_t c) { return c != 0; })) {
    place_by_class(net, gpus, tp, pp, cls, seed, out);
    return out;
  }

  auto logical = logical_server_groups(gpus, g, tp, pp, false);
  out.grouped = "tp";
  if (logical.empty()) {
    logical = logical_server_groups(gpus, g, tp, pp, true);
    out.grouped = "pp";
  }
  const std::uint32_t n = net.compute_count();
  if (logical.empty() || n % logical.front().size() != 0) {
    out.grouped.clear();
    return out;
  }
  out.node_groups = logical;  // rank order: logical server j is server j
  const auto size = static_cast<std::uint32_t>(logical.front().size());
  // What METIS must beat: the servers rank order actually groups (strided for pipelines), with
  // servers the strategy leaves unused in consecutive blocks after them.
  std::vector<std::uint32_t> rank_order_groups(n);
  for (std::size_t i = 0; i < logical.size(); ++i)
    for (std::uint32_t v : logical[i]) rank_order_groups[v] = static_cast<std::uint32_t>(i);
  const std::uint32_t used = gpus / g;
  for (std::uint32_t v = used; v < n; ++v)
    rank_order_groups[v] = static_cast<std::uint32_t>(logical.size()) + (v - used) / size;
  const NodeGrouping grouping = metis_node_groups(net, n / size, seed, &rank_order_groups);
  out.internal_bandwidth_Bps = grouping.internal_bandwidth_Bps;
  out.rank_order_internal_bandwidth_Bps = grouping.rank_order_internal_bandwidth_Bps;
  if (grouping.method != "metis") return out;

  // Logical group i is played by METIS set i, member by member.
  std::vector<std::vector<std::uint32_t>> members(n / size);
  for (std::uint32_t v = 0; v < n; ++v) members[grouping.group_of_node[v]].push_back(v);
  std::vector<std::uint32_t> position(gpus / g);
  for (std::size_t i = 0; i < logical.size(); ++i) {
    for (std::size_t j = 0; j < size; ++j) position[logical[i][j]] = members[i][j];
    out.node_groups[i] = members[i];
  }
  out.placement = relabel_placement(out.placement, position);
  out.method = "metis";
  return out;
}

}  // namespace toposweep::opt
