// Collectives on rail fabrics (topology.kind = rail) against closed forms worked by hand.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "collective_config.hpp"
#include "toposweep/collective/config_keys.hpp"
#include "toposweep/collective/options.hpp"
#include "toposweep/collective/plan.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/topology/config_keys.hpp"
#include "toposweep/util/config.hpp"
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

// 6 servers, 100 Gb/s NICs (B = 12.5 GB/s), no link latency, an ideal 240 GB/s server fabric.
// tiers = 3 (rail-optimized): the radix the builder picks puts the servers' leaves in 2 pods
// under a core tier, whose routes between pods are longer but no narrower.
std::map<std::string, std::string> rail_keys(const std::string& rails, const std::string& gpus,
                                             const std::string& spine, const std::string& tiers = "2") {
  return {{"topology.kind", "rail"},
          {"topology.servers", "6"},
          {"topology.rail_tiers", tiers},
          {"topology.rails", rails},
          {"server.gpus", gpus},
          {"topology.spine", spine},
          {"topology.link_bandwidth", "100Gbps"},
          {"topology.link_latency", "0s"},
          {"server.intra_bandwidth", "240GB/s"},
          {"server.intra_efficiency", "1"},
          {"server.intra_latency", "0s"},
          {"server.intra_step_latency", "0s"}};
}

constexpr double kB = 12.5e9, kF = 240e9, kBytes = 1e9;

TEST(RailCollectives, RingAllReduceOverOneRailIsNcclsRingClosedForm) {
  // One NIC per server: NCCL's ring through all n = 6 x 4 GPUs sends 2(n-1)/n of the buffer over
  // every GPU's fabric link and over every server's NIC, one after the other (sequential model):
  // t = 2 (n-1)/n x bytes x (1/B + 1/F).
  const CollectiveOptions seq = collective_options_from_config(config({{"collective.model", "sequential"}}));
  for (const char* spine : {"full", "none"})
    for (const char* tiers : {"2", "3"}) {
      const Network net = network_from_config(config(rail_keys("1", "4", spine, tiers)));
      const double n = 24;
      const auto plan = plan_collective(net, all_nodes(net, CollectiveOp::AllReduce, kBytes), "ring", seq);
      EXPECT_NEAR(plan.time_s, 2 * (n - 1) / n * kBytes * (1 / kB + 1 / kF), 1e-12) << spine << tiers;
    }
}

TEST(RailCollectives, ForestAllGatherUsesEveryRail) {
  // One GPU per server, 4 rails: the tightest cut is one server receiving 5 of 6 units through its
  // 4 NICs, so t* = (5/6) x bytes / (4 B), rail-optimized or rail-only alike (every rail reaches
  // every server), and the exact forest attains it.
  for (const char* spine : {"full", "none"})
    for (const char* tiers : {"2", "3"}) {
      const Network net = network_from_config(config(rail_keys("4", "1", spine, tiers)));
      const auto plan = plan_collective(net, all_nodes(net, CollectiveOp::AllGather, kBytes), "forest");
      const double t_star = 5.0 / 6 * kBytes / (4 * kB);
      EXPECT_NEAR(plan.optimal_time_s, t_star, 1e-12) << spine << tiers;
      EXPECT_NEAR(plan.built_time_s, t_star, t_star * 1e-9) << spine << tiers;
    }
}

// NCCL runs one ring channel per rail (each crossing between servers on its own GPU's NIC), so a
// ring over servers of 4 rails reaches 4 B per server: t = 2 (n-1)/n x bytes x (1/(4B) + 1/F).
// The planner's default routing on rail fabrics (collective.routing = auto: ecmp) splits each
// transfer evenly over the equal-cost first hops, one per rail, so a ring gets every NIC too
// (with the first shortest path it got one rail: 161.3 ms instead of 46.3).
TEST(RailCollectives, RingAllReduceOverFourRailsUsesEveryNic) {
  const CollectiveOptions seq = collective_options_from_config(config({{"collective.model", "sequential"}}));
  for (const auto& [spine, tiers] : {std::pair{"none", "2"}, {"full", "2"}, {"full", "3"}}) {
    const Network net = network_from_config(config(rail_keys("4", "4", spine, tiers)));
    const double n = 24;
    const auto plan = plan_collective(net, all_nodes(net, CollectiveOp::AllReduce, kBytes), "ring", seq);
    EXPECT_NEAR(plan.time_s, 2 * (n - 1) / n * kBytes * (1 / (4 * kB) + 1 / kF), 1e-12) << spine << tiers;
  }
}

// hierarchical on a family without dimensions: the 4 GPUs of a server reduce-scatter and
// all-gather inside it (2 (g-1)/g of the buffer over its fabric), and one ring among the N = 6
// servers moves 2 (N-1)/N of the server's buffer over its NICs (4 rails: 4B), sequentially:
// t = 2 (N-1)/N x bytes / 4B + 2 (g-1)/g x bytes / F; ReduceScatter and AllGather half of each.
// On one switch with degree 2 (one 2B uplink a server): the same with 2B. NCCL's flat ring (the
// test above) sends (n-1)/n with n = 24 GPUs instead of (N-1)/N.
TEST(RailCollectives, HierarchicalIsAServerRingBetweenTwoFabricPhases) {
  const CollectiveOptions seq = collective_options_from_config(config({{"collective.model", "sequential"}}));
  const double N = 6, g = 4;
  auto expect = [&](const Network& net, double nic_Bps, const char* what) {
    for (const CollectiveOp op :
         {CollectiveOp::AllReduce, CollectiveOp::ReduceScatter, CollectiveOp::AllGather}) {
      const double k = op == CollectiveOp::AllReduce ? 2 : 1;
      const auto plan = plan_collective(net, all_nodes(net, op, kBytes), "hierarchical", seq);
      EXPECT_EQ(plan.algorithm, "hierarchical");
      EXPECT_NEAR(plan.time_s, k * (N - 1) / N * kBytes / nic_Bps + k * (g - 1) / g * kBytes / kF, 1e-12)
          << what << " op " << static_cast<int>(op);
    }
  };
  for (const char* spine : {"full", "none"})
    for (const char* tiers : {"2", "3"})
      expect(network_from_config(config(rail_keys("4", "4", spine, tiers))), 4 * kB, spine);
  const std::map<std::string, std::string> sw = {{"topology.kind", "switch"},
                                                 {"topology.servers", "6"},
                                                 {"topology.degree", "2"},
                                                 {"server.gpus", "4"},
                                                 {"topology.link_bandwidth", "100Gbps"},
                                                 {"topology.link_latency", "0s"},
                                                 {"server.intra_bandwidth", "240GB/s"},
                                                 {"server.intra_efficiency", "1"},
                                                 {"server.intra_latency", "0s"},
                                                 {"server.intra_step_latency", "0s"}};
  expect(network_from_config(config(sw)), 2 * kB, "switch");
}

}  // namespace
}  // namespace toposweep
