// METIS placement on mixed servers (issue 18): servers only take the place of servers of their
// own class (device, GPU count, fabric), so every rank keeps the device its plan was built for,
// while the groups still land on the fast direct links.
#include <gtest/gtest.h>

#include <set>

#include "toposweep/opt/strategy_placement.hpp"
#include "toposweep/sim/simulate.hpp"

namespace toposweep::opt {
namespace {

// 8 servers x 4 GPUs; devices: servers 0-3 kind 0, 4-7 kind 1. Every server on a slow switch.
// `links`: direct 400-unit links.
Network eight(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& links) {
  NetworkBuilder b(8, 4, 300e9);
  const VertexId sw = b.add_switches(1);
  for (std::uint32_t s = 0; s < 8; ++s) b.add_link(s, sw, 1);
  for (const auto& [a, c] : links) b.add_link(a, c, 400);
  return std::move(b).build();
}

const std::vector<std::uint16_t> kDevices{0, 0, 0, 0, 1, 1, 1, 1};

// Every rank runs on a server of the device its rank-order server has.
void expect_devices_kept(const Network& net, const StrategyPlacement& p) {
  const Placement rank = sim::rank_order_on(net, 32);
  for (std::uint32_t r = 0; r < 32; ++r)
    EXPECT_EQ(kDevices[p.placement.node_of_gpu[r]], kDevices[rank.node_of_gpu[r]]) << "rank " << r;
}

TEST(MixedPlacement, TensorGroupsOfOneDeviceStayOnThatDeviceAndTheFastLinks) {
  // TP 8 spans two servers: rank order's TP server pairs {0,1},{2,3} (kind 0), {4,5},{6,7}
  // (kind 1) have no direct links. Direct links pair 0-2, 1-3, 4-6, 5-7 inside each kind, and
  // tempt a class-blind partition with cross-kind links 0-4, 1-5, 2-6, 3-7.
  const Network net = eight({{0, 2}, {1, 3}, {4, 6}, {5, 7}, {0, 4}, {1, 5}, {2, 6}, {3, 7}});
  const StrategyPlacement p = place_strategy(net, 32, 8, 1, PlacementKind::Metis, 1, kDevices);
  ASSERT_EQ(p.method, "metis");
  EXPECT_EQ(p.grouped, "tp");
  std::set<std::set<std::uint32_t>> sets;
  for (const auto& g : p.node_groups) sets.insert(std::set<std::uint32_t>(g.begin(), g.end()));
  EXPECT_EQ(sets, (std::set<std::set<std::uint32_t>>{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_DOUBLE_EQ(p.rank_order_internal_bandwidth_Bps, 0);
  EXPECT_GT(p.internal_bandwidth_Bps, 0);
  expect_devices_kept(net, p);
}

TEST(MixedPlacement, PipelineGroupsOfEqualCompositionPairOneServerOfEachDevice) {
  // TP 4 (one server), PP 2, DP 4: stage 0 on servers 0-3 (kind 0), stage 1 on 4-7 (kind 1), so
  // every pipeline pairs one server of each kind. Direct links 0-5, 1-4, 2-7, 3-6: METIS pairs
  // along them, and logical stage-0 servers stay on kind-0 servers.
  const Network net = eight({{0, 5}, {1, 4}, {2, 7}, {3, 6}});
  const StrategyPlacement p = place_strategy(net, 32, 4, 2, PlacementKind::Metis, 1, kDevices);
  ASSERT_EQ(p.method, "metis");
  EXPECT_EQ(p.grouped, "pp");
  std::set<std::set<std::uint32_t>> sets;
  for (const auto& g : p.node_groups) sets.insert(std::set<std::uint32_t>(g.begin(), g.end()));
  EXPECT_EQ(sets, (std::set<std::set<std::uint32_t>>{{0, 5}, {1, 4}, {2, 7}, {3, 6}}));
  expect_devices_kept(net, p);
}

TEST(MixedPlacement, MixedCompositionsKeepRankOrder) {
  // TP 8 over servers 3 and 4 mixes the kinds in one group while others are pure: rank order.
  const std::vector<std::uint16_t> devices{0, 0, 0, 1, 1, 1, 1, 1};
  const Network net = eight({{0, 2}, {1, 3}, {4, 6}, {5, 7}});
  const StrategyPlacement p = place_strategy(net, 32, 8, 1, PlacementKind::Metis, 1, devices);
  EXPECT_EQ(p.method, "rank_order");
  EXPECT_EQ(p.placement.node_of_gpu, sim::rank_order_on(net, 32).node_of_gpu);
}

TEST(MixedPlacement, OneDeviceIsTodaysPartition) {
  const Network net = eight({{0, 2}, {1, 3}, {4, 6}, {5, 7}});
  const std::vector<std::uint16_t> one(8, 0);
  const StrategyPlacement a = place_strategy(net, 32, 8, 1, PlacementKind::Metis, 1, one);
  const StrategyPlacement b = place_strategy(net, 32, 8, 1, PlacementKind::Metis, 1);
  EXPECT_EQ(a.placement.node_of_gpu, b.placement.node_of_gpu);
  EXPECT_EQ(a.method, b.method);
}

}  // namespace
}  // namespace toposweep::opt
