// Servers of different sizes and fabrics (issue 18): the network's per-server layout, rank order
// over it, and the two-level collective on it.
#include <gtest/gtest.h>

#include "toposweep/collective/plan.hpp"
#include "toposweep/topology/families.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/workload/task_graph.hpp"

namespace toposweep {
using namespace topology;
namespace {

SwitchSpec four_servers(std::vector<std::uint32_t> gpus, std::vector<double> intra_Bps = {}) {
  SwitchSpec s;
  s.servers = 4;
  s.degree = 1;
  s.link_bandwidth_Bps = 1e12;  // so that the fabric inside the servers decides
  s.server.gpus = 8;
  s.server.intra_bandwidth_Bps = 300e9;
  s.server.gpus_of_server = std::move(gpus);
  for (double b : intra_Bps) {
    LinkClass l = s.server.intra();
    l.bandwidth_Bps = b;
    s.server.intra_of_server.push_back(l);
  }
  return s;
}

TEST(MixedServerNetwork, RankOrderFillsServersOfDifferentSizesInOrder) {
  const Network net = build_switch(four_servers({8, 4, 8, 4}));
  EXPECT_EQ(net.gpu_count(), 24u);
  EXPECT_EQ(net.gpus_per_node(), 8u);  // the largest
  EXPECT_EQ(net.first_gpu(2), 12u);
  EXPECT_EQ(net.gpus_on(3), 4u);
  const auto counts = net.gpus_of_nodes();
  const Placement p = rank_order_placement(24, std::span<const std::uint32_t>(counts));
  // Ranks 0-7 on server 0, 8-11 on 1, 12-19 on 2, 20-23 on 3: rank 12 is on server 2, and the
  // TP-8 group of ranks 8..15 straddles servers 1 and 2.
  EXPECT_EQ(p.node_of_gpu[7], 0u);
  EXPECT_EQ(p.node_of_gpu[8], 1u);
  EXPECT_EQ(p.node_of_gpu[11], 1u);
  EXPECT_EQ(p.node_of_gpu[12], 2u);
  EXPECT_EQ(p.node_of_gpu[15], 2u);
  EXPECT_EQ(p.node_of_gpu[23], 3u);
  EXPECT_THROW(build_switch(four_servers({8, 4, 8})), BadInput);
}

TEST(MixedServerNetwork, TwoLevelCollectiveTakesTheSlowestMemberFabric) {
  // An AllReduce over servers 0 and 1 with 8 GPUs each: the intra part on a 300 GB/s and a
  // 15 GB/s server takes the 15 GB/s time, exactly as if both were 15 GB/s.
  CollectiveRequest r;
  r.op = CollectiveOp::AllReduce;
  r.nodes = {0, 1};
  r.gpus_per_node = 8;
  r.bytes = 1e9;
  const auto time = [&](std::vector<double> intra) {
    return plan_collective(build_switch(four_servers({}, std::move(intra))), r, "ring", {}).time_s;
  };
  const double mixed = time({300e9, 15e9, 300e9, 300e9});
  EXPECT_DOUBLE_EQ(mixed, time({15e9, 15e9, 15e9, 15e9}));
  EXPECT_GT(mixed, time({300e9, 300e9, 300e9, 300e9}));
  EXPECT_DOUBLE_EQ(time({300e9, 300e9, 15e9, 15e9}), time({300e9, 300e9, 300e9, 300e9}));  // non-members
}

TEST(MixedServerNetwork, TwoLevelCollectiveWithPerNodeCounts) {
  // Equal per-node counts are the uniform request exactly; 8 + 4 GPUs lies between 4 + 4 and 8 + 8.
  const Network net = build_switch(four_servers({}));
  CollectiveRequest r;
  r.op = CollectiveOp::AllReduce;
  r.nodes = {0, 1};
  r.bytes = 1e9;
  const auto time = [&](std::uint32_t g, std::vector<std::uint32_t> counts) {
    r.gpus_per_node = g;
    r.node_gpus = std::move(counts);
    return plan_collective(net, r, "ring", {}).time_s;
  };
  EXPECT_DOUBLE_EQ(time(4, {4, 4}), time(4, {}));
  const double mixed = time(8, {8, 4});
  EXPECT_GT(mixed, time(4, {}));
  EXPECT_LT(mixed, time(8, {}));
  EXPECT_THROW(time(8, {8}), RuntimeFailure);  // a count for every member node
}

}  // namespace
}  // namespace toposweep
