#include "toposweep/opt/metis_placement.hpp"

#include <gtest/gtest.h>

#include <set>

#include "toposweep/topology/families.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::opt {
namespace {

// 8 servers: fast links (100) inside {0,2,4,6} and {1,3,5,7} (rings), slow links (1) between
// i and i+1. Rank order groups {0..3}, {4..7} hold only slow links and 2 fast ones each; the
// known best split is evens / odds, internal bandwidth 2 groups x 4 ring links x 2 arcs x 100.
Network interleaved_clusters() {
  NetworkBuilder b(8);
  for (std::uint32_t parity = 0; parity < 2; ++parity)
    for (std::uint32_t i = 0; i < 4; ++i) b.add_link(parity + 2 * i, parity + 2 * ((i + 1) % 4), 100);
  for (std::uint32_t i = 0; i + 1 < 8; ++i) b.add_link(i, i + 1, 1);
  return std::move(b).build();
}

TEST(MetisPlacement, FindsTheInterleavedClusters) {
  const Network net = interleaved_clusters();
  const auto g = metis_node_groups(net, 2);
  EXPECT_EQ(g.method, "metis");
  EXPECT_DOUBLE_EQ(g.internal_bandwidth_Bps, 2 * 4 * 2 * 100.0);
  // Rank order: {0,1,2,3}: fast 0-2, 1-3 and slow 0-1, 1-2, 2-3 -> 2*(2*100 + 3*1) per group.
  EXPECT_DOUBLE_EQ(g.rank_order_internal_bandwidth_Bps, 2 * 2 * (2 * 100.0 + 3 * 1.0));
  for (std::uint32_t v = 0; v < 8; ++v) EXPECT_EQ(g.group_of_node[v], g.group_of_node[v % 2]);
  const auto pos = grouping_positions(g, 2);
  EXPECT_EQ(std::set<std::uint32_t>(pos.begin(), pos.end()).size(), 8u);
  for (std::uint32_t j = 0; j < 4; ++j) EXPECT_EQ(pos[j] % 2, pos[0] % 2);
}

TEST(MetisPlacement, NeverWorseThanRankOrder) {
  // A ring 0-1-...-15: rank order (contiguous arcs) is already optimal; METIS must not lose.
  topology::TopoOptSpec spec;
  spec.servers = 16;
  spec.degree = 4;
  spec.link_bandwidth_Bps = 10;
  spec.strides = {1, 5};
  const Network ring = topology::build_topoopt(spec);
  for (std::uint32_t groups : {2u, 4u, 8u}) {
    const auto g = metis_node_groups(ring, groups);
    EXPECT_GE(g.internal_bandwidth_Bps, g.rank_order_internal_bandwidth_Bps);
  }
  EXPECT_THROW(metis_node_groups(ring, 3), BadInput);
}

}  // namespace
}  // namespace toposweep::opt
