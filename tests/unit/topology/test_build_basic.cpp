// build_network from configuration keys: switch and topoopt.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "topology_test_helpers.hpp"
#include "toposweep/topology/build.hpp"

namespace toposweep {
namespace {

using test::bad_input_text;
using test::topology_config;

TEST(BuildNetwork, SwitchHasOneUplinkPerServer) {
  const Network n = network_from_config(
      topology_config({{"topology.kind", "switch"}, {"topology.servers", "8"}, {"topology.degree", "2"}}));
  EXPECT_EQ(n.compute_count(), 8u);
  EXPECT_EQ(n.switch_count(), 1u);
  EXPECT_EQ(n.arc_count(), 16u);
  EXPECT_DOUBLE_EQ(n.arc(n.out_arcs(0)[0]).bandwidth_Bps, 2 * 12.5e9);  // 2 ports x 100 Gb/s
  EXPECT_EQ(n.gpu_count(), 32u);
  EXPECT_EQ(n.info().kind, "switch");
}

TEST(BuildNetwork, TopoOptExplicitStrides) {
  const Network n = network_from_config(topology_config({{"topology.kind", "topoopt"},
                                                         {"topology.servers", "12"},
                                                         {"topology.degree", "4"},
                                                         {"topology.strides", "1,5"}}));
  EXPECT_EQ(n.compute_count(), 12u);
  EXPECT_EQ(n.switch_count(), 0u);
  EXPECT_EQ(n.arc_count(), 12u * 4);
  EXPECT_EQ(n.info().strides, (std::vector<std::uint32_t>{1, 5}));
  std::vector<VertexId> nb;  // node 0: 1 and 11 (stride 1), 5 and 7 (stride 5)
  for (ArcId a : n.out_arcs(0)) nb.push_back(n.arc(a).dst);
  EXPECT_EQ(nb, (std::vector<VertexId>{1, 5, 7, 11}));
}

TEST(BuildNetwork, TopoOptStrideHalfIsTwoParallelLinksMerged) {
  // n = 8, stride 4: i+4 = i-4, so the ring's two links to the same peer merge into 2B.
  const Network n = network_from_config(topology_config({{"topology.kind", "topoopt"},
                                                         {"topology.servers", "8"},
                                                         {"topology.degree", "4"},
                                                         {"topology.strides", "1,4"}}));
  ASSERT_EQ(n.out_arcs(0).size(), 3u);
  EXPECT_EQ(n.arc(n.out_arcs(0)[1]).dst, 4u);
  EXPECT_DOUBLE_EQ(n.arc(n.out_arcs(0)[1]).bandwidth_Bps, 2 * 12.5e9);
}

TEST(BuildNetwork, TopoOptTotientPermsByDefault) {
  // n = 64, g = 64, degree 8: 4 rings picked geometrically among odd strides <= 32 (see
  // test_totient_perms for the hand-worked pick 1, 3, 7, 15).
  const Network n = network_from_config(
      topology_config({{"topology.kind", "topoopt"}, {"topology.servers", "64"}, {"topology.degree", "8"}}));
  EXPECT_EQ(n.info().strides, (std::vector<std::uint32_t>{1, 3, 7, 15}));
  EXPECT_EQ(n.info().ring_group, 64u);
  EXPECT_EQ(n.arc_count(), 64u * 8);
}

TEST(BuildNetwork, TopoOptExtraLinksUseLeftoverPorts) {
  const Network n = network_from_config(topology_config({{"topology.kind", "topoopt"},
                                                         {"topology.servers", "8"},
                                                         {"topology.degree", "3"},
                                                         {"topology.strides", "1"},
                                                         {"topology.extra_links", "0-4,1-5,2-6,3-7"}}));
  EXPECT_EQ(n.arc_count(), 8u * 3);
  EXPECT_THAT(bad_input_text([] {
                network_from_config(topology_config({{"topology.kind", "topoopt"},
                                                     {"topology.servers", "8"},
                                                     {"topology.degree", "3"},
                                                     {"topology.strides", "1"},
                                                     {"topology.extra_links", "0-4,0-5"}}));
              }),
              ::testing::HasSubstr("extra link 0-5 exceeds degree 3 at a server | topology.extra_links"));
}

TEST(BuildNetwork, TopoOptBadInputNamesTheCulprit) {
  auto text = [](std::initializer_list<std::pair<const char*, const char*>> kv) {
    return bad_input_text([&] { network_from_config(topology_config(kv)); });
  };
  using ::testing::HasSubstr;
  EXPECT_THAT(text({{"topology.kind", "topoopt"}, {"topology.servers", "8"}, {"topology.degree", "8"}}),
              HasSubstr("topology.degree"));
  EXPECT_THAT(text({{"topology.kind", "topoopt"}, {"topology.servers", "8"}, {"topology.degree", "3"}}),
              HasSubstr("odd degree"));
  EXPECT_THAT(text({{"topology.kind", "topoopt"}, {"topology.servers", "8"}, {"topology.strides", "1,0"}}),
              HasSubstr("topology.strides"));
  EXPECT_THAT(text({{"topology.kind", "topoopt"}, {"topology.servers", "8"}, {"topology.strides", "1,8"}}),
              HasSubstr("topology.strides"));
  EXPECT_THAT(text({{"topology.kind", "topoopt"}, {"topology.servers", "8"}, {"topology.strides", "1,7"}}),
              HasSubstr("same bidirectional ring"));
  EXPECT_THAT(text({{"topology.kind", "topoopt"},
                    {"topology.servers", "8"},
                    {"topology.degree", "2"},
                    {"topology.strides", "1,3"}}),
              HasSubstr("need 4 ports"));
  EXPECT_THAT(
      text({{"topology.kind", "topoopt"}, {"topology.servers", "8"}, {"topology.link_bandwidth", "0Gbps"}}),
      HasSubstr("topology.link_bandwidth"));
  EXPECT_THAT(
      text({{"topology.kind", "topoopt"}, {"topology.servers", "8"}, {"topology.link_bandwidth", "100"}}),
      HasSubstr("topology.link_bandwidth"));
  // Stride 2 alone on 8 servers: 2 cycles of 4, disconnected ...
  EXPECT_THAT(text({{"topology.kind", "topoopt"},
                    {"topology.servers", "8"},
                    {"topology.degree", "2"},
                    {"topology.strides", "2"}}),
              HasSubstr("disconnected"));
  EXPECT_THAT(text({{"topology.kind", "ring"}}), HasSubstr("topology.kind"));
  // ... unless the config says it is intended.
  const Network n = network_from_config(topology_config({{"topology.kind", "topoopt"},
                                                         {"topology.servers", "8"},
                                                         {"topology.degree", "2"},
                                                         {"topology.strides", "2"},
                                                         {"topology.allow_disconnected", "true"}}));
  EXPECT_EQ(n.arc_count(), 16u);
}

}  // namespace
}  // namespace toposweep
