// Cost model: LIBRA per-dimension formula, component counts, tables, similar cost.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "topology_test_helpers.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/topology/cost.hpp"
#include "toposweep/topology/families.hpp"

namespace toposweep::topology {
namespace {

using ::testing::HasSubstr;

const std::string kSource = TOPOSWEEP_SOURCE_DIR;

TEST(Cost, LibraHandWorked3D) {
  // ring:4 (package) x fc:8 (node) x switch:32 (pod) = 1024 NPUs at 100, 50, 25 GB/s.
  // link: 1024 * (100*4.0 + 50*4.0 + 25*7.8) = 1024 * 795 = 814,080
  // switch: 1024 * 25 * 18.0 = 460,800; nic: 1024 * 25 * 31.6 = 808,960; total 2,083,840.
  const Network n =
      network_from_config(test::topology_config({{"topology.kind", "multidim"},
                                                 {"topology.dims", "ring:4,fc:8,switch:32"},
                                                 {"topology.dim_bandwidth", "100GB/s,50GB/s,25GB/s"}}));
  const CostBreakdown c = network_cost(n, builtin_price_table());
  EXPECT_EQ(c.model, "per_dimension");
  EXPECT_NEAR(c.by_component.at("link"), 814080, 1e-6);
  EXPECT_NEAR(c.by_component.at("switch"), 460800, 1e-6);
  EXPECT_NEAR(c.by_component.at("nic"), 808960, 1e-6);
  EXPECT_NEAR(c.total_usd, 2083840, 1e-6);
  // The older ASTRA-sim table: 1024 * (100*4 + 50*4 + 25*(7.4 + 23.7 + 47.8)) = 2,634,240.
  const CostBreakdown old = network_cost(n, load_price_table(kSource + "/inputs/costs/astrasim-2021.ini"));
  EXPECT_NEAR(old.total_usd, 2634240, 1e-6);
  // Per dimension, N * bw_k * unit_k.
  EXPECT_NEAR(libra_dimension_cost(1024, n.info().dims[2], "pod", builtin_price_table()), 1024 * 25 * 57.4,
              1e-6);
}

TEST(Cost, BuiltinTableEqualsShippedFile) {
  const PriceTable a = builtin_price_table();
  const PriceTable b = load_price_table(kSource + "/inputs/costs/libra.ini");
  EXPECT_EQ(a.link_per_GBps, b.link_per_GBps);
  EXPECT_EQ(a.switch_per_GBps, b.switch_per_GBps);
  EXPECT_EQ(a.nic_per_GBps, b.nic_per_GBps);
  EXPECT_EQ(a.nic_port, b.nic_port);
  EXPECT_EQ(a.transceiver, b.transceiver);
  EXPECT_EQ(a.switch_port, b.switch_port);
  EXPECT_EQ(a.patch_panel_port, b.patch_panel_port);
  EXPECT_EQ(a.ocs_port, b.ocs_port);
  EXPECT_EQ(a.fibre, b.fibre);
  EXPECT_DOUBLE_EQ(a.link_per_GBps.at("pod"), 7.8);
  EXPECT_DOUBLE_EQ(a.nic_port.at(100e9), 400);
}

TEST(Cost, PriceInterpolation) {
  const std::map<double, double> p = {{10e9, 100}, {100e9, 400}};
  EXPECT_DOUBLE_EQ(price_at_speed(p, 1e9, "x", "t"), 100);   // smallest part
  EXPECT_DOUBLE_EQ(price_at_speed(p, 55e9, "x", "t"), 250);  // halfway
  EXPECT_DOUBLE_EQ(price_at_speed(p, 100e9, "x", "t"), 400);
  EXPECT_DOUBLE_EQ(price_at_speed(p, 250e9, "x", "t"), 1000);  // 2.5 x the largest
  EXPECT_THAT(test::bad_input_text([] { price_at_speed({}, 1, "nic_port", "t.ini"); }), HasSubstr("t.ini"));
}

PriceTable simple_table() {
  // Flat prices make hand counting easy: NIC 1, transceiver 10, switch port 100, fibre 1000,
  // patch panel 10000 (per port, any speed).
  return parse_price_table(
      "[nic_port]\n100Gbps = 1\n[transceiver]\n100Gbps = 10\n[switch_port]\n100Gbps = 100\n"
      "[passive]\nfibre = 1000\npatch_panel_port = 10000\nocs_port = 3\n",
      "simple");
}

TEST(Cost, ComponentCountsTopoOptAndFatTree) {
  // topoopt n = 6, d = 4 at 100 Gb/s: 24 NIC ports, 24 transceivers, 12 fibres, 24 panel ports.
  TopoOptSpec s;
  s.servers = 6;
  s.degree = 4;
  s.link_bandwidth_Bps = 12.5e9;
  s.strides = {1, 3};  // stride 3 = n/2: two parallel links, still 2 ports per server
  const CostBreakdown t = network_cost(build_topoopt(s), simple_table());
  EXPECT_EQ(t.count.at("nic_port"), 24);
  EXPECT_EQ(t.count.at("transceiver"), 24);
  EXPECT_EQ(t.count.at("fibre"), 12);
  EXPECT_EQ(t.count.at("patch_panel_port"), 24);
  EXPECT_DOUBLE_EQ(t.total_usd, 24 * 1 + 24 * 10 + 12 * 1000 + 24 * 10000);
  const CostBreakdown formula = direct_connect_cost(6, 4, 12.5e9, "patch_panel", simple_table());
  EXPECT_DOUBLE_EQ(formula.total_usd, t.total_usd);
  // k = 4 fat-tree: 16 NIC ports; 48 links -> 96 transceivers, 80 switch ports, 48 fibres.
  FatTreeSpec f;
  f.servers = 16;
  f.tiers = 3;
  f.radix = 4;
  f.link_bandwidth_Bps = 12.5e9;
  const CostBreakdown ft = network_cost(build_fattree(f), simple_table());
  EXPECT_EQ(ft.count.at("nic_port"), 16);
  EXPECT_EQ(ft.count.at("switch_port"), 80);
  EXPECT_EQ(ft.count.at("transceiver"), 96);
  EXPECT_EQ(ft.count.at("fibre"), 48);
  EXPECT_FALSE(ft.by_component.count("patch_panel_port"));
  EXPECT_DOUBLE_EQ(ft.total_usd, 16 + 80 * 100 + 96 * 10 + 48 * 1000);
}

TEST(Cost, SimilarCostFatTree) {
  // With linear prices (10 Gb/s and up, US$ per Gb/s) the fat-tree cost is linear in speed,
  // so the similar-cost bandwidth has a closed form. k = 4 fat-tree, 16 servers:
  // 16 NIC ports, 80 switch ports, 96 transceivers at speed x Gb/s; 48 fibres flat.
  const PriceTable lin = parse_price_table(
      "[nic_port]\n10Gbps = 10\n1000Gbps = 1000\n[transceiver]\n10Gbps = 1\n1000Gbps = 100\n"
      "[switch_port]\n10Gbps = 5\n1000Gbps = 500\n[passive]\nfibre = 7\npatch_panel_port = 2\n",
      "linear");
  FatTreeSpec f;
  f.servers = 16;
  f.tiers = 3;
  f.radix = 4;
  // topoopt n = 16, d = 4, 100 Gb/s: 64 * (100 + 10 + 2) + 32 * 7 = 7392.
  const double target = direct_connect_cost(16, 4, 12.5e9, "patch_panel", lin).total_usd;
  EXPECT_DOUBLE_EQ(target, 7392);
  // fat-tree at x Gb/s: 16x + 80*0.5x + 96*0.1x + 48*7 = 65.6x + 336 -> x = 7056 / 65.6.
  const SimilarCost sc = similar_cost_fattree(target, f, lin);
  EXPECT_NEAR(sc.link_bandwidth_Bps * 8 / 1e9, 7056 / 65.6, 1e-6);
  EXPECT_NEAR(sc.cost_usd, target, 1e-6);
}

TEST(Cost, TableErrorsNameFileAndLine) {
  EXPECT_THAT(test::bad_input_text([] { parse_price_table("[nic_port]\n100 = 5\n", "p.ini"); }),
              HasSubstr("p.ini:2"));
  EXPECT_THAT(test::bad_input_text([] { parse_price_table("[per_dimension]\nlink.rack = 5\n", "p.ini"); }),
              HasSubstr("p.ini:2"));
  EXPECT_THAT(test::bad_input_text([] { parse_price_table("[passive]\nfibre = -1\n", "p.ini"); }),
              HasSubstr("p.ini:2"));
  EXPECT_THAT(test::bad_input_text([] { parse_price_table("[gpu]\na100 = 1\n", "p.ini"); }),
              HasSubstr("p.ini:2"));
  // A switch at the chiplet level has no LIBRA price.
  const Network n = network_from_config(test::topology_config({{"topology.kind", "multidim"},
                                                               {"topology.dims", "switch:4,ring:4"},
                                                               {"topology.dim_levels", "chiplet,pod"}}));
  EXPECT_THAT(test::bad_input_text([&] { network_cost(n, builtin_price_table()); }),
              HasSubstr("switch.chiplet"));
}

}  // namespace
}  // namespace toposweep::topology
