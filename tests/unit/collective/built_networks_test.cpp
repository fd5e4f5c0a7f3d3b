// Collectives on networks made by build_network (the topology module's families), so the
// structure the algorithms rely on (topoopt strides, multidim dims, arcs) is the one users get.
#include <gtest/gtest.h>

#include <map>

#include "collective_config.hpp"
#include "toposweep/collective/config_keys.hpp"
#include "toposweep/collective/hierarchical.hpp"
#include "toposweep/collective/multiring.hpp"
#include "toposweep/collective/options.hpp"
#include "toposweep/collective/plan.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/topology/config_keys.hpp"
#include "toposweep/util/config.hpp"
#include "toposweep/util/error.hpp"
namespace toposweep {
namespace {

Config config(const std::map<std::string, std::string>& kv) {
  return test::collective_config(kv);
}

CollectiveRequest all_nodes(const Network& net, CollectiveOp op, double bytes) {
  CollectiveRequest r;
  r.op = op;
  r.bytes = bytes;
  r.gpus_per_node = net.gpus_per_node();
  for (VertexId v = 0; v < net.compute_count(); ++v) r.nodes.push_back(v);
  return r;
}

TEST(BuiltNetworks, TopoOptMultiRingUsesEveryStride) {
  // 16 servers, degree 4, explicit strides 1 and 3 (both coprime with 16): two bidirectional
  // rings, four directed rings at 100 Gbps each.
  const Network net = network_from_config(config({{"topology.kind", "topoopt"},
                                                  {"topology.servers", "16"},
                                                  {"topology.degree", "4"},
                                                  {"topology.strides", "1,3"},
                                                  {"topology.link_bandwidth", "100Gbps"},
                                                  {"topology.link_latency", "0s"},
                                                  {"server.gpus", "1"}}));
  ASSERT_EQ(net.info().kind, "topoopt");
  const auto plan = plan_collective(net, all_nodes(net, CollectiveOp::AllReduce, 1e9), "auto");
  EXPECT_EQ(plan.algorithm, "multiring");
  const double B = 100e9 / 8;
  EXPECT_NEAR(plan.time_s, 2.0 * 15 / 16 * 1e9 / (4 * B), 1e-12);
  const auto ring = plan_collective(net, all_nodes(net, CollectiveOp::AllReduce, 1e9), "ring");
  EXPECT_NEAR(ring.time_s / plan.time_s, 4.0, 1e-9);
}

TEST(BuiltNetworks, MultidimHierarchicalMatchesClosedForm) {
  const Network net = network_from_config(config({{"topology.kind", "multidim"},
                                                  {"topology.dims", "ring:4,fc:4,switch:4"},
                                                  {"topology.dim_bandwidth", "200GB/s,100GB/s,50GB/s"},
                                                  {"topology.dim_latency", "0s,0s,0s"},
                                                  {"topology.servers", "64"},
                                                  {"server.gpus", "1"}}));
  ASSERT_EQ(net.info().dims.size(), 3u);
  ASSERT_EQ(net.compute_count(), 64u);
  CollectiveOptions seq = collective_options_from_config(config({{"collective.model", "sequential"}}));
  const auto plan = plan_collective(net, all_nodes(net, CollectiveOp::AllReduce, 64e6), "auto", seq);
  EXPECT_EQ(plan.algorithm, "hierarchical");
  // 2*64e6*3/4 / 200e9 + 2*16e6*3/4 / 100e9 + 2*4e6*3/4 / 50e9 = 480us + 240us + 120us.
  EXPECT_NEAR(plan.time_s, 840e-6, 1e-12);
  // The same network's forest optimum can only be better than any schedule we build.
  const auto forest = plan_collective(net, all_nodes(net, CollectiveOp::AllGather, 64e6), "forest");
  const auto ring = plan_collective(net, all_nodes(net, CollectiveOp::AllGather, 64e6), "ring");
  EXPECT_LE(forest.optimal_time_s, ring.time_s * (1 + 1e-12));
  EXPECT_LE(forest.optimal_time_s, forest.built_time_s * (1 + 1e-12));
}

TEST(BuiltNetworks, SwitchTwoLevelAndBadModelKey) {
  const Network net = network_from_config(config({{"topology.kind", "switch"},
                                                  {"topology.servers", "8"},
                                                  {"topology.degree", "1"},
                                                  {"topology.link_bandwidth", "100Gbps"},
                                                  {"topology.link_latency", "0s"},
                                                  {"server.gpus", "4"},
                                                  {"server.intra_bandwidth", "300GB/s"}}));
  const auto plan =
      plan_collective(net, all_nodes(net, CollectiveOp::AllReduce, 1e9), "ring",
                      collective_options_from_config(config({{"collective.model", "sequential"}})));
  // NCCL's ring through all 32 GPUs: 2 x 31/32 of the buffer over each server's 12.5 GB/s link,
  // plus (sequential model) the same bus bytes on the 300 GB/s fabric.
  EXPECT_NEAR(plan.time_s, 2.0 * 31 / 32 * 1e9 / 12.5e9 + 2.0 * 31 / 32 * 1e9 / 300e9, 1e-12);
  EXPECT_THROW(collective_options_from_config(config({{"collective.model", "overlapped"}})), BadInput);
  EXPECT_THROW(collective_algorithm_from_config(config({{"collective.algorithm", "rings"}})), BadInput);
  EXPECT_EQ(collective_options_from_config(config({})).switch_routing, Routing::Auto);  // the default
  EXPECT_EQ(collective_options_from_config(config({{"collective.routing", "ECMP"}})).switch_routing,
            Routing::Ecmp);
  EXPECT_EQ(collective_options_from_config(config({{"collective.routing", "spread"}})).switch_routing,
            Routing::Spread);
  EXPECT_EQ(collective_options_from_config(config({{"collective.routing", "Shortest"}})).switch_routing,
            Routing::Shortest);
  EXPECT_THROW(collective_options_from_config(config({{"collective.routing", "adaptive"}})), BadInput);
  EXPECT_FALSE(collective_options_from_config(config({})).greedy_forest);  // exact by default
  EXPECT_TRUE(collective_options_from_config(config({{"collective.forest", "greedy"}})).greedy_forest);
  EXPECT_FALSE(collective_options_from_config(config({{"collective.forest", "Exact"}})).greedy_forest);
  EXPECT_THROW(collective_options_from_config(config({{"collective.forest", "optimal"}})), BadInput);
}

}  // namespace
}  // namespace toposweep
