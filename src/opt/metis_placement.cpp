#include "toposweep/opt/metis_placement.hpp"

#include <metis.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "toposweep/util/error.hpp"

namespace toposweep::opt {

namespace {

struct ServerGraph {
  std::vector<idx_t> xadj{0}, adjncy, adjwgt;
};

// The undirected graph of direct links between the compute nodes with index[v] >= 0 (numbered by
// index, n of them). METIS wants integer weights: scaled so the heaviest edge is 1e6.
ServerGraph server_graph(const Network& net, const std::vector<std::int64_t>& index, std::uint32_t n) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, double> w;
  for (const auto& a : net.arcs())
    if (!net.is_switch(a.src) && !net.is_switch(a.dst) && a.src != a.dst && index[a.src] >= 0 &&
        index[a.dst] >= 0)
      w[std::minmax(static_cast<std::uint32_t>(index[a.src]), static_cast<std::uint32_t>(index[a.dst]))] +=
          a.bandwidth_Bps;
  double top = 0;
  for (const auto& [e, b] : w) top = std::max(top, b);
  std::vector<std::vector<std::pair<idx_t, idx_t>>> adj(n);
  for (const auto& [e, b] : w) {
    const idx_t iw = std::max<idx_t>(1, static_cast<idx_t>(std::llround(b / top * 1e6)));
    adj[e.first].push_back({static_cast<idx_t>(e.second), iw});
    adj[e.second].push_back({static_cast<idx_t>(e.first), iw});
  }
  ServerGraph g;
  for (const auto& list : adj) {
    for (const auto& [v, iw] : list) g.adjncy.push_back(v), g.adjwgt.push_back(iw);
    g.xadj.push_back(static_cast<idx_t>(g.adjncy.size()));
  }
  return g;
}

}  // namespace

double internal_bandwidth(const Network& net, const std::vector<std::uint32_t>& group_of_node) {
  double total = 0;
  for (const auto& a : net.arcs())
    if (!net.is_switch(a.src) && !net.is_switch(a.dst) && a.src != a.dst &&
        group_of_node[a.src] == group_of_node[a.dst])
      total += a.bandwidth_Bps;
  return total;
}

NodeGrouping metis_node_groups(const Network& net, std::uint32_t groups, std::uint64_t seed,
                               const std::vector<std::uint32_t>* given_rank_order) {
  const std::uint32_t n = net.compute_count();
  if (groups == 0 || n % groups != 0)
    throw BadInput(std::to_string(groups) + " groups do not divide " + std::to_string(n) + " servers",
                   "placement groups");
  NodeGrouping out;
  std::vector<std::uint32_t> rank_order(n);
  for (std::uint32_t v = 0; v < n; ++v) rank_order[v] = v / (n / groups);
  if (given_rank_order) {
    if (given_rank_order->size() != n)
      throw RuntimeFailure("a rank-order grouping must name a group for each of the " + std::to_string(n) +
                           " servers");
    rank_order = *given_rank_order;
  }
  out.rank_order_internal_bandwidth_Bps = internal_bandwidth(net, rank_order);
  out.group_of_node = rank_order;
  out.internal_bandwidth_Bps = out.rank_order_internal_bandwidth_Bps;
  out.method = "rank_order";
  if (groups == 1) return out;

  std::vector<std::int64_t> all(n);
  for (std::uint32_t v = 0; v < n; ++v) all[v] = v;
  auto [xadj, adjncy, adjwgt] = server_graph(net, all, n);
  if (adjncy.empty()) return out;
  idx_t nv = static_cast<idx_t>(n), ncon = 1, nparts = static_cast<idx_t>(groups), objval = 0;
  std::vector<idx_t> part(n, 0);
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = static_cast<idx_t>(seed % 1000003);
  options[METIS_OPTION_UFACTOR] = 1;  // as balanced as METIS can make it
  real_t ubvec = 1.001f;
  const int status =
      METIS_PartGraphRecursive(&nv, &ncon, xadj.data(), adjncy.data(), nullptr, nullptr, adjwgt.data(),
                               &nparts, nullptr, &ubvec, options, &objval, part.data());
  if (status != METIS_OK) return out;
  std::vector<std::uint32_t> sizes(groups, 0);
  std::vector<std::uint32_t> grouping(n);
  for (std::uint32_t v = 0; v < n; ++v) {
    grouping[v] = static_cast<std::uint32_t>(part[v]);
    ++sizes[grouping[v]];
  }
  for (auto s : sizes)
    if (s != n / groups) return out;  // unequal sets cannot host equal TP/PP groups
  const double internal = internal_bandwidth(net, grouping);
  if (internal > out.rank_order_internal_bandwidth_Bps) {
    out.group_of_node = grouping;
    out.internal_bandwidth_Bps = internal;
    out.method = "metis";
  }
  return out;
}

std::vector<std::uint32_t> metis_partition(const Network& net, const std::vector<std::uint32_t>& nodes,
                                           std::uint32_t groups,
                                           const std::vector<std::uint16_t>& class_of_node,
                                           std::uint64_t seed) {
  const auto n = static_cast<std::uint32_t>(nodes.size());
  if (groups == 0 || n % groups != 0) return {};
  if (groups == 1) return std::vector<std::uint32_t>(n, 0);
  std::vector<std::int64_t> index(net.compute_count(), -1);
  for (std::uint32_t i = 0; i < n; ++i) index[nodes[i]] = i;
  auto [xadj, adjncy, adjwgt] = server_graph(net, index, n);
  if (adjncy.empty()) return {};
  // One balance constraint per class present: vertex weight 1 in its class's constraint.
  std::vector<std::uint16_t> classes;
  for (auto v : nodes)
    if (std::find(classes.begin(), classes.end(), class_of_node[v]) == classes.end())
      classes.push_back(class_of_node[v]);
  idx_t nv = static_cast<idx_t>(n), ncon = static_cast<idx_t>(classes.size()),
        nparts = static_cast<idx_t>(groups);
  std::vector<idx_t> vwgt(static_cast<std::size_t>(n) * classes.size(), 0);
  for (std::uint32_t i = 0; i < n; ++i)
    vwgt[i * classes.size() +
         (std::find(classes.begin(), classes.end(), class_of_node[nodes[i]]) - classes.begin())] = 1;
  std::vector<real_t> ubvec(classes.size(), 1.001f);
  std::vector<idx_t> part(n, 0);
  idx_t options[METIS_NOPTIONS], objval = 0;
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = static_cast<idx_t>(seed % 1000003);
  options[METIS_OPTION_UFACTOR] = 1;
  const int status =
      METIS_PartGraphRecursive(&nv, &ncon, xadj.data(), adjncy.data(), vwgt.data(), nullptr, adjwgt.data(),
                               &nparts, nullptr, ubvec.data(), options, &objval, part.data());
  if (status != METIS_OK) return {};
  // Exactly equal: every set the same size and the same count of each class.
  std::map<std::pair<std::uint32_t, std::uint16_t>, std::uint32_t> count;
  std::map<std::uint16_t, std::uint32_t> total;
  for (std::uint32_t i = 0; i < n; ++i) {
    ++count[{static_cast<std::uint32_t>(part[i]), class_of_node[nodes[i]]}];
    ++total[class_of_node[nodes[i]]];
  }
  for (std::uint32_t p = 0; p < groups; ++p)
    for (const auto& [c, t] : total)
      if (t % groups != 0 || count[{p, c}] != t / groups) return {};
  return std::vector<std::uint32_t>(part.begin(), part.end());
}

std::vector<std::uint32_t> grouping_positions(const NodeGrouping& g, std::uint32_t groups) {
  const std::uint32_t n = static_cast<std::uint32_t>(g.group_of_node.size());
  // Logical server j (rank-order group j / size) is played by the i-th server of group j/size.
  std::vector<std::vector<std::uint32_t>> members(groups);
  for (std::uint32_t v = 0; v < n; ++v) members[g.group_of_node[v]].push_back(v);
  std::vector<std::uint32_t> position(n);
  std::uint32_t j = 0;
  for (const auto& m : members)
    for (std::uint32_t v : m) position[j++] = v;
  return position;
}

}  // namespace toposweep::opt
