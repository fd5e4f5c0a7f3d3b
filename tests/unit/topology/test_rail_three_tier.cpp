// Three-tier rail fabrics (topology.rail_tiers = 3): switch, port and link counts against closed
// forms derived here from the construction (pods of rail leaves, aggregation switches, core groups
// sized to the pods), hop distances against an exhaustive BFS, bisection against an enumeration
// of every vertex bipartition, and the parts cost counted by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "topology_test_helpers.hpp"
#include "toposweep/topology/cost.hpp"
#include "toposweep/topology/families.hpp"
#include "toposweep/topology/metrics.hpp"
#include "toposweep/topology/report.hpp"
#include "toposweep/topology/spec.hpp"

namespace toposweep::topology {
namespace {

constexpr double kNic = 50e9;  // 400 Gb/s per NIC (NVIDIA DGX H100 datasheet: 8x 400 Gb/s ConnectX-7)

RailSpec rail3(std::uint32_t servers, std::uint32_t rails, std::uint32_t planes, std::uint32_t radix,
               bool spine, double oversubscription = 1) {
  return test::rail_spec(servers, rails, planes, radix, spine, oversubscription, kNic, 3);
}

// Ports a switch uses: its arcs out, each counted as the links it merges.
std::uint32_t ports_of(const Network& net, VertexId v) {
  std::uint32_t p = 0;
  for (ArcId a : net.out_arcs(v)) p += arc_ports(net, net.arc(a));
  return p;
}

// The core switches a group needs, worked by hand for radix 8 (k/2 = 4 uplinks per aggregation
// switch, C a divisor of 4): every core of group j takes pods x 4 / C links, at most 8.
TEST(RailThreeTier, CoreGroupsAreSizedToThePods) {
  // 1 rail, rail-only, radix 8: leaves of 4 servers, pods of 4 leaves (16 servers).
  struct Case {
    std::uint32_t servers, pods, cores_per_group;
  };
  // 2 pods: 2 x 4 = 8 ports: one core; 3 pods: 12 > 8, C = 2 (6 ports); 8 pods: C = 4 (8 ports).
  for (const Case c : {Case{32, 2, 1}, Case{48, 3, 2}, Case{128, 8, 4}}) {
    const Network net = build_rail(rail3(c.servers, 1, 1, 8, false));
    const std::uint32_t leaves = c.servers / 4, aggs = c.pods * 4, cores = 4 * c.cores_per_group;
    EXPECT_EQ(net.switch_count(), leaves + aggs + cores) << c.servers;
    for (VertexId v = net.compute_count() + leaves + aggs; v < net.vertex_count(); ++v)
      EXPECT_EQ(ports_of(net, v), c.pods * 4 / c.cores_per_group) << c.servers << " core " << v;
  }
}

TEST(RailThreeTier, SwitchAndLinkCountsMatchClosedFormsOverManySizes) {
  struct Split {
    std::uint32_t k;
    double o;
    std::uint32_t down, up;
  };
  int built = 0, rejected = 0;
  for (const Split sp : {Split{8, 1, 4, 4}, Split{16, 1, 8, 8}, Split{8, 3, 6, 2}, Split{16, 3, 12, 4}})
    for (std::uint32_t S : {1u, 5u, 9u, 16u, 17u, 33u, 64u, 100u, 257u})
      for (std::uint32_t R : {1u, 2u, 4u, 8u})
        for (std::uint32_t P : {1u, 2u})
          for (bool spine : {true, false}) {
            SCOPED_TRACE(testing::Message() << "S=" << S << " R=" << R << " P=" << P << " k=" << sp.k
                                            << " o=" << sp.o << " spine=" << spine);
            const RailSpec spec = rail3(S, R, P, sp.k, spine, sp.o);
            if (!spine && S <= sp.k) {  // a rail that fits one switch stays one switch
              const Network net = build_rail(spec);
              EXPECT_EQ(net.switch_count(), P * R);
              continue;
            }
            const std::uint32_t half = sp.k / 2, Rg = spine ? R : 1, groups = spine ? P : P * R;
            const std::uint32_t L = (S + sp.down - 1) / sp.down, blocks = half / Rg;
            const std::uint32_t pods = blocks == 0 ? 0 : (L + blocks - 1) / blocks;
            if (blocks == 0 || pods > sp.k) {
              EXPECT_THROW(build_rail(spec), InvalidDesign);
              ++rejected;
              continue;
            }
            const Network net = build_rail(spec);
            const std::uint32_t leaves = P * R * L, aggs = groups * pods * sp.up;
            ASSERT_GE(net.switch_count(), leaves + aggs);
            const std::uint32_t cores = net.switch_count() - leaves - aggs;
            EXPECT_EQ(cores % (groups * sp.up), 0u);
            const std::uint32_t C = cores / (groups * sp.up);
            // C divides k/2, holds every pod (pods x k/2 / C <= k), and no smaller divisor would.
            EXPECT_EQ(half % C, 0u);
            EXPECT_LE(pods * (half / C), sp.k);
            for (std::uint32_t c = 1; c < C; ++c) EXPECT_TRUE(half % c != 0 || pods * (half / c) > sp.k) << c;
            // Links: servers to leaves, leaves to their pod's aggregation switches, aggregation
            // switches to the cores of their group (k/2 / C links merged into one arc each way).
            EXPECT_EQ(net.arc_count(), 2 * (S * R * P + leaves * sp.up + groups * pods * sp.up * C));
            const PortStats ps = port_stats(net);
            EXPECT_EQ(ps.min_ports, R * P);
            EXPECT_EQ(ps.max_ports, R * P);
            std::uint64_t core_ports = 0;
            for (VertexId v = S; v < net.vertex_count(); ++v) {
              EXPECT_LE(ports_of(net, v), sp.k) << v;
              const std::uint32_t i = v - S;
              if (i >= leaves && i < leaves + aggs) {
                // An aggregation switch: k/2 ports up, and down one per leaf of its pod.
                std::uint32_t up_ports = 0;
                for (ArcId a : net.out_arcs(v))
                  if (net.arc(a).dst - S >= leaves + aggs) up_ports += arc_ports(net, net.arc(a));
                EXPECT_EQ(up_ports, half);
              }
              if (i >= leaves + aggs) core_ports += ports_of(net, v);
            }
            EXPECT_EQ(core_ports, std::uint64_t{groups} * pods * sp.up * half);
            EXPECT_EQ(net.info().degree, R * P);
            ++built;
          }
  EXPECT_GT(built, 300);
  EXPECT_GT(rejected, 20);
}

TEST(RailThreeTier, HopDistancesMatchClosedFormAndExhaustiveSearch) {
  // Same leaf index: 2 hops (through any rail's leaf); same pod: 4 (leaf, aggregation, leaf);
  // other pods: 6 (leaf, aggregation, core, aggregation, leaf). Radix 8: leaves of 4 servers,
  // pods of 4 / R server blocks (full) or 4 blocks (rail-only, one rail per group).
  for (std::uint32_t S : {5u, 9u, 17u, 40u, 70u})
    for (std::uint32_t R : {1u, 2u, 4u})
      for (bool spine : {true, false}) {
        if (!spine && S <= 8) continue;
        const std::uint32_t down = 4, blocks = spine ? 4 / R : 4;
        if ((S + down - 1) / down > 8 * blocks) continue;  // more than k = 8 pods: not buildable
        const Network net = build_rail(rail3(S, R, 2, 8, spine));
        SCOPED_TRACE(testing::Message() << "S=" << S << " R=" << R << " spine=" << spine);
        const auto d = test::all_pairs_hops(net);
        std::uint32_t diameter = 0;
        for (std::uint32_t a = 0; a < S; ++a)
          for (std::uint32_t b = 0; b < S; ++b) {
            if (a == b) continue;
            const std::uint32_t want = a / down == b / down                     ? 2
                                       : a / down / blocks == b / down / blocks ? 4
                                                                                : 6;
            EXPECT_EQ(d[a][b], want) << a << "->" << b;
            diameter = std::max(diameter, want);
          }
        EXPECT_EQ(hop_stats(net).diameter, diameter);
      }
}

TEST(RailThreeTier, BisectionClosedFormEqualsExhaustiveSearch) {
  struct Case {
    std::uint32_t S, R, k;
    bool spine;
    double o;
    double closed_form_Bps;  // S/2 x R x NIC x min(1, up/down), worked by hand; 0: none
  };
  const Case cases[] = {
      {4, 2, 4, true, 1, 2 * 2 * kNic},        // 2 pods of one block (2 rails); 4 aggs, 2 cores
      {6, 2, 4, true, 3, 3 * 2 * kNic / 3.0},  // down 3 : up 1; 2 pods, 2 aggs, 1 core
      {8, 1, 4, false, 1, 4 * 1 * kNic},       // rail-only: 4 leaves in 2 pods, 4 aggs, 2 cores
      {6, 1, 4, false, 1, 0},                  // 3 leaves (odd): searched only
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "S=" << c.S << " R=" << c.R << " spine=" << c.spine << " o=" << c.o);
    const Network net = build_rail(rail3(c.S, c.R, 1, c.k, c.spine, c.o));
    ASSERT_LE(net.vertex_count(), 20u);
    test::expect_bisection(net, c.closed_form_Bps);
  }
}

TEST(RailThreeTier, PartsCostCountedByHand) {
  // 4 servers x 2 rails at 100G, radix 4, 3 tiers: leaves 2 down + 2 up, 2 per rail (4); pods of
  // one server block (both rails' leaves), 2 aggregation switches each (4); 2 core groups of one
  // core, each with 2 links to each pod's aggregation switch (4 ports). Chassis: 10, each the
  // 8-port one at 1,000 = 10,000. Servers to leaves 8 DACs (80); leaves to aggregation 8
  // multimode links (8 x 20 + 16 x 100 = 1,760); aggregation to core 8 singlemode links
  // (8 x 30 + 16 x 300 = 5,040); 8 NIC ports (8). Total 16,888.
  RailSpec r = rail3(4, 2, 1, 4, true);
  r.link_bandwidth_Bps = 12.5e9;
  const std::string table =
      "[nic_port]\n100Gbps = 1\n[switch_chassis]\n8x100Gbps = 1000\n"
      "[copper]\ncable.100Gbps = 10\n[multimode]\ncable.100Gbps = 20\ntransceiver.100Gbps = 100\n"
      "[singlemode]\ncable.100Gbps = 30\ntransceiver.100Gbps = 300\n";
  const Network net = build_rail(r);
  const PriceTable parts = parse_price_table(table, "parts");
  const CostBreakdown c = network_cost(net, parts);
  EXPECT_EQ(c.count.at("switch_chassis"), 10);
  EXPECT_EQ(c.count.at("copper_cable"), 8);
  EXPECT_EQ(c.count.at("multimode_cable"), 8);
  EXPECT_EQ(c.count.at("singlemode_cable"), 8);
  EXPECT_EQ(c.count.at("singlemode_transceiver"), 16);
  EXPECT_DOUBLE_EQ(c.total_usd, 16888);
  const nlohmann::json j = report_json(net, describe_topology(net, parts));
  EXPECT_EQ(j.at("rail_tiers"), 3);
  EXPECT_EQ(j.at("rail_leaf_switches"), 4);
  EXPECT_EQ(j.at("rail_spine_switches"), 4);
  EXPECT_EQ(j.at("rail_core_switches"), 2);
}

TEST(RailThreeTier, ConfigKeyAndErrors) {
  const Config c = test::topology_config({{"topology.kind", "rail"},
                                          {"topology.servers", "2048"},
                                          {"server.gpus", "8"},
                                          {"topology.rail_radix", "64"},
                                          {"topology.rail_tiers", "3"},
                                          {"topology.link_bandwidth", "400Gbps"}});
  const TopologySpec spec = topology_spec_from_config(c);
  EXPECT_EQ(std::get<RailSpec>(spec.family).tiers, 3u);
  // 16,384 GPUs on 64-port switches (a 51.2 Tb/s switch at 800G, or 64 x 400G): leaves of 32
  // servers, 64 per rail; pods of 32 / 8 = 4 blocks (128 servers), 16 pods; cores: 16 x 32 / C
  // <= 64 -> C = 8. Switches: 512 leaves + 16 x 32 aggregation + 32 x 8 cores = 1,280.
  const Network net = build_network(spec);
  EXPECT_EQ(net.switch_count(), 512u + 512u + 256u);
  // Two tiers of radix 64 hold 8 rails x 8 leaves of 32 servers at most: 256 servers.
  RailSpec two = std::get<RailSpec>(spec.family);
  two.tiers = 2;
  EXPECT_THROW(build_rail(two), InvalidDesign);
  two.servers = 256;
  EXPECT_EQ(build_rail(two).switch_count(), 64u + 32u);

  const Config bad = test::topology_config({{"topology.kind", "rail"}});
  RailSpec r = std::get<RailSpec>(topology_spec_from_config(bad).family);
  r.tiers = 4;
  r.link_bandwidth_Bps = kNic;
  EXPECT_EQ(test::bad_input_text([&] { build_rail(r); }),
            "rail tiers must be 2 or 3, got 4 | topology.rail_tiers");
}

}  // namespace
}  // namespace toposweep::topology
