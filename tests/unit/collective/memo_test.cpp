// CollectiveMemo: planning through a memo that has seen other requests first gives the plan a
// fresh plan_collective gives, bit for bit, and a member group's ring search runs once.
#include "toposweep/collective/memo.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "test_networks.hpp"
#include "toposweep/collective/plan.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep {
namespace {

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

void expect_same_plan(const CollectivePlan& fresh, const CollectivePlan& memo, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(fresh.algorithm, memo.algorithm);
  EXPECT_TRUE(same_bits(fresh.time_s, memo.time_s)) << fresh.time_s << " vs " << memo.time_s;
  EXPECT_TRUE(same_bits(fresh.latency_s, memo.latency_s));
  EXPECT_TRUE(same_bits(fresh.intra_node_time_s, memo.intra_node_time_s));
  EXPECT_EQ(fresh.stages, memo.stages);
  ASSERT_EQ(fresh.flows.size(), memo.flows.size());
  for (std::size_t i = 0; i < fresh.flows.size(); ++i) {
    EXPECT_EQ(fresh.flows[i].path, memo.flows[i].path);
    EXPECT_TRUE(same_bits(fresh.flows[i].bytes, memo.flows[i].bytes));
    EXPECT_EQ(fresh.flows[i].stage, memo.flows[i].stage);
  }
}

// Member groups of `n` nodes: blocks, strided sets and random subsets (sub-groups no stride
// serves, so multiring searches its candidates), each used with several sizes and operations.
std::vector<std::vector<VertexId>> groups_of(std::uint32_t n, std::mt19937& rng) {
  std::vector<std::vector<VertexId>> out;
  for (std::uint32_t size : {2u, 3u, n / 2, n}) {
    std::vector<VertexId> g(size);
    for (std::uint32_t i = 0; i < size; ++i) g[i] = i;
    out.push_back(g);
  }
  std::vector<VertexId> strided;
  for (VertexId v = 1; v < n; v += 3) strided.push_back(v);
  out.push_back(strided);
  for (int k = 0; k < 3; ++k) {
    std::vector<VertexId> all(n);
    for (VertexId v = 0; v < n; ++v) all[v] = v;
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(2 + rng() % (n - 2));
    out.push_back(all);
  }
  return out;
}

TEST(CollectiveMemo, PlansEqualFreshPlansBitForBit) {
  std::mt19937 rng(7);
  struct Case {
    const char* name;
    Network net;
    std::vector<std::string> algorithms;
  };
  std::vector<Case> cases;
  int planned = 0;
  cases.push_back(
      {"circulant", testnet::circulant(16, {1, 3, 5}, 25e9, 1e-6), {"auto", "multiring", "ring"}});
  cases.push_back(
      {"fat-tree", testnet::fat_tree(4, 12.5e9, 2e-6), {"auto", "ring", "biring", "tree", "direct"}});
  cases.push_back(
      {"ring", testnet::ring(12, 10e9, 5e-7, 4, 300e9), {"ring", "halving_doubling", "pairwise"}});
  for (const Case& c : cases) {
    CollectiveMemo memo(c.net);
    std::vector<CollectiveRequest> requests;
    for (const auto& members : groups_of(c.net.compute_count(), rng))
      for (CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::AllToAll})
        for (double bytes : {1e6, 3.5e8})
          for (std::uint32_t gpus : {1u, c.net.gpus_per_node()}) {
            CollectiveRequest r;
            r.op = op;
            r.nodes = members;
            r.bytes = bytes;
            r.gpus_per_node = gpus;
            requests.push_back(r);
          }
    std::shuffle(requests.begin(), requests.end(), rng);  // the memo sees groups in any order
    CollectiveOptions options;
    options.with_flows = true;
    for (const auto& r : requests)
      for (const auto& algorithm : c.algorithms) {
        const std::string what = std::string(c.name) + " " + algorithm + " members " +
                                 std::to_string(r.nodes.size()) + " bytes " + std::to_string(r.bytes);
        CollectivePlan fresh;
        try {
          fresh = plan_collective(c.net, r, algorithm, options);
        } catch (const BadInput& e) {  // the algorithm does not apply: the memo says so too
          EXPECT_THROW(plan_collective(r, algorithm, options, memo), BadInput) << what;
          continue;
        }
        expect_same_plan(fresh, plan_collective(r, algorithm, options, memo), what);
        ++planned;
      }
  }
  EXPECT_GT(planned, 500);
}

TEST(CollectiveMemo, AnUnreachableMemberLeavesNoLoadBehind) {
  // Nodes 0 and 1 under switch A, 2 and 3 under switch B, A and B joined through two cores;
  // node 4 has no link. A ring over {0, 2, 4} loads one core's arcs for 0 -> 2 and then fails at
  // 2 -> 4; a ring over {0, 2} through the same memo must still pick its cores as a fresh plan
  // does (arcs left busy would steer 0 -> 2 onto the other core).
  NetworkBuilder b(5);
  const VertexId sw = b.add_switches(4);  // A, B, core 1, core 2
  for (VertexId v = 0; v < 4; ++v) b.add_link(v, sw + v / 2, 10e9, 1e-6);
  for (VertexId core : {sw + 2, sw + 3})
    for (VertexId edge : {sw, sw + 1}) b.add_link(edge, core, 10e9, 1e-6);
  b.info().kind = "switch";
  const Network net = std::move(b).build();
  CollectiveOptions options;
  options.with_flows = true;
  options.switch_routing = Routing::Spread;  // phases load arcs as they route
  CollectiveRequest failing;
  failing.nodes = {0, 2, 4};
  failing.bytes = 1e8;
  CollectiveRequest pair = failing;
  pair.nodes = {0, 2};
  const CollectivePlan fresh = plan_collective(net, pair, "ring", options);
  CollectiveMemo memo(net);
  EXPECT_THROW(plan_collective(failing, "ring", options, memo), BadInput);
  expect_same_plan(fresh, plan_collective(pair, "ring", options, memo), "after the failure");
}

TEST(CollectiveMemo, SearchesEachGroupOnce) {
  const Network net = testnet::circulant(16, {1, 3}, 25e9, 0);
  CollectiveMemo memo(net);
  const std::vector<VertexId> block{0, 1, 2, 3, 4, 5, 6, 7};  // no stride serves it: a search
  const MultiRing& first = memo.multiring(block);
  const MultiRing& again = memo.multiring(block);
  EXPECT_EQ(&first, &again);
  RouteCache routes(net);
  const MultiRing fresh = multiring(net, routes, block);
  EXPECT_EQ(first.rings, fresh.rings);
  EXPECT_EQ(first.shares, fresh.shares);
  EXPECT_EQ(first.strides, fresh.strides);
  EXPECT_EQ(first.routed, fresh.routed);
  EXPECT_NE(&memo.multiring({0, 2, 4, 6, 8, 10, 12, 14}), &first);
}

// A circulant whose strides have their own bandwidths (so the ring search weighs links of
// different speeds), every bandwidth times `scale`.
Network mixed_circulant(std::uint32_t n, std::vector<std::pair<std::uint32_t, double>> strides, double scale,
                        double lat) {
  for (auto& stride : strides) stride.second *= scale;
  return testnet::circulant(n, strides, lat);
}

TEST(CollectiveMemo, BandwidthTwinsPickTheSameRingsSoTheyShareThem) {
  std::mt19937 rng(11);
  int compared = 0;
  for (const auto& [n, strides] :
       std::vector<std::pair<std::uint32_t, std::vector<std::pair<std::uint32_t, double>>>>{
           {16, {{1, 25e9}, {3, 10e9}, {5, 12.5e9}}},
           {24, {{1, 12.5e9}, {5, 12.5e9}}},
           {30, {{1, 3e9}, {7, 40e9}, {11, 9e9}}}}) {
    const Network base = mixed_circulant(n, strides, 1, 7e-7);
    for (double scale : {2.0, 4.0, 0.5, 1024.0}) {
      const Network twin = mixed_circulant(n, strides, scale, 7e-7);
      ASSERT_TRUE(bandwidth_power_of_two_twins(base, twin)) << n << " x" << scale;
      CollectiveMemo base_memo(base);
      CollectiveMemo shared(twin, base_memo.shared());  // learns from base's searches
      CollectiveOptions options;
      options.with_flows = true;
      for (const auto& members : groups_of(n, rng)) {
        RouteCache routes(twin);
        const MultiRing fresh = multiring(twin, routes, members);
        const MultiRing& learned = base_memo.multiring(members);
        EXPECT_EQ(fresh.rings, learned.rings) << n << " x" << scale;
        EXPECT_EQ(fresh.shares, learned.shares) << n << " x" << scale;
        EXPECT_EQ(fresh.strides, learned.strides) << n << " x" << scale;
        EXPECT_EQ(&shared.multiring(members), &learned);  // shared, not searched again
        CollectiveRequest r;
        r.op = CollectiveOp::AllReduce;
        r.nodes = members;
        r.bytes = 3.5e8;
        expect_same_plan(plan_collective(twin, r, "multiring", options),
                         plan_collective(r, "multiring", options, shared), "shared ring sets");
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 3 * 4 * 8);  // networks x scales x groups
}

TEST(CollectiveMemo, BandwidthTwinsSharePathSumsAndDistances) {
  std::vector<std::pair<Network, Network>> twins;
  twins.emplace_back(mixed_circulant(16, {{1, 25e9}, {3, 10e9}, {5, 12.5e9}}, 1, 7e-7),
                     mixed_circulant(16, {{1, 25e9}, {3, 10e9}, {5, 12.5e9}}, 8, 7e-7));
  twins.emplace_back(testnet::fat_tree(4, 12.5e9, 2e-6), testnet::fat_tree(4, 25e9, 2e-6));
  for (auto& [base, twin] : twins) {
    ASSERT_TRUE(bandwidth_power_of_two_twins(base, twin));
    CollectiveMemo base_memo(base);
    CollectiveMemo shared(twin, base_memo.shared());
    RouteCache fresh_base(base), fresh_twin(twin);
    auto expect_same = [](const std::optional<PathSums>& got, const std::optional<PathSums>& want) {
      ASSERT_TRUE(want && got);
      EXPECT_EQ(got->hops, want->hops);
      EXPECT_TRUE(same_bits(got->latency_s, want->latency_s));
      EXPECT_TRUE(same_bits(got->narrowest_Bps, want->narrowest_Bps));
    };
    for (VertexId a = 0; a < base.compute_count(); ++a)
      for (VertexId b = 0; b < base.compute_count(); ++b) {
        SCOPED_TRACE(std::to_string(a) + " -> " + std::to_string(b));
        // Either network may learn a pair first; the other reads it.
        CollectiveMemo& first = (a + b) % 2 ? shared : base_memo;
        ASSERT_TRUE(first.path_sums(a, b).has_value());
        expect_same(shared.path_sums(a, b), fresh_twin.path_sums(a, b));
        expect_same(base_memo.path_sums(a, b), fresh_base.path_sums(a, b));
        EXPECT_EQ(&shared.routes().distances_to(b), &base_memo.routes().distances_to(b));
        EXPECT_EQ(shared.routes().distances_to(b), fresh_twin.distances_to(b));
      }
  }
}

TEST(CollectiveMemo, OnlyPowerOfTwoBandwidthMultiplesAreTwins) {
  const std::vector<std::pair<std::uint32_t, double>> strides{{1, 25e9}, {3, 10e9}};
  const Network base = mixed_circulant(16, strides, 1, 1e-6);
  EXPECT_TRUE(bandwidth_power_of_two_twins(base, mixed_circulant(16, strides, 1, 1e-6)));
  EXPECT_TRUE(bandwidth_power_of_two_twins(base, mixed_circulant(16, strides, 0.25, 1e-6)));
  EXPECT_FALSE(bandwidth_power_of_two_twins(base, mixed_circulant(16, strides, 3, 1e-6)));
  EXPECT_FALSE(bandwidth_power_of_two_twins(base, mixed_circulant(16, strides, 1.5, 1e-6)));
  EXPECT_FALSE(bandwidth_power_of_two_twins(base, mixed_circulant(16, strides, 2, 2e-6)));  // latency
  EXPECT_FALSE(bandwidth_power_of_two_twins(
      base, mixed_circulant(16, {{1, 50e9}, {3, 10e9}}, 1, 1e-6)));  // one stride only
  EXPECT_FALSE(bandwidth_power_of_two_twins(
      base, mixed_circulant(16, {{1, 25e9}, {5, 10e9}}, 1, 1e-6)));  // other links
  EXPECT_FALSE(bandwidth_power_of_two_twins(base, mixed_circulant(18, strides, 1, 1e-6)));
}

}  // namespace
}  // namespace toposweep
