#include "toposweep/opt/strategy_placement.hpp"

#include <algorithm>
#include <set>

#include "toposweep/opt/metis_placement.hpp"
#include "toposweep/opt/topology_finder.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/util/error.hpp"

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
  // One parallel group: fix the other two indices, run over this one.
  const std::uint32_t outer = pipeline ? tp * dp : dp * pp;
  for (std::uint32_t o = 0; o < outer; ++o) {
    std::set<std::uint32_t> nodes;
    if (pipeline) {
      for (std::uint32_t p = 0; p < pp; ++p) nodes.insert((o + tp * dp * p) / gpus_per_node);
    } else {
      for (std::uint32_t t = 0; t < tp; ++t) nodes.insert((t + tp * o) / gpus_per_node);
    }
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

StrategyPlacement place_strategy(const Network& net, std::uint32_t gpus, std::uint32_t tp, std::uint32_t pp,
                                 PlacementKind kind, std::uint64_t seed, bool mixed_devices) {
  StrategyPlacement out;
  out.requested = kind;
  const std::uint32_t g = net.gpus_per_node();
  out.placement = sim::rank_order_on(net, gpus);
  if (kind == PlacementKind::RankOrder) return out;
  // Servers of different sizes cannot swap places (a logical server's ranks would not fit):
  // rank order. Servers with different fabrics or devices could swap only within a class; the
  // METIS grouping does not know classes yet, so they keep rank order too (docs/models.md).
  if (!net.uniform_servers() || mixed_devices) return out;

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
