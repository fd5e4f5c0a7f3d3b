#include "toposweep/opt/matching.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/maximum_weighted_matching.hpp>
#include <cmath>
#include <cstdint>
#include <map>

namespace toposweep::opt {

std::vector<std::pair<std::uint32_t, std::uint32_t>> maximum_weight_matching(
    std::uint32_t vertices, const std::vector<WeightedEdge>& edges) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, double> heaviest;
  for (const auto& e : edges) {
    if (e.u == e.v || !(e.weight > 0) || e.u >= vertices || e.v >= vertices) continue;
    const auto key = std::minmax(e.u, e.v);
    auto [it, inserted] = heaviest.emplace(key, e.weight);
    if (!inserted && e.weight > it->second) it->second = e.weight;
  }
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  if (heaviest.empty()) return out;
  // Boost's blossom code compares slacks for exact equality and can loop forever on rounded
  // doubles, so weights become integers: the largest maps to 2^40 (relative resolution 1e-12,
  // and the dual sums stay far from int64 overflow).
  double top = 0;
  for (const auto& [key, w] : heaviest) top = std::max(top, w);

  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property,
                                      boost::property<boost::edge_weight_t, std::int64_t>>;
  Graph g(vertices);
  constexpr double kScale = 1099511627776.0;  // 2^40
  for (const auto& [key, w] : heaviest) {
    const auto iw = static_cast<std::int64_t>(std::llround(w / top * kScale));
    if (iw > 0) boost::add_edge(key.first, key.second, iw, g);
  }
  std::vector<boost::graph_traits<Graph>::vertex_descriptor> mate(vertices);
  boost::maximum_weighted_matching(g, &mate[0]);
  const auto none = boost::graph_traits<Graph>::null_vertex();
  for (std::uint32_t v = 0; v < vertices; ++v)
    if (mate[v] != none && v < mate[v]) out.emplace_back(v, static_cast<std::uint32_t>(mate[v]));
  return out;
}

}  // namespace toposweep::opt
