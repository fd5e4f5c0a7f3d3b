// The exact forest packing (splitting off relays, Edmonds' branchings): its time against the cut
// bound recomputed by brute force or by hand, the validity of every tree in the original graph,
// and the capacitated branching packer against Edmonds' condition checked over every vertex set.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "forest_checks.hpp"
#include "test_networks.hpp"
#include "toposweep/collective/branching.hpp"
#include "toposweep/collective/forest.hpp"
#include "toposweep/collective/plan.hpp"

namespace toposweep {
namespace {

using testnet::brute_force_rate;
using testnet::check_packing;
using testnet::unit_weights;

constexpr double kM = 1e9;

// Random heterogeneous network: a backbone cycle through every vertex plus random extra links,
// bandwidths drawn from `bandwidth`; links both ways unless `one_way` (then extra arcs are single
// arcs, so relays can take in more or less than they send). The last `switches` vertices are
// switches.
template <class Bandwidth>
Network random_network(std::mt19937_64& rng, std::uint32_t computes, std::uint32_t switches, bool one_way,
                       Bandwidth&& bandwidth) {
  NetworkBuilder b(computes);
  b.add_switches(switches);
  const std::uint32_t V = computes + switches;
  std::uniform_int_distribution<int> vert(0, static_cast<int>(V) - 1), extra(0, static_cast<int>(2 * V));
  for (std::uint32_t i = 0; i < V; ++i) b.add_link(i, (i + 1) % V, bandwidth());
  for (int e = extra(rng); e > 0; --e) {
    const auto u = static_cast<VertexId>(vert(rng)), v = static_cast<VertexId>(vert(rng));
    if (u == v) continue;
    if (one_way)
      b.add_arc(u, v, bandwidth());
    else
      b.add_link(u, v, bandwidth());
  }
  return std::move(b).build();
}

// All compute nodes, every other one, or all but the last (non-members relay like switches).
std::vector<VertexId> pick_members(std::uint32_t computes, int variant) {
  std::vector<VertexId> m;
  for (VertexId v = 0; v < computes; ++v)
    if (variant == 0 || (variant == 1 && v % 2 == 0) || (variant == 2 && v + 1 < computes)) m.push_back(v);
  return m;
}

struct Case {
  ArcGraph g;
  std::vector<std::uint32_t> w;
  std::vector<VertexId> receivers;
};

// AllGather on the network, ReduceScatter (AllGather on the reversed network), Broadcast.
std::vector<Case> cases_of(const Network& net, const std::vector<VertexId>& members) {
  std::vector<Case> out;
  for (bool reversed : {false, true})
    out.push_back({arc_graph(net, reversed), unit_weights(net.vertex_count(), members), members});
  std::vector<std::uint32_t> root(net.vertex_count(), 0);
  root[members[0]] = 1;
  out.push_back({arc_graph(net), root, members});
  return out;
}

TEST(ExactForest, AttainsTheBruteForceBoundOnRandomNetworksWithSwitches) {
  std::mt19937_64 rng(17);
  std::uniform_int_distribution<int> gbps(1, 8);
  int packed = 0;
  std::uint64_t relays_split = 0;
  for (int trial = 0; trial < 240; ++trial) {
    const std::uint32_t switches = 1 + trial % 3,
                        computes = 2 + (trial / 3) % (11 - switches);  // <= 12 vertices
    const Network net = random_network(rng, computes, switches, false, [&] { return gbps(rng) * 1e9; });
    const auto members = pick_members(computes, trial % 3);
    if (members.size() < 2) continue;
    for (const Case& c : cases_of(net, members)) {
      const double brute = brute_force_rate(c.g, c.w, c.receivers);
      const ForestOptimum opt = forest_optimum(c.g, c.w, c.receivers);
      ASSERT_NEAR(opt.rate_Bps(), brute, brute * 1e-12) << "trial " << trial;
      ExactForestStats stats;
      const auto pack = pack_forest_exact(c.g, c.w, c.receivers, opt, kM, &stats);
      ASSERT_TRUE(pack.has_value()) << "trial " << trial;
      check_packing(c.g, c.w, c.receivers, brute, *pack, kM);
      EXPECT_NEAR(pack->time_s, kM / brute, kM / brute * 1e-9) << "trial " << trial;
      EXPECT_TRUE(pack->complete);
      relays_split += stats.relays_split;
      ++packed;
    }
  }
  EXPECT_GT(packed, 600);
  EXPECT_GT(relays_split, 1000u);  // the splitting did the work, not a lucky relay-free case
  RecordProperty("packed", packed);
  RecordProperty("relays_split", static_cast<int>(relays_split));
}

TEST(ExactForest, RealBandwidthsAttainTheBoundToWithinRounding) {
  // Bandwidths that are not whole numbers of B/s: real capacities, k = 1, real multiplicities.
  std::mt19937_64 rng(23);
  std::uniform_int_distribution<int> step(1, 8);
  for (int trial = 0; trial < 60; ++trial) {
    const std::uint32_t switches = 1 + trial % 3, computes = 2 + (trial / 3) % (11 - switches);
    const Network net =
        random_network(rng, computes, switches, false, [&] { return step(rng) * 1e9 / 3 + 0.1; });
    const auto members = pick_members(computes, trial % 3);
    if (members.size() < 2) continue;
    for (const Case& c : cases_of(net, members)) {
      const double brute = brute_force_rate(c.g, c.w, c.receivers);
      ExactForestStats stats;
      const auto pack =
          pack_forest_exact(c.g, c.w, c.receivers, forest_optimum(c.g, c.w, c.receivers), kM, &stats);
      ASSERT_TRUE(pack.has_value()) << "trial " << trial;
      EXPECT_EQ(stats.trees_per_unit, 1u);
      check_packing(c.g, c.w, c.receivers, brute, *pack, kM);
      EXPECT_NEAR(pack->time_s, kM / brute, kM / brute * 1e-9) << "trial " << trial;
    }
  }
}

TEST(ExactForest, OneWayArcsGiveValidTreesAndTheBoundWheneverPacked) {
  // Relays taking in more than they send (the excess is dropped) or sending more than they take
  // in (the excess is deleted, or the relay copies as a tree vertex) may make the bound
  // unattainable by trees; the exact packing must then say so rather than return a worse one.
  std::mt19937_64 rng(29);
  std::uniform_int_distribution<int> gbps(1, 8);
  int packed = 0, refused = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const std::uint32_t switches = 1 + trial % 3, computes = 2 + (trial / 3) % (11 - switches);
    const Network net = random_network(rng, computes, switches, true, [&] { return gbps(rng) * 1e9; });
    const auto members = pick_members(computes, trial % 3);
    if (members.size() < 2) continue;
    for (const Case& c : cases_of(net, members)) {
      const double brute = brute_force_rate(c.g, c.w, c.receivers);
      const auto pack = pack_forest_exact(c.g, c.w, c.receivers, forest_optimum(c.g, c.w, c.receivers), kM);
      if (!pack) {
        ++refused;
        continue;
      }
      check_packing(c.g, c.w, c.receivers, brute, *pack, kM);
      EXPECT_NEAR(pack->time_s, kM / brute, kM / brute * 1e-9) << "trial " << trial;
      ++packed;
    }
  }
  EXPECT_GT(packed, 9 * refused);
  RecordProperty("packed", packed);
  RecordProperty("refused", refused);
}

TEST(ExactForest, ASwitchThatMustCopyStaysInTheTrees) {
  // Four nodes on a switch with 10 GB/s up- and 20 GB/s downlinks. By hand: leaving out one node
  // (switch inside) passes its 20 GB/s downlink for 3 units; one node alone sends 10 GB/s for 1;
  // three nodes without the switch 30 GB/s for 3. x* = 20/3 GB/s, which needs the switch to copy
  // each unit to three ports (without copies every unit crosses its uplink three times: 10/3).
  NetworkBuilder b(4);
  const VertexId sw = b.add_switches(1);
  for (VertexId v = 0; v < 4; ++v) {
    b.add_arc(v, sw, 10e9);
    b.add_arc(sw, v, 20e9);
  }
  const Network net = std::move(b).build();
  const auto members = testnet::iota_nodes(4);
  const ArcGraph g = arc_graph(net);
  const auto w = unit_weights(5, members);
  const ForestOptimum opt = forest_optimum(g, w, members);
  ASSERT_NEAR(opt.rate_Bps(), 20e9 / 3, 1);
  ExactForestStats stats;
  const auto pack = pack_forest_exact(g, w, members, opt, kM, &stats);
  ASSERT_TRUE(pack.has_value());
  check_packing(g, w, members, opt.rate_Bps(), *pack, kM);
  EXPECT_NEAR(pack->time_s, kM * 3 / 20e9, 1e-15);
  EXPECT_EQ(stats.relays_kept, 1u);
  for (const Arborescence& t : pack->trees) {
    int copies = 0;
    for (ArcId a : t.arcs) copies += g.arcs[a].src == sw;
    EXPECT_EQ(copies, 3) << "the switch forwards each tree to the three other nodes";
  }
}

TEST(ExactForest, TheButterflyIsRefusedAndTheGreedyGapReported) {
  // Broadcast over the butterfly (unit arcs s->a, s->b, a->t1, a->c, b->c, b->t2, c->d, d->t1,
  // d->t2; a, b, c, d relays): every sink has two arc-disjoint paths, x* = 2, but trees reach at
  // most rate 3/2 (the network-coding gap), so no packing attains the bound.
  NetworkBuilder b(3);  // s = 0, t1 = 1, t2 = 2
  const VertexId a = b.add_switches(4), bb = a + 1, c = a + 2, d = a + 3;
  for (auto [u, v] : std::vector<std::pair<VertexId, VertexId>>{
           {0, a}, {0, bb}, {a, 1}, {a, c}, {bb, c}, {bb, 2}, {c, d}, {d, 1}, {d, 2}})
    b.add_arc(u, v, 1e9);
  const Network net = std::move(b).build();
  const std::vector<VertexId> members{0, 1, 2};
  std::vector<std::uint32_t> w(net.vertex_count(), 0);
  w[0] = 1;
  const ArcGraph g = arc_graph(net);
  const ForestOptimum opt = forest_optimum(g, w, members);
  EXPECT_NEAR(opt.rate_Bps(), 2e9, 1);
  EXPECT_FALSE(pack_forest_exact(g, w, members, opt, kM).has_value());
  CollectiveRequest req;
  req.op = CollectiveOp::Broadcast;
  req.nodes = members;
  req.bytes = kM;
  const auto plan = plan_collective(net, req, "forest");
  EXPECT_NEAR(plan.optimal_time_s, kM / 2e9, 1e-15);
  EXPECT_GE(plan.built_time_s, plan.optimal_time_s * 4 / 3 * (1 - 1e-12));
}

// The fabrics of ForestColl's evaluation. DGX-A100-like boxes: per GPU 300 GB/s to its NVSwitch
// and 25 GB/s to an IB switch. By hand, the tightest cuts of an AllGather over N GPUs are all
// but one GPU (it receives 325 GB/s for N-1 units) and all but one box (its eight NICs receive
// 200 GB/s for N-8 units): x* = min(325 / (N-1), 200 / (N-8)) GB/s.
double dgx_rate(std::uint32_t boxes) {
  const double n = 8.0 * boxes;
  return std::min(325e9 / (n - 1), 200e9 / (n - 8));
}

TEST(ExactForest, DgxFabricsAttainTheBoundThatBruteForceAndHandAgreeOn) {
  const Network two = testnet::dgx_a100(2);
  const auto members2 = testnet::iota_nodes(16);
  const ArcGraph g2 = arc_graph(two);
  const auto w2 = unit_weights(two.vertex_count(), members2);
  EXPECT_NEAR(brute_force_rate(g2, w2, members2), dgx_rate(2), 1);  // 2^20 subsets
  for (std::uint32_t boxes : {2u, 4u}) {
    const Network net = testnet::dgx_a100(boxes);
    const auto members = testnet::iota_nodes(8 * boxes);
    for (bool reversed : {false, true}) {
      const ArcGraph g = arc_graph(net, reversed);
      const auto w = unit_weights(net.vertex_count(), members);
      const ForestOptimum opt = forest_optimum(g, w, members);
      EXPECT_NEAR(opt.rate_Bps(), dgx_rate(boxes), 1);
      EXPECT_NEAR(testnet::cut_rate(g, w, opt.critical_set), opt.rate_Bps(), 1e-3);
      ExactForestStats stats;
      const auto pack = pack_forest_exact(g, w, members, opt, kM, &stats);
      ASSERT_TRUE(pack.has_value()) << boxes << " boxes";
      check_packing(g, w, members, dgx_rate(boxes), *pack, kM);
      EXPECT_NEAR(pack->time_s, kM / dgx_rate(boxes), kM / dgx_rate(boxes) * 1e-9);
      EXPECT_EQ(stats.relays_split, boxes + 2);  // every NVSwitch and both IB switches
    }
  }
}

TEST(ExactForest, Mi250FabricAttainsItsCriticalCut) {
  // No closed form here: the packing's time is checked against the ratio of the critical set
  // recomputed from the arcs, a lower bound for any schedule, so meeting it proves optimality.
  const Network net = testnet::mi250(2);
  const auto members = testnet::iota_nodes(32);
  for (bool reversed : {false, true}) {
    const ArcGraph g = arc_graph(net, reversed);
    const auto w = unit_weights(net.vertex_count(), members);
    const ForestOptimum opt = forest_optimum(g, w, members);
    const double cut = testnet::cut_rate(g, w, opt.critical_set);
    EXPECT_NEAR(cut, opt.rate_Bps(), 1e-3);
    ExactForestStats stats;
    const auto pack = pack_forest_exact(g, w, members, opt, kM, &stats);
    ASSERT_TRUE(pack.has_value());
    check_packing(g, w, members, cut, *pack, kM);
    EXPECT_NEAR(pack->time_s, kM / cut, kM / cut * 1e-9);
    // Given less work than it needs, it gives up instead of returning a partial packing.
    EXPECT_FALSE(pack_forest_exact(g, w, members, opt, kM, nullptr, stats.work / 2).has_value());
  }
}

TEST(ExactForest, PlansAttainTheBoundWhereGreedyFallsShort) {
  // DGX 2 boxes and MI250 2 boxes: the greedy packing is measured short of the bound (98.9 %,
  // 96.4 %); the default plan meets it, latency on top.
  for (const Network& net : {testnet::dgx_a100(2, 1e-6), testnet::mi250(2, 1e-6)}) {
    CollectiveRequest req;
    req.op = CollectiveOp::AllReduce;
    req.nodes = testnet::iota_nodes(net.compute_count());
    req.bytes = kM;
    const auto exact = plan_collective(net, req, "forest");
    EXPECT_NEAR(exact.built_time_s, exact.optimal_time_s, exact.optimal_time_s * 1e-9) << net.info().kind;
    EXPECT_NEAR(exact.time_s, exact.built_time_s + exact.latency_s, 1e-15);
    EXPECT_GT(exact.latency_s, 0);
    CollectiveOptions greedy;
    greedy.greedy_forest = true;
    const auto fast = plan_collective(net, req, "forest", greedy);
    EXPECT_NEAR(fast.optimal_time_s, exact.optimal_time_s, 1e-15);
    EXPECT_GT(fast.built_time_s, exact.built_time_s * 1.005) << net.info().kind;
  }
}

// Edmonds' condition by brute force: every nonempty vertex set X receives at least the demand
// of the roots outside it.
bool edmonds_condition(std::uint32_t n, const std::vector<PackArc>& arcs, const std::vector<double>& d) {
  for (std::uint32_t mask = 1; mask < (1u << n); ++mask) {
    double in = 0, need = 0;
    for (const PackArc& a : arcs)
      if (!(mask >> a.src & 1) && (mask >> a.dst & 1)) in += a.cap;
    for (std::uint32_t u = 0; u < n; ++u)
      if (!(mask >> u & 1)) need += d[u];
    if (in < need) return false;
  }
  return true;
}

TEST(PackArborescences, PacksExactlyWhenEdmondsConditionHolds) {
  std::mt19937_64 rng(31);
  int packed = 0, refused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const std::uint32_t n = 2 + trial % 7;
    std::uniform_int_distribution<int> vert(0, static_cast<int>(n) - 1), cap(1, 4), dem(0, 2);
    std::vector<PackArc> arcs;
    for (int e = 0; e < static_cast<int>(3 * n); ++e) {
      const auto u = static_cast<std::uint32_t>(vert(rng)), v = static_cast<std::uint32_t>(vert(rng));
      if (u != v) arcs.push_back({u, v, static_cast<double>(cap(rng))});
    }
    std::vector<double> d(n);
    for (double& x : d) x = dem(rng);
    const bool feasible = edmonds_condition(n, arcs, d);
    BranchingStats stats;
    const auto trees = pack_arborescences(n, arcs, d, 1e-9, &stats);
    ASSERT_EQ(trees.has_value(), feasible) << "trial " << trial;
    if (!trees) {
      ++refused;
      continue;
    }
    ++packed;
    std::vector<double> used(arcs.size(), 0), per_root(n, 0);
    for (const PackedTree& t : *trees) {
      EXPECT_GT(t.multiplicity, 0);
      EXPECT_EQ(t.multiplicity, std::round(t.multiplicity)) << "integer data, integer copies";
      std::vector<char> in(n, 0);
      in[t.root] = 1;
      for (std::uint32_t a : t.arcs) {
        ASSERT_TRUE(in[arcs[a].src]);
        ASSERT_FALSE(in[arcs[a].dst]);
        in[arcs[a].dst] = 1;
        used[a] += t.multiplicity;
      }
      EXPECT_EQ(t.arcs.size(), n - 1u) << "spanning";
      per_root[t.root] += t.multiplicity;
    }
    for (std::size_t a = 0; a < arcs.size(); ++a) EXPECT_LE(used[a], arcs[a].cap);
    for (std::uint32_t u = 0; u < n; ++u) EXPECT_EQ(per_root[u], d[u]);
  }
  EXPECT_GT(packed, 50);
  EXPECT_GT(refused, 50);
}

}  // namespace
}  // namespace toposweep
