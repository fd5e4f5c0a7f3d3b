// Closed-form alpha-beta times of the classic algorithms on small hand-built networks.
#include <gtest/gtest.h>

#include <cmath>

#include "test_networks.hpp"
#include "toposweep/collective/multiring.hpp"
#include "toposweep/collective/patterns.hpp"
#include "toposweep/collective/plan.hpp"
#include "toposweep/topology/families.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep {
namespace {

constexpr double kS = 1e9;       // bytes
constexpr double kB = 25e9;      // bytes/s
constexpr double kAlpha = 1e-6;  // s

CollectiveRequest request(CollectiveOp op, std::vector<VertexId> nodes, double bytes = kS) {
  CollectiveRequest r;
  r.op = op;
  r.nodes = std::move(nodes);
  r.bytes = bytes;
  return r;
}

void expect_rel(double actual, double expected, double rel = 1e-12) {
  EXPECT_NEAR(actual, expected, std::abs(expected) * rel) << "expected " << expected;
}

TEST(Ring, AllReduceMatchesClosedFormOnRingNetwork) {
  for (std::uint32_t p : {2u, 3u, 8u, 13u}) {
    const Network net = testnet::ring(p, kB, kAlpha);
    const auto plan = plan_collective(net, request(CollectiveOp::AllReduce, testnet::iota_nodes(p)), "ring");
    expect_rel(plan.time_s, 2.0 * (p - 1) / p * kS / kB + 2.0 * (p - 1) * kAlpha);
    expect_rel(plan.latency_s, 2.0 * (p - 1) * kAlpha);
    EXPECT_EQ(plan.algorithm, "ring");
  }
}

TEST(Ring, ReduceScatterAllGatherAndSwitchPaths) {
  const std::uint32_t p = 8;
  const Network ring = testnet::ring(p, kB, kAlpha);
  for (auto op : {CollectiveOp::ReduceScatter, CollectiveOp::AllGather}) {
    const auto plan = plan_collective(ring, request(op, testnet::iota_nodes(p)), "ring");
    expect_rel(plan.time_s, (p - 1.0) / p * kS / kB + (p - 1.0) * kAlpha);
  }
  // On a switch every ring hop crosses two links (up, down), each used by one hop: the
  // bandwidth term is unchanged, alpha doubles.
  const Network star = testnet::star(p, kB, kAlpha);
  const auto plan = plan_collective(star, request(CollectiveOp::AllReduce, testnet::iota_nodes(p)), "ring");
  expect_rel(plan.time_s, 2.0 * (p - 1) / p * kS / kB + 2.0 * (p - 1) * 2 * kAlpha);
}

TEST(Ring, CongestionWhenRingOrderFightsTheTopology) {
  // Ring order 0,2,1,3 on a one-way 4-cycle 0->1->2->3->0: hops 0->2 (0,1,2), 2->1 (2,3,0,1),
  // 1->3 (1,2,3), 3->0 (3,0) put exactly two hops on every arc.
  NetworkBuilder b(4);
  for (VertexId i = 0; i < 4; ++i) b.add_arc(i, (i + 1) % 4, kB);
  const Network net = std::move(b).build();
  const auto plan = plan_collective(net, request(CollectiveOp::AllGather, {0, 2, 1, 3}), "ring");
  expect_rel(plan.time_s, 3.0 * (kS / 4) * 2 / kB);
}

TEST(Ring, FlowsCarryEveryStep) {
  const std::uint32_t p = 6;
  const Network net = testnet::ring(p, kB, kAlpha);
  CollectiveOptions opt;
  opt.with_flows = true;
  const auto plan =
      plan_collective(net, request(CollectiveOp::AllReduce, testnet::iota_nodes(p)), "ring", opt);
  ASSERT_EQ(plan.flows.size(), p);
  for (const Flow& f : plan.flows) {
    EXPECT_EQ(f.path.size(), 1u);
    expect_rel(f.bytes, 2.0 * (p - 1) * kS / p);
    EXPECT_EQ(f.stage, 0u);
  }
  EXPECT_EQ(plan.stages, 1u);
}

TEST(MultiRing, DisjointRingsMultiplyBandwidth) {
  // n = 9, strides 1, 2, 4 all coprime with 9: three bidirectional rings, six directed rings on
  // disjoint arcs, each carrying a sixth of the data.
  const std::uint32_t n = 9;
  for (std::uint32_t r = 1; r <= 3; ++r) {
    std::vector<std::uint32_t> strides{1, 2, 4};
    strides.resize(r);
    const Network net = testnet::circulant(n, strides, kB, 0);
    const auto plan =
        plan_collective(net, request(CollectiveOp::AllReduce, testnet::iota_nodes(n)), "multiring");
    expect_rel(plan.time_s, 2.0 * (n - 1) / n * kS / kB / (2.0 * r));
    EXPECT_EQ(plan.algorithm, "multiring");
    const auto autop = plan_collective(net, request(CollectiveOp::AllReduce, testnet::iota_nodes(n)), "auto");
    EXPECT_EQ(autop.algorithm, "multiring");
  }
}

TEST(MultiRing, OnlyStridesThatServeTheGroup) {
  // n = 8, group {0, 2, 4, 6}: stride 2 cycles through exactly the group, stride 1 does not,
  // stride 6 is stride 2's reverse (same links).
  const Network net = testnet::circulant(8, {1, 2, 6}, kB, 0);
  std::vector<std::uint32_t> strides;
  const auto rings = serving_stride_rings(net, {0, 2, 4, 6}, &strides);
  ASSERT_EQ(rings.size(), 2u);
  EXPECT_EQ(strides, std::vector<std::uint32_t>{2});
  EXPECT_EQ(rings[0], (std::vector<VertexId>{0, 2, 4, 6}));
  EXPECT_EQ(rings[1], (std::vector<VertexId>{6, 4, 2, 0}));
  // {0, 1, 2, 3}: no stride cycles through it, so multiring routes rings over the network's
  // links (see subgroup_and_spread_test.cpp); never slower than the plain ring.
  EXPECT_TRUE(serving_stride_rings(net, {0, 1, 2, 3}).empty());
  const auto sub = plan_collective(net, request(CollectiveOp::AllReduce, {0, 1, 2, 3}), "auto");
  EXPECT_EQ(sub.algorithm, "multiring");
  EXPECT_LE(sub.time_s, plan_collective(net, request(CollectiveOp::AllReduce, {0, 1, 2, 3}), "ring").time_s);
}

TEST(Hierarchical, HandWorkedThreeDimensionalCase) {
  // ring:4 @200GB/s 100ns, fc:2 @100GB/s 1us, switch:4 @25GB/s 2us; AllReduce of 64 MB.
  // dim0: 2*64e6*3/4 = 96e6 B -> 480us + 6*100ns; dim1: m=16e6, 2*16e6/2 = 16e6 -> 160us + 2*1us;
  // dim2: m=8e6, 2*8e6*3/4 = 12e6 -> 480us + 2*log2(4)*2us.
  const std::vector<Dimension> dims{{DimensionType::Ring, 4, 200e9, 100e-9},
                                    {DimensionType::FullyConnected, 2, 100e9, 1e-6},
                                    {DimensionType::Switch, 4, 25e9, 2e-6}};
  const Network net = testnet::multidim(dims);
  const double t0 = 480e-6 + 0.6e-6, t1 = 160e-6 + 2e-6, t2 = 480e-6 + 8e-6;
  CollectiveOptions pipelined, sequential;
  sequential.hierarchical_pipelined = false;
  const auto req = request(CollectiveOp::AllReduce, testnet::iota_nodes(32), 64e6);
  const auto p = plan_collective(net, req, "hierarchical", pipelined);
  const auto s = plan_collective(net, req, "hierarchical", sequential);
  expect_rel(p.time_s, std::max({t0, t1, t2}));
  expect_rel(s.time_s, t0 + t1 + t2);
  EXPECT_EQ(p.model, "pipelined");
  EXPECT_EQ(s.model, "sequential");
  EXPECT_EQ(plan_collective(net, req, "auto").algorithm, "hierarchical");

  // AllGather of a 64 MB output, dims descending from 2 MB per NPU:
  // dim2: 2e6*3 = 6e6 -> 240us + 2*2us; dim1: 8e6*1 -> 80us + 1us; dim0: 16e6*3 = 48e6 -> 240us + 3*100ns.
  const auto ag = request(CollectiveOp::AllGather, testnet::iota_nodes(32), 64e6);
  expect_rel(plan_collective(net, ag, "hierarchical", pipelined).time_s, 244e-6);
  expect_rel(plan_collective(net, ag, "hierarchical", sequential).time_s, 244e-6 + 81e-6 + 240.3e-6);

  // A sub-grid (dims 1 and 2 only: the NPUs with coordinate 0 in dim 0) skips dim 0.
  std::vector<VertexId> sub;
  for (VertexId v = 0; v < 32; v += 4) sub.push_back(v);
  const auto sp =
      plan_collective(net, request(CollectiveOp::AllReduce, sub, 64e6), "hierarchical", sequential);
  // dim1: 2*64e6/2 = 64e6 -> 640us + 2us; dim2: m = 32e6 -> 48e6 -> 1920us + 8us.
  expect_rel(sp.time_s, 642e-6 + 1928e-6);

  // Not a sub-grid: hierarchical refuses, auto falls back to a ring.
  EXPECT_THROW(plan_collective(net, request(CollectiveOp::AllReduce, {0, 1, 5}), "hierarchical"), BadInput);
  EXPECT_EQ(plan_collective(net, request(CollectiveOp::AllReduce, {0, 1, 5}), "auto").algorithm, "ring");
  // Not a multidim network: two dimensions, the server fabric and the network, so with one GPU a
  // node nothing happens inside the servers and hierarchical is the ring among them.
  const Network ring4 = testnet::ring(4, kB, 0);
  const auto all4 = request(CollectiveOp::AllReduce, {0, 1, 2, 3});
  EXPECT_EQ(plan_collective(ring4, all4, "hierarchical").time_s, plan_collective(ring4, all4, "ring").time_s);
  EXPECT_EQ(plan_collective(ring4, all4, "hierarchical").algorithm, "hierarchical");
}

TEST(Hierarchical, FlowsUseDimensionLinks) {
  const std::vector<Dimension> dims{{DimensionType::Ring, 4, 200e9, 0},
                                    {DimensionType::FullyConnected, 3, 100e9, 0}};
  const Network net = testnet::multidim(dims);
  CollectiveOptions opt;
  opt.with_flows = true;
  opt.hierarchical_pipelined = false;
  const auto plan = plan_collective(net, request(CollectiveOp::AllReduce, testnet::iota_nodes(12), 12e6),
                                    "hierarchical", opt);
  // dim0: 3 lines x 4 ring flows; dim1: 4 lines x 6 direct flows.
  ASSERT_EQ(plan.flows.size(), 12u + 24u);
  double stage0 = 0, stage1 = 0;
  for (const Flow& f : plan.flows) {
    EXPECT_EQ(f.path.size(), 1u);
    (f.stage == 0 ? stage0 : stage1) += f.bytes;
  }
  expect_rel(stage0, 12 * (2 * 12e6 * 3 / 4));
  expect_rel(stage1, 12 * (2 * 3e6 * 2 / 3));
}

TEST(Tree, DoubleBinaryTreeOnSwitch) {
  // NCCL btree over 8: 0->4, 4->{2,6}, 2->{1,3}, 6->{5,7}; the mirrored tree has odd inner nodes.
  // Every node but 0 and 7 has 4 tree edges in total, each moving S/2 each way: uplink load 2S.
  const Network net = testnet::star(8, kB, 0);
  const auto plan = plan_collective(net, request(CollectiveOp::AllReduce, testnet::iota_nodes(8)), "tree");
  expect_rel(plan.time_s, 2 * kS / kB);
  EXPECT_EQ(binary_tree_height(8), 3u);
  EXPECT_EQ(binary_tree_height(2), 1u);
  EXPECT_EQ(binary_tree_height(1), 0u);
  // With latency the pipeline picks its chunk count: brute force over c.
  const Network lat = testnet::star(8, kB, kAlpha);
  const double T = 2 * kS / kB, alpha = 2 * kAlpha;  // two links per hop
  const double d = 2 * 3 - 1;
  double best = 1e300;
  for (int c = 1; c < 100000; ++c) best = std::min(best, (d + c) * (T / c + alpha));
  expect_rel(plan_collective(lat, request(CollectiveOp::AllReduce, testnet::iota_nodes(8)), "tree").time_s,
             best);
  EXPECT_THROW(plan_collective(net, request(CollectiveOp::AllGather, testnet::iota_nodes(8)), "tree"),
               BadInput);
}

TEST(HalvingDoubling, PowerOfTwoMatchesRabenseifner) {
  for (std::uint32_t p : {2u, 4u, 16u}) {
    const Network net = testnet::star(p, kB, kAlpha);
    const auto plan =
        plan_collective(net, request(CollectiveOp::AllReduce, testnet::iota_nodes(p)), "halving_doubling");
    expect_rel(plan.time_s, 2.0 * (p - 1) / p * kS / kB + 2 * std::log2(p) * 2 * kAlpha);
  }
  // p = 6: fold 2 extra ranks (S each way), halving/doubling over 4, unfold.
  const Network net = testnet::star(6, kB, 0);
  const auto plan =
      plan_collective(net, request(CollectiveOp::AllReduce, testnet::iota_nodes(6)), "halving_doubling");
  expect_rel(plan.time_s, 2 * kS / kB + 2.0 * 3 / 4 * kS / kB);
}

TEST(Direct, AllToAllAndPairwise) {
  const std::uint32_t p = 8;
  const Network net = testnet::star(p, kB, kAlpha);
  const auto d = plan_collective(net, request(CollectiveOp::AllToAll, testnet::iota_nodes(p)), "direct");
  expect_rel(d.time_s, (p - 1.0) / p * kS / kB + 2 * kAlpha);
  const auto pw = plan_collective(net, request(CollectiveOp::AllToAll, testnet::iota_nodes(p)), "pairwise");
  expect_rel(pw.time_s, (p - 1.0) * (kS / p / kB + 2 * kAlpha));
  // On a complete graph direct AllToAll uses every link once: S/p / B.
  const Network k = testnet::complete(p, kB, 0);
  expect_rel(plan_collective(k, request(CollectiveOp::AllToAll, testnet::iota_nodes(p)), "direct").time_s,
             kS / p / kB);
}

TEST(TwoLevel, IntraNodePartAddsOrOverlaps) {
  const std::uint32_t p = 4, g = 8;
  const double intra = 300e9;
  const Network net = testnet::ring(p, kB, 0, g, intra);
  auto req = request(CollectiveOp::AllReduce, testnet::iota_nodes(p));
  req.gpus_per_node = g;
  CollectiveOptions seq;
  seq.hierarchical_pipelined = false;
  // NCCL's ring runs through all n = p g GPUs: each node's links carry 2(n-1)/n of the buffer
  // (not the hierarchical 2(p-1)/p) and each GPU's fabric the whole ring's 2(n-1)/n.
  const double n = p * g;
  const double network = 2.0 * (n - 1) / n * kS / kB;
  const double inside = 2.0 * (n - 1) / n * kS / intra;
  const auto s = plan_collective(net, req, "ring", seq);
  expect_rel(s.time_s, network + inside);
  expect_rel(s.intra_node_time_s, inside);
  const auto pl = plan_collective(net, req, "ring");
  expect_rel(pl.time_s, std::max(network, inside));
  // No intra-node bandwidth: bad input.
  const Network bare = testnet::ring(p, kB, 0, g, 0);
  EXPECT_THROW(plan_collective(bare, req, "ring"), BadInput);
}

// Bus bandwidth of the flat ring over two 8-GPU servers: min(fabric, 8 x NIC) after the link
// classes' efficiencies, as nccl-tests reports on DGX A100 (192 GB/s with 8 x 200 Gb/s HDR at 96 %).
TEST(TwoLevel, RingBusBandwidthIsTheSlowerOfFabricAndNics) {
  for (const double nic_eff : {0.96, 0.5}) {
    topology::SwitchSpec spec;
    spec.servers = 2;
    spec.degree = 8;
    spec.link_bandwidth_Bps = 25e9;
    spec.server.gpus = 8;
    spec.server.intra_bandwidth_Bps = 300e9;
    spec.server.intra_efficiency = 230.0 / 300.0;
    spec.server.link_efficiency = nic_eff;
    const Network net = topology::build_switch(spec);
    auto req = request(CollectiveOp::AllReduce, {0, 1}, 8.0 * (1 << 30));
    req.gpus_per_node = 8;
    const auto plan = plan_collective(net, req, "ring");
    const double busbw = req.bytes / plan.time_s * 2.0 * 15 / 16;
    expect_rel(busbw, std::min(230e9, 8 * 25e9 * nic_eff));
  }
}

// The fabric's NCCL latency model: a fixed part and one step per ring step (2(g-1) for AllReduce).
TEST(TwoLevel, IntraNodeLatencyPerCollectiveAndPerStep) {
  topology::SwitchSpec spec;
  spec.servers = 2;
  spec.link_bandwidth_Bps = 1e15;  // the network part is negligible
  spec.server.gpus = 4;
  spec.server.intra_bandwidth_Bps = 100e9;
  spec.server.intra_efficiency = 0.5;
  spec.server.intra_latency_s = 8e-6;
  spec.server.intra_step_latency_s = 3e-6;
  const Network net = topology::build_switch(spec);
  auto req = request(CollectiveOp::AllGather, {0, 1}, 1e9);
  req.gpus_per_node = 4;
  // Not a ring: the hierarchical two levels, 4 GPUs inside; AllGather: 3 ring steps and 3/4 of
  // the buffer at 50 GB/s, longer than the network part, which it overlaps.
  const auto plan = plan_collective(net, req, "halving_doubling");
  expect_rel(plan.time_s, 8e-6 + 3 * 3e-6 + 0.75e9 / 50e9);
  // NCCL's ring through the 8 GPUs: the fabric carries 7/8 of the buffer, but only a node's own
  // 3 steps' latency is charged (NCCL's tuner avoids O(n) step latencies with LL128 or trees).
  expect_rel(plan_collective(net, req, "ring").time_s, 8e-6 + 3 * 3e-6 + 7.0 / 8 * 1e9 / 50e9);
}

// Concurrent instances on the same nodes share their links: the network part's bandwidth term
// scales with them, the latency does not.
TEST(TwoLevel, InstancesPerNodeShareTheNetwork) {
  const Network net = testnet::ring(4, kB, kAlpha);
  auto req = request(CollectiveOp::AllReduce, testnet::iota_nodes(4));
  const auto one = plan_collective(net, req, "ring");
  req.instances_per_node = 8;
  const auto eight = plan_collective(net, req, "ring");
  expect_rel(eight.time_s - eight.latency_s, 8 * (one.time_s - one.latency_s));
  expect_rel(eight.latency_s, one.latency_s);
}

TEST(BadInput, ZeroBytesUnknownAlgorithmUnreachable) {
  const Network net = testnet::ring(4, kB, 0);
  EXPECT_THROW(plan_collective(net, request(CollectiveOp::AllReduce, {0, 1}, 0), "ring"), BadInput);
  EXPECT_THROW(plan_collective(net, request(CollectiveOp::AllReduce, {0, 1}), "bogus"), BadInput);
  EXPECT_THROW(plan_collective(net, request(CollectiveOp::AllReduce, {0, 9}), "ring"), BadInput);
  EXPECT_THROW(plan_collective(net, request(CollectiveOp::AllReduce, {0, 0}), "ring"), BadInput);
  NetworkBuilder b(3);
  b.add_link(0, 1, kB);
  const Network split = std::move(b).build();
  EXPECT_THROW(plan_collective(split, request(CollectiveOp::AllReduce, {0, 1, 2}), "ring"), BadInput);
  auto bc = request(CollectiveOp::Broadcast, {0, 1});
  bc.root = 3;
  EXPECT_THROW(plan_collective(net, bc, "ring"), BadInput);
}

TEST(RingChain, BroadcastPipelinesOverTheRing) {
  const std::uint32_t p = 5;
  const Network net = testnet::ring(p, kB, 0);
  auto req = request(CollectiveOp::Broadcast, testnet::iota_nodes(p));
  req.root = 2;
  expect_rel(plan_collective(net, req, "ring").time_s, kS / kB);  // alpha = 0: infinitely pipelined
  req.op = CollectiveOp::Reduce;
  expect_rel(plan_collective(net, req, "ring").time_s, kS / kB);
}

}  // namespace
}  // namespace toposweep

namespace toposweep {
namespace {

TEST(Ring, ParallelLinksShareAHop) {
  // Two parallel links 0 <-> 1 (10 and 30 GB/s): a 2-member ring AllGather moves S/2 over 40 GB/s.
  NetworkBuilder b(2);
  b.add_link(0, 1, 10e9);
  b.add_link(0, 1, 30e9);
  const Network net = std::move(b).build();
  CollectiveRequest r;
  r.op = CollectiveOp::AllGather;
  r.nodes = {0, 1};
  r.bytes = 1e9;
  CollectiveOptions opt;
  opt.with_flows = true;
  const auto plan = plan_collective(net, r, "ring", opt);
  EXPECT_NEAR(plan.time_s, 0.5e9 / 40e9, 1e-15);
  EXPECT_EQ(plan.flows.size(), 4u);  // two hops, two links each
}

}  // namespace
}  // namespace toposweep
