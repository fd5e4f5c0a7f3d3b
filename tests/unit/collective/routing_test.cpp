// Routing: shortest paths by hop count, per-hop ECMP splitting, Yen's k shortest paths.
#include "toposweep/collective/routing.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "test_networks.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep {
namespace {

// Leaf-spine: hosts 0,1 on leaf 4, hosts 2,3 on leaf 5, spines 6 and 7 joined to both leaves.
Network leaf_spine() {
  NetworkBuilder b(4);
  b.add_switches(4);
  b.add_link(0, 4, 1e9);
  b.add_link(1, 4, 1e9);
  b.add_link(2, 5, 1e9);
  b.add_link(3, 5, 1e9);
  for (VertexId spine : {6u, 7u}) {
    b.add_link(4, spine, 1e9);
    b.add_link(5, spine, 1e9);
  }
  return std::move(b).build();
}

std::vector<VertexId> vertices_of(const Network& net, const std::vector<ArcId>& path, VertexId src) {
  std::vector<VertexId> v{src};
  for (ArcId a : path) {
    EXPECT_EQ(net.arc(a).src, v.back());
    v.push_back(net.arc(a).dst);
  }
  return v;
}

TEST(Routing, ShortestPathMatchesBfsDistanceOnRandomGraphs) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 30; ++trial) {
    const std::uint32_t n = 5 + trial % 20;
    NetworkBuilder b(n);
    std::uniform_int_distribution<int> node(0, static_cast<int>(n) - 1);
    for (std::uint32_t e = 0; e < 2 * n; ++e) {
      const auto u = static_cast<VertexId>(node(rng)), v = static_cast<VertexId>(node(rng));
      if (u != v) b.add_arc(u, v, 1e9);
    }
    const Network net = std::move(b).build();
    RouteCache routes(net);
    for (VertexId s = 0; s < n; ++s) {
      for (VertexId t = 0; t < n; ++t) {
        const auto& dist = routes.distances_to(t);  // independent: one reverse BFS
        const auto path = routes.shortest_path(s, t);
        if (dist[s] == UINT32_MAX) {
          EXPECT_FALSE(path.has_value());
          continue;
        }
        ASSERT_TRUE(path.has_value());
        EXPECT_EQ(path->size(), dist[s]);
        const auto v = vertices_of(net, *path, s);
        EXPECT_EQ(v.back(), t);
      }
    }
  }
}

TEST(Routing, EcmpSplitsEvenlyOverTheSpines) {
  const Network net = leaf_spine();
  RouteCache routes(net);
  const auto& paths = routes.ecmp_paths(0, 2);
  ASSERT_EQ(paths.size(), 2u);
  for (const auto& p : paths) {
    EXPECT_EQ(p.arcs.size(), 4u);
    EXPECT_DOUBLE_EQ(p.fraction, 0.5);
  }
  // Same leaf: one path through the leaf.
  ASSERT_EQ(routes.ecmp_paths(0, 1).size(), 1u);
  EXPECT_EQ(routes.ecmp_paths(0, 1)[0].arcs.size(), 2u);
  const auto flows = routes.ecmp_flows(0, 3, 8e6, 5);
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_DOUBLE_EQ(flows[0].bytes + flows[1].bytes, 8e6);
  EXPECT_EQ(flows[0].stage, 5u);
  // Unreachable: bad input.
  NetworkBuilder b(2);
  b.add_arc(0, 1, 1e9);
  const Network oneway = std::move(b).build();
  RouteCache r2(oneway);
  EXPECT_THROW(r2.ecmp_paths(1, 0), BadInput);
}

TEST(Routing, EcmpSplitsPerHopNotPerPath) {
  // 0 -> {1, 2}; 1 -> 3; 2 -> {4, 5} -> 3... all of length 2 or 3: shortest are 0-1-3 only if
  // 2 reaches 3 in 2 hops. Here 0->1->3 and 0->2->3 and 0->2'->3 with 2 having two parallel arcs.
  NetworkBuilder b(4);
  b.add_arc(0, 1, 1e9);
  b.add_arc(0, 2, 1e9);
  b.add_arc(1, 3, 1e9);
  b.add_arc(2, 3, 1e9);
  b.add_arc(2, 3, 1e9);  // parallel link
  const Network net = std::move(b).build();
  RouteCache routes(net);
  const auto& paths = routes.ecmp_paths(0, 3);
  ASSERT_EQ(paths.size(), 3u);
  // Half goes via 1, the other half splits over the two parallel arcs from 2.
  std::vector<double> f;
  for (const auto& p : paths) f.push_back(p.fraction);
  std::sort(f.begin(), f.end());
  EXPECT_DOUBLE_EQ(f[0], 0.25);
  EXPECT_DOUBLE_EQ(f[1], 0.25);
  EXPECT_DOUBLE_EQ(f[2], 0.5);
}

TEST(Routing, KShortestPathsOnARing) {
  // 6-ring, 0 -> 2: the 2-hop way round, then the 4-hop way; no third loopless path.
  const Network net = testnet::ring(6, 1e9, 0);
  const auto paths = k_shortest_paths(net, 0, 2, 5);
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(vertices_of(net, paths[0], 0), (std::vector<VertexId>{0, 1, 2}));
  EXPECT_EQ(vertices_of(net, paths[1], 0), (std::vector<VertexId>{0, 5, 4, 3, 2}));
}

TEST(Routing, KShortestPathsCountOnCompleteGraph) {
  // K4, 0 -> 3: one direct path, two of 2 hops (via 1, via 2), two of 3 hops (0-1-2-3, 0-2-1-3):
  // 5 loopless paths, nondecreasing in length.
  const Network net = testnet::complete(4, 1e9, 0);
  const auto paths = k_shortest_paths(net, 0, 3, 10);
  ASSERT_EQ(paths.size(), 5u);
  const std::vector<std::size_t> lengths{1, 2, 2, 3, 3};
  for (std::size_t i = 0; i < paths.size(); ++i) {
    EXPECT_EQ(paths[i].size(), lengths[i]);
    const auto v = vertices_of(net, paths[i], 0);
    EXPECT_EQ(v.back(), 3u);
    std::vector<VertexId> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::unique(sorted.begin(), sorted.end()), sorted.end()) << "path " << i << " has a loop";
  }
}

// distances_to derives a server's distances from its switches' (d(v, dst) = 1 + min over the
// switches w above dst of d(v, w)): the same as a breadth-first search from every destination,
// on Clos fabrics (every server only under switches), on a switch network whose GPUs also link
// to each other (the MI250 mesh: searched directly) and on both at once (the DGX-A100 boxes).
TEST(Routing, HopDistancesEqualABreadthFirstSearchFromEveryVertex) {
  const auto bfs = [](const Network& net, VertexId dst) {
    std::vector<std::uint32_t> d(net.vertex_count(), std::numeric_limits<std::uint32_t>::max());
    std::vector<VertexId> queue{dst};
    d[dst] = 0;
    for (std::size_t i = 0; i < queue.size(); ++i)
      for (ArcId a = 0; a < net.arc_count(); ++a)
        if (net.arc(a).dst == queue[i] && d[net.arc(a).src] == std::numeric_limits<std::uint32_t>::max()) {
          d[net.arc(a).src] = d[queue[i]] + 1;
          queue.push_back(net.arc(a).src);
        }
    return d;
  };
  std::size_t checked = 0;
  for (const Network& net : {leaf_spine(), testnet::fat_tree(4, 1e9, 0), testnet::fat_tree(6, 1e9, 0),
                             testnet::dgx_a100(3), testnet::mi250(2)}) {
    RouteCache routes(net);
    // Servers first (their switches' searches run then), then the switches, then again.
    for (int round = 0; round < 2; ++round)
      for (VertexId dst = 0; dst < net.vertex_count(); ++dst) {
        ASSERT_EQ(routes.distances_to(dst), bfs(net, dst)) << net.info().kind << " to " << dst;
        ++checked;
      }
  }
  EXPECT_GT(checked, 300u);
}

}  // namespace
}  // namespace toposweep
