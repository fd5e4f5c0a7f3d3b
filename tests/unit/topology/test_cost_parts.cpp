// Parts cost model (issue 34, item 4): switch chassis by radix and speed, link media by reach
// class, the bill of materials in `topology --json`. Every count and total below is derived by
// hand from the family's shape, in the comment above it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "topology_test_helpers.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/topology/cost.hpp"
#include "toposweep/topology/families.hpp"
#include "toposweep/topology/report.hpp"

namespace toposweep::topology {
namespace {

using ::testing::HasSubstr;

const std::string kSource = TOPOSWEEP_SOURCE_DIR;
constexpr double k100G = 12.5e9;  // bytes/s

// Round prices: NIC port 1; chassis 8/16/32 ports at 100G 1000/2000/3000; a DAC 10; multimode
// cable 20 + transceiver 100 per end; singlemode cable 30 + transceiver 300 per end; panel port 5.
const char* kParts =
    "[nic_port]\n100Gbps = 1\n"
    "[switch_chassis]\n8x100Gbps = 1000\n16x100Gbps = 2000\n32x100Gbps = 3000\n"
    "[multimode]\ncable.100Gbps = 20\ntransceiver.100Gbps = 100\n"
    "[singlemode]\ncable.100Gbps = 30\ntransceiver.100Gbps = 300\n"
    "[passive]\npatch_panel_port = 5\nfibre = 1000000\n";  // fibre: unused by the parts model

PriceTable parts_table() {
  return parse_price_table(std::string(kParts) + "[copper]\ncable.100Gbps = 10\n", "parts");
}

FatTreeSpec k4_fattree() {
  FatTreeSpec f;
  f.servers = 16;
  f.tiers = 3;
  f.radix = 4;
  f.link_bandwidth_Bps = k100G;
  return f;
}

TEST(CostParts, FatTreeK4) {
  // k = 4, 16 servers: 8 leaves (2 down, 2 up), 4 pods x 2 aggregation, 4 cores: 20 switches of
  // 4 ports -> 20 chassis 8x100G = 20,000. Links: 16 server-leaf (copper: 16 x 10 = 160),
  // 16 leaf-agg (multimode: 16 x 20 + 32 x 100 = 3,520), 16 agg-core (singlemode:
  // 16 x 30 + 32 x 300 = 10,080). NICs 16 x 1. Total 20,000 + 160 + 3,520 + 10,080 + 16 = 33,776.
  const CostBreakdown c = network_cost(build_fattree(k4_fattree()), parts_table());
  EXPECT_EQ(c.model, "parts");
  EXPECT_EQ(c.count.at("switch_chassis"), 20);
  EXPECT_EQ(c.by_component.at("switch_chassis"), 20000);
  EXPECT_EQ(c.count.at("copper_cable"), 16);
  EXPECT_EQ(c.count.at("multimode_cable"), 16);
  EXPECT_EQ(c.count.at("multimode_transceiver"), 32);
  EXPECT_EQ(c.count.at("singlemode_cable"), 16);
  EXPECT_EQ(c.count.at("singlemode_transceiver"), 32);
  EXPECT_EQ(c.count.at("nic_port"), 16);
  EXPECT_FALSE(c.count.count("copper_transceiver"));
  EXPECT_FALSE(c.by_component.count("fibre"));
  EXPECT_DOUBLE_EQ(c.total_usd, 33776);
  ASSERT_EQ(c.chassis.size(), 1u);
  EXPECT_EQ(c.chassis[0].radix, 8u);
  EXPECT_DOUBLE_EQ(c.chassis[0].speed_bps, 100e9);
  EXPECT_EQ(c.chassis[0].count, 20);
  ASSERT_EQ(c.media.size(), 3u);
  EXPECT_EQ(c.media[0].reach, Reach::Copper);
  EXPECT_EQ(c.media[1].reach, Reach::Multimode);
  EXPECT_EQ(c.media[2].reach, Reach::Singlemode);

  // Without a DAC at 100G (no [copper], or copper only at 400G) the server links go multimode:
  // 16 x 20 + 32 x 100 = 3,520 instead of 160 -> 37,136.
  const double no_copper = 33776 - 160 + 3520;
  EXPECT_DOUBLE_EQ(network_cost(build_fattree(k4_fattree()), parse_price_table(kParts, "p")).total_usd,
                   no_copper);
  EXPECT_DOUBLE_EQ(
      network_cost(build_fattree(k4_fattree()),
                   parse_price_table(std::string(kParts) + "[copper]\ncable.400Gbps = 10\n", "p"))
          .total_usd,
      no_copper);
}

TEST(CostParts, RailWithSpineAndRailOnly) {
  // Rail-optimized: 4 servers x 2 rails, radix 4, spine full: leaves 2 down + 2 up, 2 leaves per
  // rail -> 4 leaves, each to both of 2 spines. 8 server-leaf links (copper 8 x 10 = 80), 8
  // leaf-spine links (multimode 8 x 20 + 16 x 100 = 1,760), 6 chassis of 4 ports -> 8x at 1,000
  // = 6,000, 8 NIC ports. Total 6,000 + 80 + 1,760 + 8 = 7,848.
  RailSpec r;
  r.servers = 4;
  r.rails = 2;
  r.radix = 4;
  r.link_bandwidth_Bps = k100G;
  const CostBreakdown full = network_cost(build_rail(r), parts_table());
  EXPECT_EQ(full.count.at("switch_chassis"), 6);
  EXPECT_EQ(full.count.at("copper_cable"), 8);
  EXPECT_EQ(full.count.at("multimode_cable"), 8);
  EXPECT_EQ(full.count.at("multimode_transceiver"), 16);
  EXPECT_FALSE(full.count.count("singlemode_cable"));
  EXPECT_DOUBLE_EQ(full.total_usd, 7848);

  // Rail-only, 12 servers x 2 rails: one 12-port switch per rail -> the smallest chassis of 12
  // or more ports, 16x100G at 2,000: 4,000. 24 copper links 240, 24 NIC ports. Total 4,264.
  RailSpec o;
  o.servers = 12;
  o.rails = 2;
  o.spine = false;
  o.link_bandwidth_Bps = k100G;
  const CostBreakdown only = network_cost(build_rail(o), parts_table());
  ASSERT_EQ(only.chassis.size(), 1u);
  EXPECT_EQ(only.chassis[0].radix, 16u);
  EXPECT_EQ(only.chassis[0].count, 2);
  EXPECT_EQ(only.count.at("copper_cable"), 24);
  EXPECT_EQ(only.count.at("nic_port"), 24);
  EXPECT_DOUBLE_EQ(only.total_usd, 4264);

  // With chassis of 8 ports only, no 12-port switch can be bought: the design is infeasible.
  const PriceTable small = parse_price_table(
      "[nic_port]\n100Gbps = 1\n[switch_chassis]\n8x100Gbps = 1000\n[multimode]\ncable.100Gbps = 20\n"
      "[singlemode]\ncable.100Gbps = 30\n",
      "small.ini");
  EXPECT_THROW(network_cost(build_rail(o), small), InvalidDesign);
  EXPECT_THAT(test::bad_input_text([&] { network_cost(build_rail(o), small); }), HasSubstr("small.ini"));
}

TEST(CostParts, Dragonfly) {
  // a = 2 routers, p = 1 terminal, h = 1 global link per router: g = a h + 1 = 3 groups, 6
  // servers, 6 routers of 3 ports (8x chassis: 6,000). Links: 6 server-router + 3 intra-group
  // (one per group) copper: 9 x 10 = 90; 3 global (a h g / 2) singlemode: 3 x 30 + 6 x 300 =
  // 1,890; 6 NIC ports. Total 6,000 + 90 + 1,890 + 6 = 7,986.
  DragonflySpec d;
  d.routers = 2;
  d.terminals = 1;
  d.global_links = 1;
  d.link_bandwidth_Bps = k100G;
  const CostBreakdown c = network_cost(build_dragonfly(d), parts_table());
  EXPECT_EQ(c.count.at("switch_chassis"), 6);
  EXPECT_EQ(c.count.at("copper_cable"), 9);
  EXPECT_EQ(c.count.at("singlemode_cable"), 3);
  EXPECT_EQ(c.count.at("singlemode_transceiver"), 6);
  EXPECT_FALSE(c.count.count("multimode_cable"));
  EXPECT_DOUBLE_EQ(c.total_usd, 7986);
}

TEST(CostParts, SwitchFamilyPricesPortsNotArcs) {
  // 4 servers x 2 ports at 100G on one switch: 8 switch ports -> one 8x chassis (1,000); each
  // server's uplink arc stands for 2 ports, so 8 DAC links (80) and 8 NIC ports (8): 1,088.
  SwitchSpec s;
  s.servers = 4;
  s.degree = 2;
  s.link_bandwidth_Bps = k100G;
  const CostBreakdown c = network_cost(build_switch(s), parts_table());
  EXPECT_EQ(c.count.at("switch_chassis"), 1);
  EXPECT_EQ(c.count.at("copper_cable"), 8);
  EXPECT_EQ(c.count.at("nic_port"), 8);
  EXPECT_DOUBLE_EQ(c.total_usd, 1088);
  // Five servers x 2 = 10 ports: the 16-port chassis (2,000) -> 2,000 + 100 + 10 = 2,110.
  s.servers = 5;
  EXPECT_DOUBLE_EQ(network_cost(build_switch(s), parts_table()).total_usd, 2110);
}

TEST(CostParts, TorusAndDirectConnect) {
  // 4 x 4 torus through a patch panel: 16 servers of degree 4, 32 links, all singlemode:
  // 64 NIC ports (64), 32 cables (960), 64 transceivers (19,200), 64 panel ports (320): 20,544.
  TorusSpec t;
  t.dims = {4, 4};
  t.link_bandwidth_Bps = k100G;
  t.optical = "patch_panel";
  const CostBreakdown c = network_cost(build_torus(t, "test"), parts_table());
  EXPECT_EQ(c.count.at("singlemode_cable"), 32);
  EXPECT_EQ(c.count.at("singlemode_transceiver"), 64);
  EXPECT_EQ(c.count.at("patch_panel_port"), 64);
  EXPECT_FALSE(c.count.count("switch_chassis"));
  EXPECT_DOUBLE_EQ(c.total_usd, 20544);
  // The closed form prices the same ports and links.
  const CostBreakdown f = direct_connect_cost(16, 4, k100G, "patch_panel", parts_table());
  EXPECT_EQ(f.model, "parts");
  EXPECT_DOUBLE_EQ(f.total_usd, 20544);
  // The similar-cost fat-tree needs a speed-continuous table.
  EXPECT_THROW(similar_cost_fattree(20544, k4_fattree(), parts_table()), BadInput);
}

TEST(CostParts, OldTablesUnchanged) {
  // No parts sections: the component model, exactly as before (the k = 4 fat-tree under the
  // built-in table: 16 NIC ports x 400 + 80 switch ports x 200 + 96 transceivers x 100 + 48
  // fibres x 30 = 33,440).
  EXPECT_FALSE(builtin_price_table().has_parts());
  const CostBreakdown c = network_cost(build_fattree(k4_fattree()), builtin_price_table());
  EXPECT_EQ(c.model, "components");
  EXPECT_DOUBLE_EQ(c.total_usd, 16 * 400 + 80 * 200 + 96 * 100 + 48 * 30);
  EXPECT_TRUE(c.chassis.empty());
  // Multidim keeps LIBRA's per-dimension model under a parts table.
  const PriceTable p = load_price_table(kSource + "/inputs/costs/parts-2025.ini");
  EXPECT_TRUE(p.has_parts());
  const Network md =
      network_from_config(test::topology_config({{"topology.kind", "multidim"},
                                                 {"topology.dims", "ring:4,fc:8,switch:32"},
                                                 {"topology.dim_bandwidth", "100GB/s,50GB/s,25GB/s"}}));
  EXPECT_EQ(network_cost(md, p).model, "per_dimension");
  EXPECT_NEAR(network_cost(md, p).total_usd, 2083840, 1e-6);
}

TEST(CostParts, BomJson) {
  const Network n = build_fattree(k4_fattree());
  const nlohmann::json j = report_json(n, describe_topology(n, parts_table()));
  EXPECT_EQ(j.at("cost_model"), "parts");
  const auto& bom = j.at("bom");
  ASSERT_EQ(bom.at("switch_chassis").size(), 1u);
  EXPECT_EQ(bom.at("switch_chassis")[0].at("radix"), 8);
  EXPECT_EQ(bom.at("switch_chassis")[0].at("count"), 20);
  EXPECT_EQ(bom.at("switch_chassis")[0].at("usd"), 20000);
  ASSERT_EQ(bom.at("links").size(), 3u);
  EXPECT_EQ(bom.at("links")[2].at("reach"), "singlemode");
  EXPECT_EQ(bom.at("links")[2].at("cables"), 16);
  EXPECT_EQ(bom.at("links")[2].at("transceivers"), 32);
  EXPECT_EQ(bom.at("links")[2].at("usd"), 10080);
  // Old tables: no bom key.
  EXPECT_FALSE(report_json(n, describe_topology(n, builtin_price_table())).contains("bom"));
}

TEST(CostParts, MalformedSectionsNameFileAndLine) {
  const auto err = [](const std::string& text) {
    return test::bad_input_text([&] { parse_price_table(text, "p.ini"); });
  };
  EXPECT_THAT(err("[switch_chassis]\n64y400Gbps = 1\n"), HasSubstr("p.ini:2"));
  EXPECT_THAT(err("[switch_chassis]\nx400Gbps = 1\n"), HasSubstr("p.ini:2"));
  EXPECT_THAT(err("[switch_chassis]\n64x400Glops = 1\n"), HasSubstr("p.ini:2"));
  EXPECT_THAT(err("[multimode]\n\nfoo.400Gbps = 1\n"), HasSubstr("p.ini:3"));
  EXPECT_THAT(err("[copper]\ntransceiver.400Gbps = 1\n"), HasSubstr("p.ini:2"));
  EXPECT_THAT(err("[singlemode]\ncable.400Gbps = cheap\n"), HasSubstr("p.ini:2"));
  // A partial parts table names the file.
  EXPECT_THAT(err("[switch_chassis]\n64x400Gbps = 1\n[multimode]\ncable.400Gbps = 1\n"),
              HasSubstr("[singlemode]"));
}

TEST(CostParts, ShippedTableLoadsAndPricesA400GFabric) {
  // Every parts-2025.ini number parses; a 64-server 400G leaf-spine finds its chassis.
  const PriceTable p = load_price_table(kSource + "/inputs/costs/parts-2025.ini");
  FatTreeSpec f;
  f.servers = 64;
  f.degree = 8;
  f.tiers = 2;
  f.radix = 64;
  f.link_bandwidth_Bps = 50e9;
  const CostBreakdown c = network_cost(build_fattree(f), p);
  EXPECT_EQ(c.model, "parts");
  EXPECT_GT(c.total_usd, 0);
}

TEST(CostParts, CommandExitsTwoNamingTheLine) {
  if (!std::filesystem::exists(TOPOSWEEP_BINARY)) GTEST_SKIP() << "toposweep binary not built";
  const std::string file = ::testing::TempDir() + "/bad_parts_" + std::to_string(::getpid()) + ".ini";
  { std::ofstream(file) << "[nic_port]\n400Gbps = 1\n[switch_chassis]\n64 by 400Gbps = 25000\n"; }
  const std::string cmd =
      std::string(TOPOSWEEP_BINARY) +
      " topology --set topology.kind=fattree --set topology.servers=8 --set costs.table=" + file + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_TRUE(p);
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int st = pclose(p);
  std::filesystem::remove(file);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 2);
  EXPECT_THAT(out, HasSubstr("toposweep: error:"));
  EXPECT_THAT(out, HasSubstr(file + ":4"));
}

}  // namespace
}  // namespace toposweep::topology
