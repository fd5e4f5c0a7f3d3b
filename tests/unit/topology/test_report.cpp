// The `topology --json` object: names and values of the user contract (docs/topology.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "topology_test_helpers.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/topology/report.hpp"

namespace toposweep::topology {
namespace {

TEST(Report, TopoOptRingJson) {
  // Ring of 8 servers (stride 1, degree 2) at 100 Gb/s: diameter 4, mean 16/7, bisection 2
  // links = 25 GB/s; cost with the built-in table: 16 NIC ports x 400 + 16 transceivers x 100
  // + 16 patch-panel ports x 100 + 8 fibres x 30 = 9840.
  const Network n = network_from_config(test::topology_config({{"topology.kind", "topoopt"},
                                                               {"topology.servers", "8"},
                                                               {"topology.degree", "2"},
                                                               {"topology.strides", "1"}}));
  const nlohmann::json j = report_json(n, describe_topology(n, builtin_price_table()), true);
  EXPECT_EQ(j.at("kind"), "topoopt");
  EXPECT_EQ(j.at("servers"), 8);
  EXPECT_EQ(j.at("switches"), 0);
  EXPECT_EQ(j.at("gpus"), 32);
  EXPECT_EQ(j.at("links"), 16);
  EXPECT_EQ(j.at("degree"), 2);
  EXPECT_EQ(j.at("diameter"), 4);
  EXPECT_DOUBLE_EQ(j.at("mean_hops").get<double>(), 16.0 / 7);
  EXPECT_DOUBLE_EQ(j.at("bisection_Bps").get<double>(), 25e9);
  EXPECT_EQ(j.at("bisection_method"), "closed_form");
  EXPECT_DOUBLE_EQ(j.at("cost_usd").get<double>(), 9840);
  EXPECT_DOUBLE_EQ(j.at("cost_breakdown").at("nic_port").get<double>(), 6400);
  EXPECT_EQ(j.at("strides"), nlohmann::json::array({1}));
  ASSERT_EQ(j.at("edges").size(), 16u);
  EXPECT_EQ(j.at("edges")[0], nlohmann::json::array({0, 1, 12.5e9, 1e-6}));
  const std::string text = report_text(n, describe_topology(n, builtin_price_table()));
  EXPECT_THAT(text, ::testing::HasSubstr("strides 1"));
  EXPECT_THAT(text, ::testing::HasSubstr("diameter 4"));
}

TEST(Report, MultiDimHasDimsAndNoUniformDegreeWhenMixed) {
  const Network n = network_from_config(
      test::topology_config({{"topology.kind", "multidim"}, {"topology.dims", "ring:4,switch:2"}}));
  const nlohmann::json j = report_json(n, describe_topology(n, builtin_price_table()));
  EXPECT_EQ(j.at("dims").size(), 2u);
  EXPECT_EQ(j.at("dims")[1].at("type"), "switch");
  EXPECT_EQ(j.at("dims")[1].at("level"), "pod");
  EXPECT_EQ(j.at("degree"), 3);  // 2 ring arcs + 1 switch uplink per NPU
  EXPECT_FALSE(j.contains("strides"));
  EXPECT_FALSE(j.contains("edges"));
}

}  // namespace
}  // namespace toposweep::topology
