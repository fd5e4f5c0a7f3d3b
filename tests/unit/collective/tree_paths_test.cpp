// TreePaths: the closed-form sums of a shortest path on a fat-tree must be, bit for bit, those of
// the path the bidirectional search returns (summed in path order), for every pair of servers.
#include "toposweep/collective/tree_paths.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>

#include "../topology/topology_test_helpers.hpp"
#include "toposweep/collective/routing.hpp"
#include "toposweep/topology/families.hpp"

namespace toposweep {
namespace {

// The sums of the searched path, as the analytical model added them before the closed form.
PathSums searched(const Network& net, VertexId a, VertexId b) {
  RouteCache routes(net);
  const auto path = routes.shortest_path(a, b);
  EXPECT_TRUE(path.has_value());
  PathSums s;
  s.hops = static_cast<std::uint32_t>(path->size());
  for (ArcId x : *path) {
    s.latency_s += net.arc(x).latency_s;
    s.narrowest_Bps = std::min(s.narrowest_Bps, net.arc(x).bandwidth_Bps);
  }
  return s;
}

topology::FatTreeSpec fattree(std::uint32_t servers, std::uint32_t degree, std::uint32_t tiers,
                              std::uint32_t radix, double oversubscription) {
  // 0.7 us: not a power of two, so the latency sums round.
  topology::FatTreeSpec f =
      test::fattree_spec(servers, degree, tiers, radix, oversubscription, 12.5e9, 0.7e-6);
  f.server.gpus = 8;
  f.server.intra_bandwidth_Bps = 300e9;
  return f;
}

TEST(TreePaths, HandWorkedThreeTierHops) {
  // k = 4, 16 servers of degree 1: 2 servers per leaf, 2 leaves per pod, 4 pods.
  const Network net = build_fattree(fattree(16, 1, 3, 4, 1));
  const auto t = TreePaths::of(net);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->sums(0, 0).hops, 0u);
  EXPECT_EQ(t->sums(0, 1).hops, 2u);  // same leaf
  EXPECT_EQ(t->sums(0, 2).hops, 4u);  // same pod
  EXPECT_EQ(t->sums(0, 4).hops, 6u);  // other pod
  EXPECT_EQ(t->sums(0, 4).narrowest_Bps, 12.5e9);
  double six = 0;
  for (int i = 0; i < 6; ++i) six += 0.7e-6;
  EXPECT_EQ(t->sums(15, 0).latency_s, six);
}

TEST(TreePaths, EveryPairMatchesTheSearchedPathBitForBit) {
  struct Case {
    std::uint32_t servers, degree, tiers, radix;
    double oversubscription;
  };
  const Case cases[] = {
      {16, 1, 3, 4, 1},  {13, 1, 3, 6, 1}, {40, 2, 3, 8, 1},   {30, 1, 3, 8, 3},
      {24, 2, 2, 12, 1}, {17, 1, 2, 0, 1}, {36, 3, 3, 0, 2},   {20, 4, 3, 10, 1},
      {21, 3, 2, 0, 1},  {18, 2, 3, 6, 1}, {11, 4, 3, 0, 1.5},
  };
  int closed = 0, searched_only = 0;
  for (const Case& c : cases) {
    const Network net = build_fattree(fattree(c.servers, c.degree, c.tiers, c.radix, c.oversubscription));
    const std::string what = std::to_string(c.servers) + " servers, degree " + std::to_string(c.degree) +
                             ", " + std::to_string(c.tiers) + " tiers, radix " +
                             std::to_string(net.info().fattree_radix);
    // The closed form holds exactly where every server's ports end on one leaf (one merged link).
    bool one_leaf = true;
    for (VertexId v = 0; v < net.compute_count(); ++v) one_leaf = one_leaf && net.out_arcs(v).size() == 1;
    EXPECT_EQ(TreePaths::of(net).has_value(), one_leaf) << what;
    ++(one_leaf ? closed : searched_only);
    RouteCache routes(net);
    for (VertexId a = 0; a < net.compute_count(); ++a)
      for (VertexId b = 0; b < net.compute_count(); ++b) {
        const PathSums want = searched(net, a, b);
        const auto got = routes.path_sums(a, b);
        ASSERT_TRUE(got.has_value());
        ASSERT_EQ(got->hops, want.hops) << what << ": " << a << " -> " << b;
        ASSERT_EQ(std::bit_cast<std::uint64_t>(got->latency_s), std::bit_cast<std::uint64_t>(want.latency_s))
            << what << ": " << a << " -> " << b;
        ASSERT_EQ(got->narrowest_Bps, want.narrowest_Bps) << what << ": " << a << " -> " << b;
      }
  }
  EXPECT_GE(closed, 7);
  EXPECT_GE(searched_only, 2);
}

TEST(TreePaths, RefusedWhereSwitchLinksDifferOrGroupsDisagreeWithLinks) {
  // Two leaves (4, 5) under one spine (6), two servers each.
  auto build = [](double spine_bw, std::vector<std::uint32_t> leaf_of) {
    NetworkBuilder b(4);
    const VertexId leaf = b.add_switches(3);
    for (VertexId v = 0; v < 4; ++v) b.add_link(v, leaf + v / 2, 10e9, 1e-6);
    b.add_link(leaf, leaf + 2, 10e9, 1e-6);
    b.add_link(leaf + 1, leaf + 2, spine_bw, 1e-6);
    b.info().tree_groups = {std::move(leaf_of)};
    return std::move(b).build();
  };
  EXPECT_TRUE(TreePaths::of(build(10e9, {0, 0, 1, 1})).has_value());
  EXPECT_FALSE(TreePaths::of(build(20e9, {0, 0, 1, 1})).has_value());  // unlike switch links
  EXPECT_FALSE(TreePaths::of(build(10e9, {0, 1, 1, 1})).has_value());  // one leaf, two groups
  EXPECT_FALSE(TreePaths::of(build(10e9, {0, 0, 0, 0})).has_value());  // one group, two leaves
  EXPECT_FALSE(TreePaths::of(build(10e9, {0, 0, 1})).has_value());     // not every server
}

}  // namespace
}  // namespace toposweep
