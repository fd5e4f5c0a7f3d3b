// The node-deduplicated MoE All-to-All (CollectiveRequest::dedup, strategy.ep_dispatcher = deepep):
// the fraction of the network bytes against brute force over every routing of a token, and the
// two-level closed form of a switch with the network part scaled by it.
#include "toposweep/util/alltoall_dedup.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <string>
#include <vector>

#include "collective_config.hpp"
#include "toposweep/collective/options.hpp"
#include "toposweep/collective/plan.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/util/config.hpp"

namespace toposweep {
namespace {

// Tallies, over every set of k experts a token on node 0 can be routed to (expert e on node
// e / per_node): the other nodes holding at least one of them (one copy each with dedup) and the
// experts on other nodes (one copy each without).
struct Tally {
  int nodes, per_node;
  double copies = 0, plain = 0, sets = 0;
  // Every k-subset of `pool` (expert ids).
  void route(const std::vector<int>& pool, int k) {
    const int P = static_cast<int>(pool.size());
    std::vector<int> pick(k);
    for (int i = 0; i < k; ++i) pick[i] = i;
    while (true) {
      std::vector<bool> hit(nodes, false);
      for (int i : pick) {
        hit[pool[i] / per_node] = true;
        plain += pool[i] / per_node != 0;
      }
      copies += std::count(hit.begin() + 1, hit.end(), true);
      ++sets;
      int i = k - 1;
      while (i >= 0 && pick[i] == P - k + i) --i;
      if (i < 0) break;
      ++pick[i];
      for (int j = i + 1; j < k; ++j) pick[j] = pick[j - 1] + 1;
    }
  }
  double fraction() const { return (copies / sets) / (plain / sets); }
};

// Every set of k of the E experts.
double brute_force(int k, int E, int N) {
  Tally t{N, E / N};
  std::vector<int> all(E);
  for (int e = 0; e < E; ++e) all[e] = e;
  t.route(all, k);
  return t.fraction();
}

// Group-limited routing with a group on each node: every set of M of the N nodes (uniform), then
// every set of k of their experts.
double brute_force_limited(int k, int E, int N, int M) {
  Tally t{N, E / N};
  for (unsigned mask = 0; mask < (1u << N); ++mask) {
    if (std::popcount(mask) != M) continue;
    std::vector<int> pool;
    for (int n = 0; n < N; ++n)
      if (mask >> n & 1)
        for (int e = 0; e < E / N; ++e) pool.push_back(n * (E / N) + e);
    t.route(pool, k);
  }
  return t.fraction();
}

TEST(AllToAllDedup, GroupLimitedRoutingEqualsBruteForce) {
  for (const auto& [k, E, N, M] : std::vector<std::array<int, 4>>{
           {2, 8, 4, 2}, {4, 16, 4, 2}, {3, 12, 4, 3}, {4, 24, 6, 2}, {6, 24, 6, 4}})
    EXPECT_NEAR(dedup_network_fraction(k, E, N, N, M), brute_force_limited(k, E, N, M), 1e-12)
        << k << " of " << E << " on " << N << " within " << M;
  // All groups allowed, or groups not on the nodes: the unlimited fraction.
  EXPECT_EQ(dedup_network_fraction(8, 256, 8, 8, 8), dedup_network_fraction(8, 256, 8));
  EXPECT_EQ(dedup_network_fraction(8, 256, 16, 8, 4), dedup_network_fraction(8, 256, 16));
  // DeepSeek-V3: 8 experts within 4 of 8 nodes.
  EXPECT_NEAR(dedup_network_fraction(8, 256, 8, 8, 4), 0.454, 5e-4);
}

TEST(AllToAllDedup, FractionEqualsBruteForceOverEveryRouting) {
  for (const auto& [k, E, N] : std::vector<std::array<int, 3>>{{1, 8, 2},
                                                               {2, 8, 2},
                                                               {2, 8, 4},
                                                               {3, 12, 3},
                                                               {4, 12, 3},
                                                               {4, 16, 4},
                                                               {8, 16, 2},
                                                               {6, 18, 6},
                                                               {2, 8, 8}})
    EXPECT_NEAR(dedup_network_fraction(k, E, N), brute_force(k, E, N), 1e-12)
        << k << " of " << E << " on " << N;
  // One node, or k = 1, or one expert per node: nothing saved.
  EXPECT_EQ(dedup_network_fraction(8, 256, 1), 1.0);
  EXPECT_NEAR(dedup_network_fraction(1, 64, 8), 1.0, 1e-15);
  EXPECT_NEAR(dedup_network_fraction(4, 16, 16), 1.0, 1e-15);
  // The cases the header names.
  EXPECT_NEAR(dedup_network_fraction(8, 256, 8), 0.662, 5e-4);
  EXPECT_NEAR(dedup_network_fraction(8, 128, 2), 0.249, 5e-4);
}

CollectiveRequest alltoall(const Network& net, double bytes, TokenDedup dedup) {
  CollectiveRequest r;
  r.op = CollectiveOp::AllToAll;
  r.bytes = bytes;
  r.gpus_per_node = net.gpus_per_node();
  r.dedup = dedup;
  for (VertexId v = 0; v < net.compute_count(); ++v) r.nodes.push_back(v);
  return r;
}

// N servers of g GPUs on one switch, pipelined two-level All-to-All: max(network, intra), the
// network part g S (N - 1) / N / B scaled by the fraction, the part inside the servers unchanged.
TEST(AllToAllDedup, TwoLevelOnASwitchScalesTheNetworkPartOnly) {
  const double S = 1e9, B = 4 * 100e9 / 8;
  for (int g : {1, 4, 8})
    for (const std::string intra_bw : {"1000GB/s", "10GB/s"}) {
      const auto c = test::collective_config({{"topology.kind", "switch"},
                                              {"topology.servers", "8"},
                                              {"topology.degree", "4"},
                                              {"topology.link_bandwidth", "100Gbps"},
                                              {"topology.link_latency", "0s"},
                                              {"server.gpus", std::to_string(g)},
                                              {"server.intra_bandwidth", intra_bw}});
      const Network net = network_from_config(c);
      const TokenDedup dsv3{8, 256};
      const double r = dedup_network_fraction(8, 256, 8);
      const auto plain =
          plan_collective(net, alltoall(net, S, {}), "hierarchical", collective_options_from_config(c));
      const auto dedup =
          plan_collective(net, alltoall(net, S, dsv3), "hierarchical", collective_options_from_config(c));
      const double network = g * S * 7 / 8 / B;
      const LinkClass& fabric = net.intra_link();
      const double intra = g == 1 ? 0.0
                                  : fabric.latency_s + (g - 1) * fabric.step_latency_s +
                                        S * (g - 1) / g / fabric.achievable_Bps();
      EXPECT_NEAR(plain.time_s, std::max(network, intra), 1e-12 * plain.time_s) << g << " " << intra_bw;
      EXPECT_NEAR(dedup.time_s, std::max(r * network, intra), 1e-12 * dedup.time_s) << g << " " << intra_bw;
      // Other operations ignore it.
      CollectiveRequest ag = alltoall(net, S, dsv3);
      ag.op = CollectiveOp::AllGather;
      CollectiveRequest ag_plain = ag;
      ag_plain.dedup = {};
      EXPECT_EQ(plan_collective(net, ag, "ring").time_s, plan_collective(net, ag_plain, "ring").time_s);
    }
}

}  // namespace
}  // namespace toposweep
