// Rail-optimized, multi-plane and rail-only Clos (kind = rail): switch and link counts, hop
// distances and bisection against closed forms derived here, and against exhaustive searches
// (BFS over all pairs, every vertex bipartition) on small instances.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "topology_test_helpers.hpp"
#include "toposweep/topology/families.hpp"
#include "toposweep/topology/metrics.hpp"
#include "toposweep/topology/spec.hpp"

namespace toposweep::topology {
namespace {

constexpr double kNic = 50e9;  // 400 Gb/s ConnectX-7 per GPU (NVIDIA DGX H100 datasheet: 8x 400 Gb/s)

RailSpec rail(std::uint32_t servers, std::uint32_t rails, std::uint32_t planes, std::uint32_t radix,
              bool spine, double oversubscription = 1) {
  return test::rail_spec(servers, rails, planes, radix, spine, oversubscription, kNic);
}

struct Expected {
  std::uint32_t leaves = 0, spines = 0, arcs = 0, leaf_down = 0;
};

// Counts from the construction's description: each (plane, rail) has ceil(S / down) leaves;
// every server has one link per (plane, rail); spines: `up` per plane (full) or per (plane, rail)
// (rail-only with more than one leaf per rail), one link from each leaf to each spine.
Expected expected_counts(std::uint32_t S, std::uint32_t R, std::uint32_t P, std::uint32_t k, bool spine,
                         std::uint32_t down, std::uint32_t up) {
  Expected e;
  if (!spine && S <= k) {
    e.leaves = P * R;
    e.arcs = 2 * S * R * P;
    e.leaf_down = k;
    return e;
  }
  const std::uint32_t L = (S + down - 1) / down;
  e.leaves = P * R * L;
  e.spines = (spine ? P : P * R) * up;
  e.arcs = 2 * (S * R * P + e.leaves * up);
  e.leaf_down = down;
  return e;
}

TEST(Rail, SwitchAndLinkCountsMatchClosedFormsOverManySizes) {
  int built = 0, rejected = 0;
  // (k, oversubscription, down, up): down:up = o:1 of k ports, worked by hand.
  struct Split {
    std::uint32_t k;
    double o;
    std::uint32_t down, up;
  };
  for (const Split sp : {Split{8, 1, 4, 4}, Split{16, 1, 8, 8}, Split{8, 3, 6, 2}, Split{16, 3, 12, 4}})
    for (std::uint32_t S : {1u, 2u, 3u, 5u, 8u, 12u, 16u, 17u, 31u, 64u})
      for (std::uint32_t R : {1u, 2u, 4u, 8u})
        for (std::uint32_t P : {1u, 2u})
          for (bool spine : {true, false}) {
            const RailSpec spec = rail(S, R, P, sp.k, spine, sp.o);
            const std::uint32_t L = (S + sp.down - 1) / sp.down;
            const bool fits = (!spine && S <= sp.k) || (spine ? R * L : L) <= sp.k;
            if (!fits) {
              EXPECT_THROW(build_rail(spec), InvalidDesign) << S << " " << R << " " << sp.k;
              ++rejected;
              continue;
            }
            const Network net = build_rail(spec);
            const Expected e = expected_counts(S, R, P, sp.k, spine, sp.down, sp.up);
            SCOPED_TRACE(testing::Message() << "S=" << S << " R=" << R << " P=" << P << " k=" << sp.k
                                            << " o=" << sp.o << " spine=" << spine);
            EXPECT_EQ(net.compute_count(), S);
            EXPECT_EQ(net.gpu_count(), 8 * S);
            EXPECT_EQ(net.switch_count(), e.leaves + e.spines);
            EXPECT_EQ(net.arc_count(), e.arcs);
            EXPECT_EQ(net.info().degree, R * P);
            // Every server: one port per (plane, rail) at NIC / planes, egress R x NIC.
            const PortStats ports = port_stats(net);
            EXPECT_EQ(ports.min_ports, R * P);
            EXPECT_EQ(ports.max_ports, R * P);
            EXPECT_DOUBLE_EQ(ports.max_egress_Bps, R * kNic);
            // No switch uses more than k ports; leaves use at most `down` towards servers.
            for (VertexId v = S; v < net.vertex_count(); ++v) {
              EXPECT_LE(net.out_arcs(v).size(), sp.k);
              std::uint32_t to_servers = 0;
              for (ArcId a : net.out_arcs(v)) to_servers += net.arc(a).dst < S;
              EXPECT_LE(to_servers, e.leaf_down);
            }
            ++built;
          }
  EXPECT_GT(built, 400);
  EXPECT_GT(rejected, 20);
}

TEST(Rail, HopDistancesMatchClosedFormAndExhaustiveSearch) {
  // Two servers on the same leaf index are 2 hops apart (through any rail's leaf: the PXN route),
  // others 4 (leaf, spine, leaf). Mean over ordered pairs from the leaf groups' sizes.
  for (std::uint32_t S : {2u, 3u, 7u, 9u, 16u, 24u, 33u})
    for (std::uint32_t R : {1u, 2u, 4u})
      for (bool spine : {true, false}) {
        const std::uint32_t k = 8, down = (!spine && S <= k) ? k : 4;
        RailSpec spec = rail(S, R, 2, k, spine);
        const std::uint32_t L = (S + down - 1) / down;
        if (spine ? R * L > k : L > k) continue;
        const Network net = build_rail(spec);
        SCOPED_TRACE(testing::Message() << "S=" << S << " R=" << R << " spine=" << spine);
        const auto d = test::all_pairs_hops(net);
        double same = 0;
        for (std::uint32_t l = 0; l < L; ++l) {
          const double n = std::min(S, (l + 1) * down) - l * down;
          same += n * (n - 1);
        }
        const double pairs = double(S) * (S - 1);
        for (std::uint32_t a = 0; a < S; ++a)
          for (std::uint32_t b = 0; b < S; ++b)
            if (a != b) {
              EXPECT_EQ(d[a][b], a / down == b / down ? 2u : 4u) << a << "->" << b;
            }
        const HopStats h = hop_stats(net);
        EXPECT_TRUE(h.connected());
        EXPECT_EQ(h.diameter, L == 1 ? 2u : 4u);
        EXPECT_NEAR(h.mean_hops, (2 * same + 4 * (pairs - same)) / pairs, 1e-12);
      }
}

TEST(Rail, BisectionClosedFormEqualsExhaustiveSearch) {
  struct Case {
    std::uint32_t S, R, P, k;
    bool spine;
    double o;
    double closed_form_Bps;  // worked by hand: S/2 x R x NIC x min(1, up/down); one leaf per rail: floor(S/2)
                             // x R x NIC
  };
  const Case cases[] = {
      {4, 2, 1, 4, true, 1, 2 * 2 * kNic},        // 2 leaves per rail of 2 down / 2 up, 2 spines
      {4, 2, 2, 4, true, 1, 2 * 2 * kNic},        // two planes: same total, each port NIC/2
      {6, 2, 1, 4, true, 3, 3 * 2 * kNic / 3.0},  // down 3 : up 1, two leaves per rail, 1 spine
      {4, 3, 1, 4, false, 1, 2 * 3 * kNic},       // rail-only, one 4-port switch per rail
      {5, 3, 1, 6, false, 1, 2 * 3 * kNic},       // odd S: floor(5/2) servers' NIC ports
      {8, 2, 1, 4, false, 1, 4 * 2 * kNic},       // rail-only, rails of 2 leaves + 2 own spines
      {3, 2, 1, 4, true, 1, 0},                   // partial leaves: no closed form, searched only
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "S=" << c.S << " R=" << c.R << " P=" << c.P << " spine=" << c.spine);
    const Network net = build_rail(rail(c.S, c.R, c.P, c.k, c.spine, c.o));
    ASSERT_LE(net.vertex_count(), 22u);
    test::expect_bisection(net, c.closed_form_Bps);
  }
}

TEST(Rail, ConfigReadsRailKeysAndDefaultsRailsToGpus) {
  const Config c = test::topology_config({{"topology.kind", "rail"},
                                          {"topology.servers", "16"},
                                          {"server.gpus", "8"},
                                          {"topology.planes", "2"},
                                          {"topology.link_bandwidth", "400Gbps"}});
  const TopologySpec spec = topology_spec_from_config(c);
  const auto& r = std::get<RailSpec>(spec.family);
  EXPECT_EQ(r.rails, 0u);
  EXPECT_TRUE(r.spine);
  const Network net = build_network(spec);
  EXPECT_EQ(net.info().kind, "rail");
  EXPECT_EQ(net.info().rails, 8u);
  EXPECT_EQ(net.info().planes, 2u);
  EXPECT_EQ(net.info().degree, 16u);                      // 8 NICs x 2 planes
  EXPECT_DOUBLE_EQ(net.info().link_bandwidth_Bps, 25e9);  // 400 Gb/s / 2 planes
  // Auto radix: the smallest even k with 8 rails x ceil(16 / (k/2)) leaves <= k: k = 16.
  EXPECT_EQ(net.info().fattree_radix, 16u);
  EXPECT_EQ(family_name(spec), "rail");

  const Config bad = test::topology_config({{"topology.kind", "rail"}, {"topology.rail_radix", "7"}});
  EXPECT_EQ(test::bad_input_text([&] { topology_spec_from_config(bad); }),
            "rail switch radix must be an even number >= 4, got 7 | key topology.rail_radix at test");
}

}  // namespace
}  // namespace toposweep::topology
