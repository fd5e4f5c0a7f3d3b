// Family builders: counts and shapes against closed forms.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "topology_test_helpers.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/topology/cost.hpp"
#include "toposweep/topology/families.hpp"
#include "toposweep/topology/metrics.hpp"
#include "toposweep/topology/spec.hpp"

namespace toposweep::topology {
namespace {

using test::bad_input_text;
using test::topology_config;
using ::testing::HasSubstr;

class KaryFatTree : public ::testing::TestWithParam<std::uint32_t> {};

// A k-ary fat-tree (Al-Fares et al. 2008): k^3/4 hosts, 5k^2/4 switches (k pods of k/2 edge
// and k/2 aggregation switches, (k/2)^2 cores), k^3/4 links in each of the three layers.
TEST_P(KaryFatTree, CountsMatchTheClosedForms) {
  const std::uint32_t k = GetParam();
  FatTreeSpec s;
  s.servers = k * k * k / 4;
  s.tiers = 3;
  s.radix = k;
  s.link_bandwidth_Bps = 12.5e9;
  const Network n = build_fattree(s);
  EXPECT_EQ(n.compute_count(), k * k * k / 4);
  EXPECT_EQ(n.switch_count(), 5 * k * k / 4);
  EXPECT_EQ(n.arc_count(), 2 * 3 * (k * k * k / 4));  // each link is two arcs
  // Every switch uses exactly k ports.
  for (VertexId v = n.compute_count(); v < n.vertex_count(); ++v) EXPECT_EQ(n.out_arcs(v).size(), k) << v;
  // Hops: same edge switch 2, same pod 4, other pod 6.
  const double h = k / 2.0, pod = k * k / 4.0, all = k * k * k / 4.0;
  const double mean = ((h - 1) * 2 + (pod - h) * 4 + (all - pod) * 6) / (all - 1);
  const HopStats hs = hop_stats(n);
  EXPECT_EQ(hs.diameter, 6u);
  EXPECT_NEAR(hs.mean_hops, mean, 1e-12);
  const Bisection b = bisection_bandwidth(n);
  EXPECT_EQ(b.method, "closed_form");
  EXPECT_DOUBLE_EQ(b.bandwidth_Bps, all / 2 * 12.5e9);
  // The auto radix for k^3/4 servers is k itself.
  EXPECT_EQ(fattree_auto_radix(s.servers, 3, 1.0), k);
}
INSTANTIATE_TEST_SUITE_P(K, KaryFatTree, ::testing::Values(4u, 6u, 8u, 16u));

// The auto radix keeps every server's ports on one leaf: 2,048 servers of degree 8 in three tiers
// fit radix 42 (42^3/4 = 18,522 >= 16,384 ports; 40 gives 16,000), whose 21 down ports would
// split servers 2, 5, ... over two leaves; 44 (22 down) still would; 46 (23) would; 48 (24 down:
// three whole servers a leaf) is the first that does not. Degree 1 and degrees dividing k/2 keep
// the smallest radix; a degree that no radix up to twice the smallest serves keeps the smallest.
TEST(FatTree, AutoRadixKeepsEachServerOnOneLeaf) {
  EXPECT_EQ(fattree_auto_radix(2048 * 8, 3, 1.0), 42u);
  EXPECT_EQ(fattree_auto_radix(2048, 8, 3, 1.0), 48u);
  EXPECT_EQ(fattree_auto_radix(128, 8, 3, 1.0), 16u);   // 16^3/4 = 1,024 ports, 8 down: unchanged
  EXPECT_EQ(fattree_auto_radix(2048, 1, 3, 1.0), 22u);  // 22^3/4 = 2,662 >= 2,048; degree 1
  FatTreeSpec s;
  s.servers = 2048;
  s.degree = 8;
  s.tiers = 3;
  s.link_bandwidth_Bps = 50e9;
  const Network n = build_fattree(s);
  // Every server's 8 links go to one leaf: one arc (parallel links merged) of 8 x 50 GB/s.
  for (VertexId v = 0; v < n.compute_count(); ++v) {
    ASSERT_EQ(n.out_arcs(v).size(), 1u) << v;
    EXPECT_DOUBLE_EQ(n.arc(n.out_arcs(v)[0]).bandwidth_Bps, 8 * 50e9) << v;
  }
}

// The builder adds its arcs already in the network's order; they must be the wiring rule's links,
// parallel ones merged: port p of server p/degree on leaf p/down; every leaf to every spine (two
// tiers), or to the `up` aggregation switches of its pod (pods of k/2 leaves), aggregation switch
// a of every pod to the k/2 cores of core group a.
TEST(FatTree, ArcsAreTheWiringRulesLinksInOrder) {
  struct Case {
    std::uint32_t servers, degree, tiers, radix;
    double oversubscription;
  };
  for (const Case c : {Case{16, 1, 3, 4, 1}, Case{13, 1, 3, 6, 1}, Case{36, 3, 3, 8, 2}, Case{21, 3, 2, 0, 1},
                       Case{30, 1, 3, 8, 3}, Case{11, 4, 3, 0, 1.5}}) {
    const Network n = build_fattree(
        test::fattree_spec(c.servers, c.degree, c.tiers, c.radix, c.oversubscription, 1e9, 1e-6));
    const std::uint32_t k = n.info().fattree_radix, half = k / 2, ports = c.servers * c.degree;
    // The leaves are the switches with servers below; the first is full: its server ports are `down`.
    std::uint32_t leaves = 0;
    double first_leaf_ports = 0;
    for (VertexId v = n.compute_count(); v < n.vertex_count(); ++v)
      for (ArcId a : n.out_arcs(v))
        if (!n.is_switch(n.arc(a).dst)) {
          leaves = std::max(leaves, v - n.compute_count() + 1);
          if (v == n.compute_count()) first_leaf_ports += n.arc(a).bandwidth_Bps / 1e9;
        }
    const std::uint32_t down = static_cast<std::uint32_t>(first_leaf_ports), up = k - down;
    const VertexId leaf0 = n.compute_count(), upper0 = leaf0 + leaves;
    std::map<std::pair<VertexId, VertexId>, double> want;  // (src, dst) -> bandwidth
    auto link = [&](VertexId a, VertexId b) { want[{a, b}] += 1e9, want[{b, a}] += 1e9; };
    for (std::uint32_t p = 0; p < ports; ++p) link(p / c.degree, leaf0 + p / down);
    if (c.tiers == 2) {
      for (std::uint32_t l = 0; l < leaves; ++l)
        for (std::uint32_t sp = 0; sp < up; ++sp) link(leaf0 + l, upper0 + sp);
    } else {
      const std::uint32_t pods = (leaves + half - 1) / half;
      for (std::uint32_t l = 0; l < leaves; ++l)
        for (std::uint32_t a = 0; a < up; ++a) link(leaf0 + l, upper0 + (l / half) * up + a);
      for (std::uint32_t pod = 0; pod < pods; ++pod)
        for (std::uint32_t a = 0; a < up; ++a)
          for (std::uint32_t co = 0; co < half; ++co)
            link(upper0 + pod * up + a, upper0 + pods * up + a * half + co);
    }
    ASSERT_EQ(n.arc_count(), want.size()) << c.servers << " servers";
    std::size_t i = 0;
    for (const auto& [ends, bw] : want) {
      const Arc& a = n.arc(static_cast<ArcId>(i++));
      EXPECT_EQ(std::make_pair(a.src, a.dst), ends) << c.servers << " servers, arc " << i - 1;
      EXPECT_EQ(a.bandwidth_Bps, bw) << c.servers << " servers, arc " << i - 1;
      EXPECT_EQ(a.latency_s, 1e-6);
    }
  }
}

TEST(FatTree, LeafSpineWithOversubscription) {
  // radix 8, 3:1 at the leaves -> 6 down, 2 up; 24 servers -> 4 leaves, 2 spines.
  FatTreeSpec s;
  s.servers = 24;
  s.tiers = 2;
  s.radix = 8;
  s.oversubscription = 3;
  s.link_bandwidth_Bps = 1e9;
  const Network n = build_fattree(s);
  EXPECT_EQ(n.switch_count(), 4u + 2u);
  EXPECT_EQ(n.arc_count(), 2u * (24 + 4 * 2));
  EXPECT_EQ(hop_stats(n).diameter, 4u);
  // Half the leaves (12 servers) leave through 2 leaves x 2 uplinks.
  EXPECT_DOUBLE_EQ(bisection_bandwidth(n).bandwidth_Bps, 4 * 1e9);
}

TEST(FatTree, ServersWithSeveralPortsAndTooSmallRadix) {
  FatTreeSpec s;
  s.servers = 4;
  s.degree = 2;
  s.tiers = 2;
  s.radix = 4;  // 2 down per leaf: each server fills one leaf
  s.link_bandwidth_Bps = 1e9;
  const Network n = build_fattree(s);
  EXPECT_EQ(n.switch_count(), 4u + 2u);
  ASSERT_EQ(n.out_arcs(0).size(), 1u);  // the two ports of server 0 go to leaf 0: merged
  EXPECT_DOUBLE_EQ(n.arc(n.out_arcs(0)[0]).bandwidth_Bps, 2e9);
  EXPECT_EQ(port_stats(n).min_ports, 2u);
  s.servers = 5;  // 10 ports need 5 leaves > 4 spine ports
  EXPECT_THAT(bad_input_text([&] { build_fattree(s); }), HasSubstr("topology.fattree_radix"));
}

TEST(Torus, ShapeAndClosedForms) {
  TorusSpec s;
  s.dims = {4, 3, 2};
  s.link_bandwidth_Bps = 1e9;
  const Network n = build_torus(s);
  EXPECT_EQ(n.compute_count(), 24u);
  EXPECT_EQ(n.info().degree, 2u + 2u + 1u);
  EXPECT_EQ(n.arc_count(), 24u * 5);
  // Distances add over dimensions: diameter sum floor(a/2), mean sum_k (N/a_k) R(a_k) / (N-1).
  const HopStats hs = hop_stats(n);
  EXPECT_EQ(hs.diameter, 2u + 1u + 1u);
  const double sum =
      6 * test::ring_distance_sum(4) + 8 * test::ring_distance_sum(3) + 12 * test::ring_distance_sum(2);
  EXPECT_NEAR(hs.mean_hops, sum / 23, 1e-12);
  EXPECT_THAT(bad_input_text([] {
                network_from_config(topology_config({{"topology.kind", "torus"}, {"topology.dims", "4,1"}}));
              }),
              HasSubstr("topology.dims"));
  EXPECT_THAT(bad_input_text([] {
                network_from_config(topology_config(
                    {{"topology.kind", "torus"}, {"topology.dims", "4,4"}, {"topology.servers", "15"}}));
              }),
              HasSubstr("16 servers but topology.servers = 15"));
}

TEST(MultiDim, ArcsCarryTheDimensionBandwidth) {
  const Network n =
      network_from_config(topology_config({{"topology.kind", "multidim"},
                                           {"topology.dims", "ring:4,fc:4,switch:4"},
                                           {"topology.dim_bandwidth", "400GB/s,300GB/s,100GB/s"},
                                           {"topology.dim_latency", "100ns,200ns,1us"}}));
  EXPECT_EQ(n.compute_count(), 64u);
  EXPECT_EQ(n.gpus_per_node(), 1u);
  EXPECT_EQ(n.switch_count(), 16u);
  EXPECT_EQ(n.arc_count(), 64u * 2 + 64u * 3 + 64u * 2);
  // NPU 0 = (0,0,0): ring neighbours 1 and 3 at 200 GB/s each, fc peers 4, 8, 12 at 100 GB/s
  // each, switch 64 (line of NPUs 0, 16, 32, 48) at 100 GB/s with half the latency.
  std::vector<std::tuple<VertexId, double, double>> got;
  for (ArcId a : n.out_arcs(0)) got.emplace_back(n.arc(a).dst, n.arc(a).bandwidth_Bps, n.arc(a).latency_s);
  const std::vector<std::tuple<VertexId, double, double>> want = {{1, 200e9, 100e-9},  {3, 200e9, 100e-9},
                                                                  {4, 100e9, 200e-9},  {8, 100e9, 200e-9},
                                                                  {12, 100e9, 200e-9}, {64, 100e9, 0.5e-6}};
  EXPECT_EQ(got, want);
  std::set<VertexId> line;
  for (ArcId a : n.out_arcs(64)) line.insert(n.arc(a).dst);
  EXPECT_EQ(line, (std::set<VertexId>{0, 16, 32, 48}));
  // Per-NPU egress = sum of the dimension bandwidths (the LIBRA bw_k).
  EXPECT_DOUBLE_EQ(port_stats(n).min_egress_Bps, 800e9);
  EXPECT_DOUBLE_EQ(port_stats(n).max_egress_Bps, 800e9);
  // Hops: ring:4 {0,1,2,1}, fc {0,1,1,1}, switch {0,2,2,2}; diameter 2+1+2.
  const HopStats hs = hop_stats(n);
  EXPECT_EQ(hs.diameter, 5u);
  EXPECT_NEAR(hs.mean_hops, (16.0 * 4 + 16.0 * 3 + 16.0 * 6) / 63, 1e-12);
  EXPECT_EQ(n.info().dim_levels, (std::vector<std::string>{"package", "node", "pod"}));
}

TEST(MultiDim, RingOfTwoIsOneArc) {
  const Network n = network_from_config(topology_config({{"topology.kind", "multidim"},
                                                         {"topology.dims", "ring:2,ring:3"},
                                                         {"topology.dim_bandwidth", "10GB/s"}}));
  ASSERT_EQ(n.out_arcs(0).size(), 3u);
  EXPECT_DOUBLE_EQ(n.arc(n.out_arcs(0)[0]).bandwidth_Bps, 10e9);  // to 1: the whole bw_0
  EXPECT_DOUBLE_EQ(n.arc(n.out_arcs(0)[1]).bandwidth_Bps, 5e9);   // to 2: half of bw_1
}

TEST(MultiDim, BadInput) {
  auto text = [](std::initializer_list<std::pair<const char*, const char*>> kv) {
    return bad_input_text([&] { network_from_config(topology_config(kv)); });
  };
  EXPECT_THAT(text({{"topology.kind", "multidim"}, {"topology.dims", "ring:4,fc:1"}}),
              HasSubstr("topology.dims"));
  EXPECT_THAT(text({{"topology.kind", "multidim"}, {"topology.dims", "ring:4,mesh:4"}}), HasSubstr("mesh"));
  EXPECT_THAT(text({{"topology.kind", "multidim"}, {"topology.dims", "ring:4,fc"}}), HasSubstr("type:size"));
  EXPECT_THAT(
      text({{"topology.kind", "multidim"}, {"topology.dims", "ring:4,fc:8"}, {"topology.servers", "4"}}),
      HasSubstr("32 NPUs but topology.servers x server.gpus = 16"));
  EXPECT_THAT(text({{"topology.kind", "multidim"},
                    {"topology.dims", "ring:4,fc:8"},
                    {"topology.dim_bandwidth", "1GB/s,2GB/s,3GB/s"}}),
              HasSubstr("topology.dim_bandwidth"));
  EXPECT_THAT(text({{"topology.kind", "multidim"},
                    {"topology.dims", "ring:4,fc:8"},
                    {"topology.dim_bandwidth", "1GB/s,0GB/s"}}),
              HasSubstr("topology.dim_bandwidth"));
  // Consistent servers x GPUs is accepted.
  EXPECT_EQ(
      text({{"topology.kind", "multidim"}, {"topology.dims", "ring:4,fc:8"}, {"topology.servers", "8"}}),
      "no error");
}

TEST(Expander, RegularSimpleConnectedAndReproducible) {
  ExpanderSpec s;
  s.servers = 50;
  s.degree = 5;
  s.link_bandwidth_Bps = 1e9;
  s.seed = 7;
  const Network a = build_expander(s), b = build_expander(s);
  for (VertexId v = 0; v < 50; ++v) {
    std::set<VertexId> nb;
    for (ArcId id : a.out_arcs(v)) nb.insert(a.arc(id).dst);
    EXPECT_EQ(nb.size(), 5u);
    EXPECT_FALSE(nb.count(v));
    EXPECT_EQ(a.in_arcs(v).size(), 5u);
  }
  EXPECT_TRUE(is_connected(a));
  ASSERT_EQ(a.arc_count(), b.arc_count());
  for (ArcId id = 0; id < a.arc_count(); ++id) EXPECT_EQ(a.arc(id).dst, b.arc(id).dst);
  s.seed = 8;
  const Network c = build_expander(s);
  bool differs = false;
  for (ArcId id = 0; id < a.arc_count(); ++id) differs |= a.arc(id).dst != c.arc(id).dst;
  EXPECT_TRUE(differs);
  s.degree = 3;
  s.servers = 51;  // 51 x 3 is odd
  EXPECT_THAT(bad_input_text([&] { build_expander(s); }), HasSubstr("topology.degree"));
}

}  // namespace
}  // namespace toposweep::topology

namespace toposweep::topology {
namespace {

// One server is a cluster: its GPUs talk over the server's fabric and the network carries
// nothing (a DGX alone).
TEST(OneServer, SwitchAndFatTreeBuildWithOneServer) {
  SwitchSpec sw;
  sw.servers = 1;
  sw.degree = 8;
  sw.link_bandwidth_Bps = 25e9;
  sw.server.gpus = 8;
  sw.server.intra_bandwidth_Bps = 300e9;
  const Network s = build_switch(sw);
  EXPECT_EQ(s.compute_count(), 1u);
  EXPECT_EQ(s.gpu_count(), 8u);
  FatTreeSpec ft;
  ft.servers = 1;
  ft.degree = 8;
  ft.tiers = 2;
  ft.link_bandwidth_Bps = 25e9;
  ft.server = sw.server;
  EXPECT_EQ(build_fattree(ft).gpu_count(), 8u);
  sw.servers = 0;
  EXPECT_THROW(build_switch(sw), BadInput);
}

// topology.link_efficiency: every arc carries the achievable rate; prices and port counts stay
// at the line rate.
TEST(LinkClasses, LinkEfficiencyScalesArcsNotPrices) {
  Config c = topology_config({{"topology.kind", "fattree"},
                              {"topology.servers", "16"},
                              {"topology.degree", "2"},
                              {"topology.link_bandwidth", "200Gbps"}});
  const Network line = network_from_config(c);
  c.set("topology.link_efficiency", "0.96", "test");
  const Network eff = network_from_config(c);
  ASSERT_EQ(line.arc_count(), eff.arc_count());
  for (ArcId a = 0; a < line.arc_count(); ++a)
    EXPECT_DOUBLE_EQ(eff.arc(a).bandwidth_Bps, 0.96 * line.arc(a).bandwidth_Bps);
  EXPECT_DOUBLE_EQ(eff.link_efficiency(), 0.96);
  const PriceTable prices = price_table(CostSpec{});
  EXPECT_NEAR(network_cost(eff, prices).total_usd, network_cost(line, prices).total_usd,
              1e-9 * network_cost(line, prices).total_usd);
  EXPECT_EQ(port_stats(eff).total_ports, port_stats(line).total_ports);
}

// The server's fabric: the server.intra_* keys, or the link class given as the device's default.
TEST(LinkClasses, ServerFabricFromKeysOrDefaults) {
  const LinkClass measured{300e9, 0.75, 8e-6, 3e-6};
  Config c = topology_config({{"topology.kind", "switch"}, {"topology.servers", "2"}});
  EXPECT_EQ(server_spec_from_config(c).intra(), (LinkClass{300e9, 1, 0, 0}));  // no device: ideal
  EXPECT_EQ(server_spec_from_config(c, &measured).intra(), measured);
  c.set("server.intra_efficiency", "0.5", "test");
  c.set("server.intra_latency", "2us", "test");
  EXPECT_EQ(server_spec_from_config(c, &measured).intra(), (LinkClass{300e9, 0.5, 2e-6, 3e-6}));
  c.set("server.intra_efficiency", "1.5", "test");
  EXPECT_THROW(server_spec_from_config(c, &measured), BadInput);
}

}  // namespace
}  // namespace toposweep::topology
