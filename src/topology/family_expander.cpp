#include <algorithm>
#include <random>
#include <unordered_set>

#include "merged_arcs.hpp"
#include "toposweep/topology/families.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::topology {
namespace {

// Uniform integer in [0, bound) from a 64-bit engine, identical on every platform (unlike
// std::uniform_int_distribution, whose algorithm is implementation-defined).
std::uint64_t below(std::mt19937_64& rng, std::uint64_t bound) {
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  std::uint64_t x;
  do x = rng();
  while (x >= limit);
  return x % bound;
}

// One attempt at a simple d-regular graph by random pairing of free port "points",
// rejecting loops and repeats (Steger & Wormald 1999). Empty on a dead end.
std::vector<std::pair<std::uint32_t, std::uint32_t>> try_pairing(std::uint32_t n, std::uint32_t d,
                                                                 std::mt19937_64& rng) {
  std::vector<std::uint32_t> points;
  points.reserve(static_cast<std::size_t>(n) * d);
  for (std::uint32_t v = 0; v < n; ++v)
    for (std::uint32_t p = 0; p < d; ++p) points.push_back(v);
  std::unordered_set<std::uint64_t> used;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  auto key = [](std::uint32_t a, std::uint32_t b) {
    return (std::uint64_t(std::min(a, b)) << 32) | std::max(a, b);
  };
  while (!points.empty()) {
    bool paired = false;
    for (std::size_t attempt = 0; attempt < 64 + 4 * points.size(); ++attempt) {
      const std::size_t i = below(rng, points.size()), j = below(rng, points.size());
      const std::uint32_t a = points[i], b = points[j];
      if (i == j || a == b || used.count(key(a, b))) continue;
      used.insert(key(a, b));
      edges.emplace_back(a, b);
      // Remove both points (larger index first so the smaller stays valid).
      for (std::size_t idx : {std::max(i, j), std::min(i, j)}) {
        points[idx] = points.back();
        points.pop_back();
      }
      paired = true;
      break;
    }
    if (!paired) return {};
  }
  return edges;
}

bool connected(std::uint32_t n, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& edges) {
  std::vector<std::uint32_t> parent(n);
  for (std::uint32_t v = 0; v < n; ++v) parent[v] = v;
  auto find = [&](std::uint32_t v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  };
  std::uint32_t components = n;
  for (const auto& [a, b] : edges) {
    const std::uint32_t ra = find(a), rb = find(b);
    if (ra != rb) {
      parent[ra] = rb;
      --components;
    }
  }
  return components == 1;
}

}  // namespace

Network build_expander(const ExpanderSpec& spec) {
  const std::uint32_t n = spec.servers, d = spec.degree;
  if (n < 3) throw InvalidDesign("an expander needs at least 3 servers", "topology.servers");
  if (d < 1 || d >= n)
    throw InvalidDesign(
        "degree " + std::to_string(d) + " must be between 1 and servers-1 = " + std::to_string(n - 1),
        "topology.degree");
  if ((std::uint64_t(n) * d) % 2 != 0)
    throw InvalidDesign("a d-regular graph needs servers x degree even (" + std::to_string(n) + " x " +
                            std::to_string(d) + ")",
                        "topology.degree");
  if (!(spec.link_bandwidth_Bps > 0))
    throw BadInput("link bandwidth must be positive", "topology.link_bandwidth");
  std::mt19937_64 rng(spec.seed);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  for (int attempt = 0; attempt < 1000 && edges.empty(); ++attempt) {
    edges = try_pairing(n, d, rng);
    // d = 1 is a matching and d = 2 a union of cycles: those are rarely connected, and the
    // caller learns it from the connectivity check, so only d >= 3 is redrawn.
    if (!edges.empty() && d >= 3 && !connected(n, edges)) edges.clear();
  }
  if (edges.empty())
    throw RuntimeFailure("could not draw a simple connected " + std::to_string(d) + "-regular graph on " +
                         std::to_string(n) + " vertices in 1000 attempts");
  NetworkBuilder b(n, spec.server.gpus, spec.server.intra_bandwidth_Bps);
  apply_server_fabric(b, spec.server, b.vertex_count());
  detail::MergedArcs arcs;
  for (const auto& [a, c] : edges) arcs.add_link(a, c, spec.link_bandwidth_Bps, spec.link_latency_s);
  arcs.flush_into(b);
  TopologyInfo info;
  info.kind = "expander";
  info.degree = d;
  info.link_bandwidth_Bps = spec.link_bandwidth_Bps;
  info.link_latency_s = spec.link_latency_s;
  info.optical = spec.optical;
  b.set_info(std::move(info));
  return std::move(b).build();
}

}  // namespace toposweep::topology
