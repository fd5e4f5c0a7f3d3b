// The PXN relay of rail-only fabrics in both network models: a transfer or a collective between
// GPUs on disjoint rails pays the server's fabric as well, against closed forms worked by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim_test_helpers.hpp"
#include "toposweep/sim/comm_groups.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/topology/build.hpp"

namespace toposweep::sim {
namespace {

using test::one_comm;

// `servers` x 4 GPUs, 4 rails of 100 Gb/s (B = 12.5 GB/s) with 1 us per link, a 10 GB/s server
// fabric (slower than a NIC, so that its bytes show) with 5 us latency and 1 us per step.
Network rail_net(const std::string& spine, const std::string& servers) {
  return network_from_config(test::sim_config({{"topology.kind", "rail"},
                                               {"topology.servers", servers},
                                               {"topology.rails", "4"},
                                               {"server.gpus", "4"},
                                               {"topology.spine", spine},
                                               {"topology.link_bandwidth", "100Gbps"},
                                               {"topology.link_latency", "1us"},
                                               {"server.intra_bandwidth", "10GB/s"},
                                               {"server.intra_efficiency", "1"},
                                               {"server.intra_latency", "5us"},
                                               {"server.intra_step_latency", "1us"}}));
}

double run(const Network& net, const TaskGraph& g, NetworkModelKind kind, bool pipelined,
           const std::string& algorithm = "auto") {
  SimOptions o;
  o.model = kind;
  o.comm.algorithm = algorithm;
  o.comm.hierarchical_pipelined = pipelined;
  return simulate_iteration(net, g, o).engine.makespan_s;
}

constexpr double kB = 12.5e9, kF = 10e9, kAlpha = 1e-6;

// A group's local indices: each rank's distance from the first rank of its node's run, kept only
// when a group has one member per node and they differ (servers renumbered, as a placed job's
// are: node_of_gpu need not be sorted).
TEST(RailRelay, LocalIndicesOfOneMemberPerNodeGroups) {
  Placement p;
  p.gpus_per_node = 4;
  p.node_of_gpu = {3, 3, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2};
  EXPECT_EQ(group_nodes(std::vector<std::uint32_t>{1, 6}, p).locals, (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(group_nodes(std::vector<std::uint32_t>{0, 7, 9}, p).locals,
            (std::vector<std::uint32_t>{0, 3, 1}));
  EXPECT_TRUE(group_nodes(std::vector<std::uint32_t>{2, 6, 10}, p).locals.empty());  // all on GPU 2
  EXPECT_TRUE(group_nodes(std::vector<std::uint32_t>{0, 1, 5}, p).locals.empty());   // two on node 3
}

// A point-to-point send of b bytes from GPU 0 of server A to GPU 1 of server B (ranks 0 and 5):
// over the network 2 links (server, rail switch, server), 2 us + b / B. On rail-only the two
// GPUs share no rail: the bytes cross A's fabric to A.1 first (NCCL's PXN), 5 us + 1 us + b / F.
// Pipelined the slower of the two, sequential their sum; rank 4 (B.0, the same rail) or a
// rail-optimized fabric: the network alone.
TEST(RailRelay, TransferAcrossRailsPaysTheServerFabric) {
  const double b = 2e8;
  const double network = 2 * kAlpha + b / kB, relay = 5e-6 + 1e-6 + b / kF;
  const TaskGraph across = one_comm(TaskKind::Transfer, CollectiveOp::AllReduce, b, {{0, 5}}, 8);
  const TaskGraph aligned = one_comm(TaskKind::Transfer, CollectiveOp::AllReduce, b, {{0, 4}}, 8);
  for (const char* spine : {"none", "full"}) {
    const Network net = rail_net(spine, "2");
    for (bool pipelined : {true, false})
      for (NetworkModelKind kind : {NetworkModelKind::Analytical, NetworkModelKind::Flow}) {
        SCOPED_TRACE(std::string(spine) + (pipelined ? " pipelined" : " sequential") +
                     (kind == NetworkModelKind::Flow ? " flow" : " analytical"));
        const double expect = std::string(spine) == "full" ? network
                              : pipelined                  ? std::max(network, relay)
                                                           : network + relay;
        EXPECT_NEAR(run(net, across, kind, pipelined), expect, 1e-12);
        EXPECT_NEAR(run(net, aligned, kind, pipelined), network, 1e-12);
      }
  }
}

// A direct All-to-All of S among A.0, B.0, C.1, D.2 (ranks 0, 4, 9, 14 on 4 servers): each
// server sends 3 S / 4 over its 4 rails, 2 x 1 us + 3 S / (16 B) (the network part); on rail-only
// C.1 and D.2 relay all 3 S / 4 they send (no peer shares their rail), 5 us + 1 us + 3 S / (4 F).
// Analytical: pipelined the slower of the two, sequential their sum. The flow model hashes each
// flow onto one rail, so its network part is slower than the even split (hash collisions,
// NetworkModels.EcmpAllToAllHashCollisionsSlowTheFlowModel) and the same on both fabrics; on
// rail-only it adds what the relay takes beyond the idle network's time (pipelined) or all of it.
TEST(RailRelay, AllToAllOfOneGpuPerServerAcrossRails) {
  const double S = 1e9;
  const double network = 2 * kAlpha + 3 * S / (16 * kB), relay = 5e-6 + 1e-6 + 3 * S / (4 * kF);
  const TaskGraph g = one_comm(TaskKind::Collective, CollectiveOp::AllToAll, S, {{0, 4, 9, 14}}, 16);
  const Network only = rail_net("none", "4"), optimized = rail_net("full", "4");
  for (bool pipelined : {true, false}) {
    SCOPED_TRACE(pipelined ? "pipelined" : "sequential");
    const double a_only = run(only, g, NetworkModelKind::Analytical, pipelined, "direct");
    EXPECT_NEAR(a_only, pipelined ? std::max(network, relay) : network + relay, 1e-12);
    EXPECT_NEAR(run(optimized, g, NetworkModelKind::Analytical, pipelined, "direct"), network, 1e-12);
    const double f_only = run(only, g, NetworkModelKind::Flow, pipelined, "direct");
    const double f_optimized = run(optimized, g, NetworkModelKind::Flow, pipelined, "direct");
    EXPECT_GT(f_optimized, network);
    EXPECT_NEAR(f_only - f_optimized, pipelined ? relay - network : relay, 1e-12);
  }
}

}  // namespace
}  // namespace toposweep::sim
