#include "toposweep/opt/strategy_placement.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "toposweep/util/error.hpp"

namespace toposweep::opt {
namespace {

using Groups = std::vector<std::vector<std::uint32_t>>;

// 8 single-GPU servers: two fast (100) 4-cliques {0,2,4,6} and {1,3,5,7}, interleaved in rank
// order, joined by slow (1) links 0-1, 2-3, 4-5, 6-7.
Network interleaved_cliques() {
  NetworkBuilder b(8);
  for (std::uint32_t parity = 0; parity < 2; ++parity)
    for (std::uint32_t i = 0; i < 4; ++i)
      for (std::uint32_t j = i + 1; j < 4; ++j) b.add_link(parity + 2 * i, parity + 2 * j, 100);
  for (std::uint32_t i = 0; i < 8; i += 2) b.add_link(i, i + 1, 1);
  return std::move(b).build();
}

TEST(LogicalServerGroups, TensorGroupsSpanningServers) {
  // 16 GPUs, 2 per server, tp 4, pp 2 (dp 2): TP group k holds ranks 4k..4k+3, servers 2k, 2k+1.
  EXPECT_EQ(logical_server_groups(16, 2, 4, 2, false), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
}

TEST(LogicalServerGroups, PipelineGroupsWhenTensorFitsInAServer) {
  // 8 GPUs, 2 per server, tp 2, pp 2, dp 2: a TP group is inside one server (no grouping); PP
  // group (t, d) holds ranks o and o + tp*dp = o + 4, i.e. servers o/2 and o/2 + 2.
  EXPECT_TRUE(logical_server_groups(8, 2, 2, 2, false).empty());
  EXPECT_EQ(logical_server_groups(8, 2, 2, 2, true), (Groups{{0, 2}, {1, 3}}));
  // pp 1: a pipeline group is one rank.
  EXPECT_TRUE(logical_server_groups(8, 2, 2, 1, true).empty());
}

TEST(PlaceStrategy, RankOrderIsRankOverGpusPerNode) {
  const Network net = interleaved_cliques();
  const auto p = place_strategy(net, 8, 4, 1, PlacementKind::RankOrder);
  EXPECT_EQ(p.method, "rank_order");
  for (std::uint32_t r = 0; r < 8; ++r) EXPECT_EQ(p.placement.node_of_gpu[r], r);
}

TEST(PlaceStrategy, MetisPutsEachTensorGroupInsideAClique) {
  const Network net = interleaved_cliques();
  const auto p = place_strategy(net, 8, 4, 1, PlacementKind::Metis);
  EXPECT_EQ(p.method, "metis");
  EXPECT_EQ(p.grouped, "tp");
  Groups groups = p.node_groups;
  std::sort(groups.begin(), groups.end());
  EXPECT_EQ(groups, (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  // Cliques: 2 groups x 6 links x 2 arcs x 100. Rank order {0,1,2,3}: fast 0-2, 1-3, slow 0-1,
  // 2-3 -> 2 groups x 2 arcs x (2*100 + 2*1).
  EXPECT_DOUBLE_EQ(p.internal_bandwidth_Bps, 2 * 6 * 2 * 100.0);
  EXPECT_DOUBLE_EQ(p.rank_order_internal_bandwidth_Bps, 2 * 2 * (2 * 100.0 + 2 * 1.0));
  // Every TP group (ranks 4k..4k+3) runs on servers of one parity, and the placement is a bijection.
  std::set<std::uint32_t> used(p.placement.node_of_gpu.begin(), p.placement.node_of_gpu.end());
  EXPECT_EQ(used.size(), 8u);
  for (std::uint32_t k = 0; k < 2; ++k)
    for (std::uint32_t t = 0; t < 4; ++t)
      EXPECT_EQ(p.placement.node_of_gpu[4 * k + t] % 2, p.placement.node_of_gpu[4 * k] % 2);
}

TEST(PlaceStrategy, MetisKeepsRankOrderWhenNoGroupSpansServers) {
  const Network net = interleaved_cliques();
  const auto p = place_strategy(net, 8, 1, 1, PlacementKind::Metis);  // pure DP
  EXPECT_EQ(p.method, "rank_order");
  EXPECT_EQ(p.grouped, "");
  for (std::uint32_t r = 0; r < 8; ++r) EXPECT_EQ(p.placement.node_of_gpu[r], r);
}

// 4 servers x 2 GPUs, tp 2 pp 2 dp 2: pipeline groups are the strided server pairs {0,2} and
// {1,3}. Here exactly those pairs are joined by fast links (100) and neighbours by slow ones (1),
// so rank order already holds all the fast bandwidth: 2 groups x 2 arcs x 100 = 400, where
// consecutive blocks {0,1}, {2,3} would hold 2 x 2 x 1 = 4. METIS cannot beat rank order here.
TEST(PlaceStrategy, PipelineRankOrderIsJudgedByItsStridedGroups) {
  NetworkBuilder b(4, 2);
  b.add_link(0, 2, 100);
  b.add_link(1, 3, 100);
  b.add_link(0, 1, 1);
  b.add_link(2, 3, 1);
  const Network net = std::move(b).build();
  const auto p = place_strategy(net, 8, 2, 2, PlacementKind::Metis);
  EXPECT_EQ(p.grouped, "pp");
  EXPECT_DOUBLE_EQ(p.rank_order_internal_bandwidth_Bps, 2 * 2 * 100.0);
  EXPECT_DOUBLE_EQ(p.internal_bandwidth_Bps, 2 * 2 * 100.0);
  EXPECT_EQ(p.method, "rank_order");
  for (std::uint32_t r = 0; r < 8; ++r) EXPECT_EQ(p.placement.node_of_gpu[r], r / 2);
}

TEST(PlacementKindNames, ParseAndReject) {
  EXPECT_EQ(parse_placement_kind("metis", "k"), PlacementKind::Metis);
  EXPECT_EQ(parse_placement_kind("rank_order", "k"), PlacementKind::RankOrder);
  EXPECT_STREQ(placement_kind_name(PlacementKind::Metis), "metis");
  EXPECT_THROW(parse_placement_kind("random", "k"), BadInput);
}

}  // namespace
}  // namespace toposweep::opt
