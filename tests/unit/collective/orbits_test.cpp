// Rotation-symmetric networks routed once per orbit (RouteCache::distances_to, path_sums): the
// hop distances rotated from vertex 0's equal a breadth-first search's to every vertex, and on a
// circulant whose arcs are all alike the path sums from the hop distance equal the searched
// path's, bit for bit. Networks that rotation does not map onto themselves are searched.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <limits>

#include "test_networks.hpp"
#include "toposweep/collective/routing.hpp"

namespace toposweep {
namespace {

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Hop distances to dst by a plain breadth-first search over in-arcs (not the code under test).
std::vector<std::uint32_t> bfs_to(const Network& net, VertexId dst) {
  std::vector<std::uint32_t> d(net.vertex_count(), std::numeric_limits<std::uint32_t>::max());
  std::deque<VertexId> q{dst};
  d[dst] = 0;
  while (!q.empty()) {
    const VertexId u = q.front();
    q.pop_front();
    for (ArcId a : net.in_arcs(u))
      if (d[net.arc(a).src] == std::numeric_limits<std::uint32_t>::max()) {
        d[net.arc(a).src] = d[u] + 1;
        q.push_back(net.arc(a).src);
      }
  }
  return d;
}

// Stride 1's links a little slower than the others: still rotation-symmetric, arcs not alike.
Network two_speed_circulant(std::uint32_t n) {
  return testnet::circulant(n, {{1, 10e9}, {5, 12.5e9}, {7, 12.5e9}}, 1e-6);
}

TEST(Orbits, RotatedDistancesEqualSearchedOnes) {
  for (const Network& net : {testnet::circulant(30, {1u, 7u, 11u}, 12.5e9, 1e-6), two_speed_circulant(24),
                             testnet::circulant(16, {4u}, 12.5e9, 1e-6) /* disconnected */}) {
    RouteCache routes(net);
    EXPECT_TRUE(routes.rotation_symmetric());
    for (VertexId d = net.vertex_count(); d-- > 0;) EXPECT_EQ(routes.distances_to(d), bfs_to(net, d)) << d;
  }
}

TEST(Orbits, PathSumsFromHopDistancesEqualTheSearchedPathsSums) {
  for (const Network& net : {testnet::circulant(30, {1u, 7u, 11u}, 12.5e9, 7e-7),
                             testnet::circulant(17, {1u, 3u}, 25e9, 1.3e-6), two_speed_circulant(24)}) {
    RouteCache routes(net), search(net);
    for (VertexId a = 0; a < net.compute_count(); ++a)
      for (VertexId b = 0; b < net.compute_count(); ++b) {
        SCOPED_TRACE(std::to_string(a) + " -> " + std::to_string(b));
        const auto got = routes.path_sums(a, b);
        const auto path = search.shortest_path(a, b);
        ASSERT_TRUE(got && path);
        const PathSums want = path_sums(net, *path);
        EXPECT_EQ(got->hops, want.hops);
        EXPECT_TRUE(same_bits(got->latency_s, want.latency_s)) << got->latency_s << " vs " << want.latency_s;
        EXPECT_TRUE(same_bits(got->narrowest_Bps, want.narrowest_Bps));
      }
  }
}

TEST(Orbits, NetworksRotationDoesNotMapOntoThemselvesAreSearched) {
  // An extra chord, a switch, one link slower than its stride's others: not symmetric.
  NetworkBuilder chord(12);
  for (std::uint32_t i = 0; i < 12; ++i) chord.add_link(i, (i + 1) % 12, 10e9, 1e-6);
  chord.add_link(0, 6, 10e9, 1e-6);
  NetworkBuilder slow(12);
  for (std::uint32_t i = 0; i < 12; ++i) slow.add_link(i, (i + 1) % 12, i == 3 ? 5e9 : 10e9, 1e-6);
  for (const Network& net :
       {std::move(chord).build(), std::move(slow).build(), testnet::star(8, 10e9, 1e-6)}) {
    RouteCache routes(net);
    EXPECT_FALSE(routes.rotation_symmetric());
    for (VertexId d = 0; d < net.vertex_count(); ++d) EXPECT_EQ(routes.distances_to(d), bfs_to(net, d));
  }
}

}  // namespace
}  // namespace toposweep
