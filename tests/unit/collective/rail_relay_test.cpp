// The PXN relay of rail-only fabrics (topology/rail_relay.hpp) against closed forms worked by
// hand: which GPU pairs relay, and what a collective across rails pays on the server's fabric.
#include "toposweep/topology/rail_relay.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

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

// `servers` servers of `gpus` GPUs, `rails` NICs of 100 Gb/s (B = 12.5 GB/s), no link latency; a
// server fabric of `fabric` at efficiency 1 without latency unless `extra` says otherwise.
std::map<std::string, std::string> rail_keys(const std::string& spine, const std::string& servers,
                                             const std::string& gpus, const std::string& rails,
                                             const std::string& fabric,
                                             const std::map<std::string, std::string>& extra = {}) {
  std::map<std::string, std::string> kv = {
      {"topology.kind", "rail"},          {"topology.servers", servers},
      {"topology.rails", rails},          {"server.gpus", gpus},
      {"topology.spine", spine},          {"topology.link_bandwidth", "100Gbps"},
      {"topology.link_latency", "0s"},    {"server.intra_bandwidth", fabric},
      {"server.intra_efficiency", "1"},   {"server.intra_latency", "0s"},
      {"server.intra_step_latency", "0s"}};
  for (const auto& [k, v] : extra) kv[k] = v;
  return kv;
}

constexpr double kB = 12.5e9, kS = 1e9;

TEST(RailRelay, OnlyRailOnlyPairsOnDisjointRailsRelay) {
  // 8 GPUs, 8 rails: GPU l on rail l. 8 GPUs, 4 rails: GPUs 2r and 2r + 1 share rail r. 4 GPUs,
  // 8 rails: GPU l owns rails 2l and 2l + 1.
  const Network eight = network_from_config(config(rail_keys("none", "2", "8", "8", "240GB/s")));
  const Network shared = network_from_config(config(rail_keys("none", "2", "8", "4", "240GB/s")));
  const Network wide = network_from_config(config(rail_keys("none", "2", "4", "8", "240GB/s")));
  const Network full = network_from_config(config(rail_keys("full", "2", "8", "8", "240GB/s")));
  EXPECT_TRUE(rail_only(eight));
  EXPECT_FALSE(rail_only(full));
  for (std::uint32_t a = 0; a < 8; ++a)
    for (std::uint32_t b = 0; b < 8; ++b) {
      EXPECT_EQ(needs_rail_relay(eight, 0, a, 1, b), a != b) << a << " " << b;
      EXPECT_EQ(needs_rail_relay(shared, 0, a, 1, b), a / 2 != b / 2) << a << " " << b;
      EXPECT_FALSE(needs_rail_relay(full, 0, a, 1, b));   // the spine joins the rails
      EXPECT_FALSE(needs_rail_relay(eight, 0, a, 0, b));  // inside one server: no network
    }
  for (std::uint32_t a = 0; a < 4; ++a)
    for (std::uint32_t b = 0; b < 4; ++b) EXPECT_EQ(needs_rail_relay(wide, 0, a, 1, b), a != b);
}

// 2 servers x 4 GPUs, 4 rails, every GPU in a direct All-to-All of S bytes per rank (g = 4,
// N = 2): the two-level pattern (PXN / DeepEP) already moves every byte for the other server onto
// the GPU of its destination's rail, so the relay is its intra-node part on either fabric: each
// server sends g S (N - 1)/N = 2 S over its 4 NICs, S / (2 B) = 40 ms; each GPU moves S (g - 1)/g
// = 3 S / 4 over its fabric (F = 240 GB/s: 3.125 ms). The NICs are the bottleneck: pipelined
// 40 ms, sequential 43.125 ms, rail-only and rail-optimized alike. With a 10 GB/s fabric the
// fabric is: 75 ms pipelined.
TEST(RailRelay, TwoLevelAllToAllChargesTheRelayAsItsIntraNodePart) {
  for (const char* fabric : {"240GB/s", "10GB/s"})
    for (const char* model : {"pipelined", "sequential"})
      for (const char* spine : {"full", "none"}) {
        const auto c = config(rail_keys(spine, "2", "4", "4", fabric, {{"collective.model", model}}));
        const Network net = network_from_config(c);
        CollectiveRequest r;
        r.op = CollectiveOp::AllToAll;
        r.bytes = kS;
        r.gpus_per_node = 4;
        r.nodes = {0, 1};
        const auto plan = plan_collective(net, r, "direct", collective_options_from_config(c));
        const double F = std::string(fabric) == "10GB/s" ? 10e9 : 240e9;
        const double network = kS / (2 * kB), intra = 0.75 * kS / F;
        const double expect = std::string(model) == "pipelined" ? std::max(network, intra) : network + intra;
        EXPECT_NEAR(plan.time_s, expect, 1e-12 * expect) << fabric << " " << model << " " << spine;
      }
}

// One GPU per server (g = 1) on 4 servers x 4 GPUs, 4 rails: members A.0, B.0, C.1, D.2 (local
// indices 0, 0, 1, 2) in a direct All-to-All of S bytes per rank. The network part: each server
// sends 3 S / 4 over its 4 rails (ECMP), 3 S / (16 B) = 15 ms. On rail-only, C.1 and D.2 share no
// rail with any peer, so each relays all it sends, 3 x S / 4, through its server's fabric (A.0 and
// B.0 relay only their 2 shares to C and D): with F = 10 GB/s, 75 ms. Pipelined: 75 ms;
// sequential: 90 ms. Members on one rail (local indices all 1) or a rail-optimized fabric: 15 ms.
TEST(RailRelay, OneGpuPerServerAcrossRailsRelaysOverTheServerFabric) {
  for (const char* model : {"pipelined", "sequential"})
    for (const char* spine : {"full", "none"}) {
      const auto c = config(rail_keys(spine, "4", "4", "4", "10GB/s", {{"collective.model", model}}));
      const Network net = network_from_config(c);
      CollectiveRequest r;
      r.op = CollectiveOp::AllToAll;
      r.bytes = kS;
      r.gpus_per_node = 1;
      r.nodes = {0, 1, 2, 3};
      const auto opt = collective_options_from_config(c);
      const double network = 3 * kS / (16 * kB), relay = 0.75 * kS / 10e9;
      r.member_locals = {1, 1, 1, 1};
      EXPECT_NEAR(plan_collective(net, r, "direct", opt).time_s, network, 1e-12) << model << " " << spine;
      r.member_locals = {0, 0, 1, 2};
      const auto plan = plan_collective(net, r, "direct", opt);
      const bool relays = std::string(spine) == "none";
      const double expect = !relays                             ? network
                            : std::string(model) == "pipelined" ? std::max(network, relay)
                                                                : network + relay;
      EXPECT_NEAR(plan.time_s, expect, 1e-12) << model << " " << spine;
      EXPECT_NEAR(plan.intra_node_time_s, expect - network, 1e-12) << model << " " << spine;
    }
}

// The relay is one intra-node step: the fabric's latency and one step latency with its bytes. Two
// servers, members A.0 and B.3 (disjoint rails), ring AllReduce of S: each member sends
// 2 (N - 1)/N S = S over the network, all of it to a peer on another rail, so it relays S:
// 8.4 us + 3.4 us + S / (0.8 x 10 GB/s) on a fabric of efficiency 0.8.
TEST(RailRelay, RelayPaysTheFabricsLatencyAndEfficiency) {
  const auto c = config(rail_keys("none", "2", "4", "4", "10GB/s",
                                  {{"collective.model", "sequential"},
                                   {"server.intra_efficiency", "0.8"},
                                   {"server.intra_latency", "8.4us"},
                                   {"server.intra_step_latency", "3.4us"}}));
  const Network net = network_from_config(c);
  CollectiveRequest r;
  r.op = CollectiveOp::AllReduce;
  r.bytes = kS;
  r.nodes = {0, 1};
  const auto opt = collective_options_from_config(c);
  const double network = plan_collective(net, r, "ring", opt).time_s;
  r.member_locals = {0, 3};
  const auto plan = plan_collective(net, r, "ring", opt);
  const double relay = 8.4e-6 + 3.4e-6 + kS / 8e9;
  EXPECT_NEAR(plan.intra_node_time_s, relay, 1e-15);
  EXPECT_NEAR(plan.time_s, network + relay, 1e-12);
}

}  // namespace
}  // namespace toposweep
