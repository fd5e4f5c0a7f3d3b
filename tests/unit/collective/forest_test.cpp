// Forest (topology-adaptive) collectives: the exact cut bound against closed forms, brute force
// over vertex subsets and Nash-Williams--Tutte; the built packing's validity.
#include "toposweep/collective/forest.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <set>

#include "forest_checks.hpp"
#include "test_networks.hpp"
#include "toposweep/collective/plan.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep {
namespace {

constexpr double kB = 25e9;
constexpr double kM = 1e9;

CollectiveRequest request(CollectiveOp op, std::vector<VertexId> nodes, double bytes = kM) {
  CollectiveRequest r;
  r.op = op;
  r.nodes = std::move(nodes);
  r.bytes = bytes;
  return r;
}

using testnet::brute_force_rate;
using testnet::check_packing;

std::vector<std::uint32_t> unit_weights(const Network& net, const std::vector<VertexId>& members) {
  return testnet::unit_weights(net.vertex_count(), members);
}

TEST(ForestOptimum, ClosedFormsOnRingCompleteAndSwitch) {
  for (std::uint32_t n : {3u, 5u, 8u}) {
    const auto members = testnet::iota_nodes(n);
    // Bidirectional ring: the worst cut leaves one node out, 2b entering it for n-1 units.
    const Network ring = testnet::ring(n, kB, 0);
    auto p = plan_collective(ring, request(CollectiveOp::AllGather, members), "forest");
    EXPECT_NEAR(p.optimal_time_s, kM / n * (n - 1) / (2 * kB), 1e-15);
    // Complete graph: every node receives at (n-1) b, one unit per peer.
    const Network k = testnet::complete(n, kB, 0);
    p = plan_collective(k, request(CollectiveOp::AllGather, members), "forest");
    EXPECT_NEAR(p.optimal_time_s, kM / n / kB, 1e-15);
    EXPECT_NEAR(p.built_time_s, p.optimal_time_s, 1e-15);
    EXPECT_EQ(p.trees, n);
    // Switch: the switch's downlink to the left-out node carries n-1 units.
    const Network star = testnet::star(n, kB, 0);
    p = plan_collective(star, request(CollectiveOp::AllGather, members), "forest");
    EXPECT_NEAR(p.optimal_time_s, kM / n * (n - 1) / kB, 1e-15);
    EXPECT_NEAR(p.built_time_s, p.optimal_time_s, 1e-15);
    // AllReduce = ReduceScatter (reversed network) + AllGather.
    p = plan_collective(star, request(CollectiveOp::AllReduce, members), "forest");
    EXPECT_NEAR(p.optimal_time_s, 2 * kM / n * (n - 1) / kB, 1e-15);
    EXPECT_EQ(p.algorithm, "forest");
  }
  // Odd rings pack exactly: each node's tree goes (n-1)/2 hops each way.
  const Network ring7 = testnet::ring(7, kB, 0);
  const auto p = plan_collective(ring7, request(CollectiveOp::AllGather, testnet::iota_nodes(7)), "forest");
  EXPECT_NEAR(p.built_time_s, p.optimal_time_s, 1e-15);
}

TEST(ForestOptimum, ReportsTheCriticalCutAsAnExactRational) {
  // Triangle 0-1 @10, 1-2 @10, 0-2 @20 GB/s: single nodes give 30, 20, 30 per member; pairs
  // {0,1}: 30/2, {0,2}: 20/2 (the links into node 1), {1,2}: 30/2. x* = 20 GB/s over 2 members.
  NetworkBuilder b(3);
  b.add_link(0, 1, 10e9);
  b.add_link(1, 2, 10e9);
  b.add_link(0, 2, 20e9);
  const Network net = std::move(b).build();
  const auto p = plan_collective(net, request(CollectiveOp::AllGather, {0, 1, 2}, 3e9), "forest");
  EXPECT_EQ(p.cut_bandwidth_Bps, 20e9);
  EXPECT_EQ(p.cut_weight, 2u);
  EXPECT_NEAR(p.optimal_time_s, 1e9 / 10e9, 1e-15);
  const ForestOptimum opt = forest_optimum(arc_graph(net), {1, 1, 1}, {0, 1, 2});
  EXPECT_EQ(opt.critical_set, (std::vector<VertexId>{0, 2}));
}

TEST(ForestOptimum, BroadcastIsTheMinimumCutFromTheRoot) {
  // Heterogeneous 4-node graph; from root 0 the min cut to node 3 is 10 + 5 (hand-checked).
  NetworkBuilder b(4);
  b.add_link(0, 1, 20e9);
  b.add_link(0, 2, 10e9);
  b.add_link(1, 3, 10e9);
  b.add_link(2, 3, 5e9);
  b.add_link(1, 2, 40e9);
  const Network net = std::move(b).build();
  auto req = request(CollectiveOp::Broadcast, testnet::iota_nodes(4));
  const auto p = plan_collective(net, req, "forest");
  EXPECT_NEAR(p.optimal_time_s, kM / 15e9, 1e-15);
}

// Random strongly connected digraph: a bidirectional backbone cycle plus random arcs, integer
// GB/s bandwidths; the last `switches` vertices are switches.
Network random_graph(std::mt19937_64& rng, std::uint32_t computes, std::uint32_t switches,
                     std::uint32_t extra) {
  NetworkBuilder b(computes);
  if (switches) b.add_switches(switches);
  const std::uint32_t V = computes + switches;
  std::uniform_int_distribution<int> bw(1, 8), vert(0, static_cast<int>(V) - 1);
  for (std::uint32_t i = 0; i < V; ++i) b.add_link(i, (i + 1) % V, bw(rng) * 1e9);
  for (std::uint32_t e = 0; e < extra; ++e) {
    const auto u = static_cast<VertexId>(vert(rng)), v = static_cast<VertexId>(vert(rng));
    if (u != v) b.add_arc(u, v, bw(rng) * 1e9);
  }
  return std::move(b).build();
}

TEST(ForestOptimum, MatchesBruteForceOnRandomHeterogeneousGraphs) {
  std::mt19937_64 rng(20230401);
  int complete = 0, packings = 0;
  double worst_gap = 1;
  for (int trial = 0; trial < 60; ++trial) {
    const std::uint32_t computes = 3 + trial % 6;    // 3..8
    const std::uint32_t switches = (trial / 6) % 3;  // 0..2, at most 10 vertices
    const Network net = random_graph(rng, computes, switches, 2 + trial % 9);
    // Members: all compute nodes, or every other one (the rest relay).
    std::vector<VertexId> members;
    for (VertexId v = 0; v < computes; ++v)
      if (trial % 2 == 0 || v % 2 == 0) members.push_back(v);
    if (members.size() < 2) continue;
    for (bool reversed : {false, true}) {
      const ArcGraph g = arc_graph(net, reversed);
      const auto w = unit_weights(net, members);
      const ForestOptimum opt = forest_optimum(g, w, members);
      const double brute = brute_force_rate(g, w, members);
      ASSERT_NEAR(opt.rate_Bps(), brute, brute * 1e-12) << "trial " << trial;
      // The greedy packing: valid, never below the bound, possibly above it.
      const ForestPacking pack = pack_forest(g, w, members, opt, kM / members.size());
      check_packing(g, w, members, opt.rate_Bps(), pack, kM / members.size());
      complete += pack.complete;
      ++packings;
      worst_gap = std::max(worst_gap, pack.time_s / (kM / members.size() / opt.rate_Bps()));
    }
  }
  RecordProperty("greedy_complete_packings", complete);
  RecordProperty("packings", packings);
  RecordProperty("greedy_worst_built_over_optimal", std::to_string(worst_gap));
}

// Nash-Williams--Tutte: the number of edge-disjoint spanning trees of an undirected multigraph is
// min over partitions P of floor(|E(P)| / (|P| - 1)), |E(P)| the edges between parts. Each such
// tree, oriented away from a root, is an arborescence, so the broadcast rate from any root
// (unit-bandwidth arcs both ways) is at least that count; and by Nash-Williams a 2t-edge-connected
// graph has t trees, so the count is at least floor(rate / 2).
std::uint32_t nash_williams_tutte(std::uint32_t V, const std::vector<std::pair<int, int>>& edges) {
  std::uint32_t best = std::numeric_limits<std::uint32_t>::max();
  std::vector<int> part(V, 0);
  std::function<void(std::uint32_t, int)> rec = [&](std::uint32_t i, int parts) {
    if (i == V) {
      if (parts < 2) return;
      std::uint32_t crossing = 0;
      for (auto [a, b] : edges) crossing += part[a] != part[b];
      best = std::min(best, crossing / static_cast<std::uint32_t>(parts - 1));
      return;
    }
    for (int p = 0; p <= parts; ++p) {
      part[i] = p;
      rec(i + 1, std::max(parts, p + 1));
    }
  };
  rec(0, 0);
  return best;
}

TEST(ForestOptimum, NashWilliamsTutteBoundsOnRandomMultigraphs) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const std::uint32_t V = 3 + trial % 5;  // 3..7
    std::uniform_int_distribution<int> vert(0, static_cast<int>(V) - 1);
    std::vector<std::pair<int, int>> edges;
    for (std::uint32_t i = 0; i < V; ++i) edges.emplace_back(i, (i + 1) % V);
    for (int e = 0; e < 3 + trial % 12; ++e) {
      const int a = vert(rng), b = vert(rng);
      if (a != b) edges.emplace_back(a, b);
    }
    NetworkBuilder b(V);
    for (auto [x, y] : edges) b.add_link(static_cast<VertexId>(x), static_cast<VertexId>(y), 1.0);
    const Network net = std::move(b).build();
    const std::uint32_t trees = nash_williams_tutte(V, edges);
    std::vector<std::uint32_t> w(V, 0);
    w[0] = 1;
    const ForestOptimum opt = forest_optimum(arc_graph(net), w, testnet::iota_nodes(V));
    const double rate = opt.rate_Bps();  // = edge connectivity (min cut from the root)
    EXPECT_GE(rate, trees - 1e-9) << "trial " << trial;
    EXPECT_GE(trees, std::floor(rate / 2 + 1e-9)) << "trial " << trial;
    // And the connectivity itself by brute force over cuts containing the root.
    double cut = std::numeric_limits<double>::infinity();
    for (std::uint32_t mask = 1; mask < (1u << V) - 1; ++mask) {
      if (!(mask & 1)) continue;
      double c = 0;
      for (auto [x, y] : edges) c += ((mask >> x & 1) != (mask >> y & 1));
      cut = std::min(cut, c);
    }
    EXPECT_DOUBLE_EQ(rate, cut);
  }
}

TEST(ForestSchedule, FlowsCarryThePackingAndAllToAllIsRefused) {
  const Network star = testnet::star(4, kB, 1e-6);
  CollectiveOptions opt;
  opt.with_flows = true;
  const auto p =
      plan_collective(star, request(CollectiveOp::AllReduce, testnet::iota_nodes(4)), "forest", opt);
  EXPECT_EQ(p.stages, 2u);
  double max_time = 0;
  for (const Flow& f : p.flows) {
    ASSERT_EQ(f.path.size(), 1u);
    max_time = std::max(max_time, f.bytes / star.arc(f.path[0]).bandwidth_Bps);
  }
  EXPECT_NEAR(max_time, kM / 4 * 3 / kB, 1e-15);  // one phase's busiest arc
  EXPECT_NEAR(p.latency_s, 2 * 2e-6, 1e-18);      // two hops deep, two phases
  EXPECT_THROW(plan_collective(star, request(CollectiveOp::AllToAll, testnet::iota_nodes(4)), "forest"),
               BadInput);
  NetworkBuilder b(3);
  b.add_link(0, 1, kB);
  b.add_arc(1, 2, kB);  // 2 can receive but not send
  const Network oneway = std::move(b).build();
  EXPECT_THROW(plan_collective(oneway, request(CollectiveOp::AllGather, {0, 1, 2}), "forest"), BadInput);
}

}  // namespace
}  // namespace toposweep
