// build_network from configuration keys: switch and topoopt first.
#include <gtest/gtest.h>

#include "toposweep/topology/build.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep {
namespace {

Config make(std::initializer_list<std::pair<const char*, const char*>> kv) {
  Config c;
  c.set("topology.link_bandwidth", "100Gbps", "default");
  c.set("topology.link_latency", "1us", "default");
  c.set("server.gpus", "4", "default");
  c.set("server.intra_bandwidth", "300GB/s", "default");
  c.set("topology.ring_group", "0", "default");
  c.set("topology.rings", "0", "default");
  for (const auto& [k, v] : kv) c.set(k, v, "test");
  return c;
}

TEST(BuildNetwork, SwitchHasOneUplinkPerServer) {
  const Network n = build_network(make({{"topology.kind", "switch"}, {"topology.servers", "8"}, {"topology.degree", "2"}}));
  EXPECT_EQ(n.compute_count(), 8u);
  EXPECT_EQ(n.switch_count(), 1u);
  EXPECT_EQ(n.arc_count(), 16u);
  EXPECT_DOUBLE_EQ(n.arc(n.out_arcs(0)[0]).bandwidth_Bps, 2 * 12.5e9);
  EXPECT_EQ(n.gpu_count(), 32u);
  EXPECT_EQ(n.info().kind, "switch");
}

TEST(BuildNetwork, TopoOptExplicitStrides) {
  const Network n = build_network(
      make({{"topology.kind", "topoopt"}, {"topology.servers", "12"}, {"topology.degree", "4"}, {"topology.strides", "1,5"}}));
  EXPECT_EQ(n.compute_count(), 12u);
  EXPECT_EQ(n.switch_count(), 0u);
  EXPECT_EQ(n.arc_count(), 12u * 4);
  EXPECT_EQ(n.info().strides, (std::vector<std::uint32_t>{1, 5}));
  // Node 0's neighbours: 1, 11 (stride 1) and 5, 7 (stride 5).
  std::vector<VertexId> nb;
  for (ArcId a : n.out_arcs(0)) nb.push_back(n.arc(a).dst);
  EXPECT_EQ(nb, (std::vector<VertexId>{1, 5, 7, 11}));
}

TEST(BuildNetwork, TopoOptBadInputNamesTheKey) {
  auto msg_of = [](const Config& c) {
    try {
      build_network(c);
    } catch (const BadInput& e) {
      return std::string(e.what()) + " | " + e.where();
    }
    return std::string("no error");
  };
  EXPECT_NE(msg_of(make({{"topology.kind", "topoopt"}, {"topology.servers", "8"}, {"topology.degree", "8"}})).find("topology.degree"), std::string::npos);
  EXPECT_NE(msg_of(make({{"topology.kind", "topoopt"}, {"topology.servers", "8"}, {"topology.degree", "3"}})).find("odd degree"), std::string::npos);
  EXPECT_NE(msg_of(make({{"topology.kind", "topoopt"}, {"topology.servers", "8"}, {"topology.degree", "4"}, {"topology.strides", "1,0"}})).find("topology.strides"), std::string::npos);
  EXPECT_NE(msg_of(make({{"topology.kind", "topoopt"}, {"topology.servers", "8"}, {"topology.degree", "4"}, {"topology.strides", "1,8"}})).find("topology.strides"), std::string::npos);
  // Stride 2 alone on 8 servers: 2 cycles of 4, disconnected.
  EXPECT_NE(msg_of(make({{"topology.kind", "topoopt"}, {"topology.servers", "8"}, {"topology.degree", "2"}, {"topology.strides", "2"}})).find("disconnected"), std::string::npos);
}

}  // namespace
}  // namespace toposweep
