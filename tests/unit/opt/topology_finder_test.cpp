#include "toposweep/opt/topology_finder.hpp"

#include <gtest/gtest.h>

#include <queue>
#include <random>
#include <set>

#include "toposweep/util/error.hpp"

namespace toposweep::opt {
namespace {

bool connected(const Network& net) {
  const std::uint32_t n = net.compute_count();
  std::vector<bool> seen(net.vertex_count(), false);
  std::queue<VertexId> q;
  q.push(0);
  seen[0] = true;
  while (!q.empty()) {
    const VertexId v = q.front();
    q.pop();
    for (ArcId a : net.out_arcs(v))
      if (!seen[net.arc(a).dst]) seen[net.arc(a).dst] = true, q.push(net.arc(a).dst);
  }
  for (std::uint32_t v = 0; v < n; ++v)
    if (!seen[v]) return false;
  return true;
}

// Ports a server uses = its egress bandwidth / port bandwidth (parallel links are merged).
double ports_used(const Network& net, VertexId v, double port_Bps) {
  double bw = 0;
  for (ArcId a : net.out_arcs(v)) bw += net.arc(a).bandwidth_Bps;
  return bw / port_Bps;
}

TEST(TopologyFinder, DegreeSplitFollowsVolumes) {
  EXPECT_EQ(ring_ports_for(4, 1.0, 0.0), 4u);
  EXPECT_EQ(ring_ports_for(5, 1.0, 0.0), 4u);  // rings come in pairs of ports
  EXPECT_EQ(ring_ports_for(8, 3.0, 1.0), 6u);  // 8 * 3/4
  EXPECT_EQ(ring_ports_for(8, 1.0, 3.0), 2u);  // 8 * 1/4
  EXPECT_EQ(ring_ports_for(8, 0.0, 1.0), 2u);  // never fewer than one ring
  EXPECT_EQ(ring_ports_for(4, 5.0, 3.0), 2u);  // round(2.5) = 3 -> even 2
}

TEST(TopologyFinder, RepeatedMatchingDiscountsMatchedPairs) {
  // Demand 0<->1 = 10, 2<->3 = 1, 0<->2 = 6. Round 1: {01, 23} (11) beats {02} (6).
  // Round 2: weights 01 -> 5, 23 -> 0.5, 02 -> 6: {02} (6) vs {01, 23} (5.5): 02 wins.
  std::vector<NodeDemand> d = {{0, 1, 6}, {1, 0, 4}, {2, 3, 1}, {0, 2, 6}};
  const auto links = match_mp_links(4, d, 2);
  ASSERT_EQ(links.size(), 3u);
  EXPECT_EQ(links[0], std::make_pair(0u, 1u));
  EXPECT_EQ(links[1], std::make_pair(2u, 3u));
  EXPECT_EQ(links[2], std::make_pair(0u, 2u));
}

TrafficDemand random_demand(std::uint32_t n, std::uint32_t g, std::mt19937_64& rng, bool contiguous) {
  TrafficDemand t;
  t.nodes = n;
  for (std::uint32_t b = 0; b < n / g; ++b) {
    AllReduceDemand ar;
    for (std::uint32_t i = 0; i < g; ++i) ar.nodes.push_back(contiguous ? b * g + i : b + i * (n / g));
    ar.bytes = 1e9;
    t.allreduce.push_back(ar);
  }
  std::uniform_int_distribution<std::uint32_t> node(0, n - 1);
  for (int k = 0; k < 3 * static_cast<int>(n); ++k) {
    const std::uint32_t a = node(rng), b = node(rng);
    if (a != b) t.mp.push_back({a, b, 1e8 * (1 + rng() % 50)});
  }
  return t;
}

TEST(TopologyFinder, NeverExceedsDegreeAndStaysConnected) {
  std::mt19937_64 rng(7);
  for (std::uint32_t n : {8u, 12u, 16u, 32u}) {
    for (std::uint32_t d : {2u, 3u, 4u, 6u}) {
      for (std::uint32_t g : {2u, 4u, n}) {
        if (n % g || d >= n) continue;
        for (bool contiguous : {false, true}) {
          const auto demand = random_demand(n, g, rng, contiguous);
          FinderSettings s;
          s.degree = d;
          s.link_bandwidth_Bps = 12.5e9;
          const auto design = find_topology(demand, s);
          EXPECT_TRUE(connected(design.network)) << n << " " << d << " " << g;
          EXPECT_GE(design.ring_ports, 2u);
          EXPECT_LE(design.ring_ports + design.mp_ports, d);
          for (std::uint32_t v = 0; v < n; ++v)
            EXPECT_LE(ports_used(design.network, v, 12.5e9), d + 1e-9) << n << " " << d << " v" << v;
          // The renumbering is a permutation, and every AllReduce group of size g lands on one
          // coset of the stride n/g.
          std::set<std::uint32_t> pos(design.position_of_node.begin(), design.position_of_node.end());
          EXPECT_EQ(pos.size(), n);
          if (design.ring_group == g && g < n)
            for (const auto& ar : demand.allreduce) {
              const std::uint32_t r = design.position_of_node[ar.nodes[0]] % (n / g);
              for (std::uint32_t v : ar.nodes) EXPECT_EQ(design.position_of_node[v] % (n / g), r);
            }
        }
      }
    }
  }
}

TEST(TopologyFinder, PureAllReduceUsesEveryPortForRings) {
  TrafficDemand t;
  t.nodes = 16;
  AllReduceDemand ar;
  for (std::uint32_t i = 0; i < 16; ++i) ar.nodes.push_back(i);
  ar.bytes = 1e9;
  t.allreduce.push_back(ar);
  FinderSettings s;
  s.degree = 4;
  s.link_bandwidth_Bps = 12.5e9;
  const auto design = find_topology(t, s);
  EXPECT_EQ(design.strides.size(), 2u);
  EXPECT_TRUE(design.mp_links.empty());
  EXPECT_EQ(design.ring_group, 16u);
  EXPECT_DOUBLE_EQ(design.allreduce_volume_bytes, 16 * 2e9 * 15 / 16);
}

TEST(TopologyFinder, BadDegree) {
  TrafficDemand t;
  t.nodes = 8;
  FinderSettings s;
  s.link_bandwidth_Bps = 1e9;
  s.degree = 1;
  EXPECT_THROW(find_topology(t, s), BadInput);
  s.degree = 8;
  EXPECT_THROW(find_topology(t, s), BadInput);
}

}  // namespace
}  // namespace toposweep::opt
