// Twins (collective/memo.hpp): networks equal up to a power-of-two factor on every link's
// bandwidth and another on every link's latency share ring sets, hop distances and path sums;
// networks with the same arcs share hop distances whatever their speeds. What a twin reads from
// the shared store equals what it computes from scratch, bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>

#include "test_networks.hpp"
#include "toposweep/collective/memo.hpp"
#include "toposweep/collective/plan.hpp"

namespace toposweep {
namespace {

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

struct Stride {
  std::uint32_t s;
  double bandwidth_Bps, latency_s;
};

// A circulant whose strides have their own bandwidths and latencies (so the ring search weighs
// links of different speeds and, on bandwidth ties, different latencies), every bandwidth times
// `bw_scale` and every latency times `lat_scale`.
Network circulant(std::uint32_t n, const std::vector<Stride>& strides, double bw_scale, double lat_scale) {
  NetworkBuilder b(n);
  for (const Stride& st : strides) {
    for (std::uint32_t i = 0; i < n; ++i)
      b.add_link(i, (i + st.s) % n, st.bandwidth_Bps * bw_scale, st.latency_s * lat_scale);
    b.info().strides.push_back(st.s);
  }
  b.info().kind = "topoopt";
  b.info().degree = static_cast<std::uint32_t>(2 * strides.size());
  return std::move(b).build();
}

// Blocks, strided sets and random subsets (sub-groups no stride serves, so multiring searches).
std::vector<std::vector<VertexId>> groups_of(std::uint32_t n, std::mt19937& rng) {
  std::vector<std::vector<VertexId>> out;
  for (std::uint32_t size : {2u, 3u, n / 2, n}) {
    std::vector<VertexId> g(size);
    for (std::uint32_t i = 0; i < size; ++i) g[i] = i;
    out.push_back(g);
  }
  for (int k = 0; k < 4; ++k) {
    std::vector<VertexId> all(n);
    for (VertexId v = 0; v < n; ++v) all[v] = v;
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(2 + rng() % (n - 2));
    out.push_back(all);
  }
  return out;
}

void expect_same_plan(const CollectivePlan& fresh, const CollectivePlan& shared) {
  EXPECT_EQ(fresh.algorithm, shared.algorithm);
  EXPECT_TRUE(same_bits(fresh.time_s, shared.time_s)) << fresh.time_s << " vs " << shared.time_s;
  EXPECT_TRUE(same_bits(fresh.latency_s, shared.latency_s));
  EXPECT_TRUE(same_bits(fresh.intra_node_time_s, shared.intra_node_time_s));
  EXPECT_EQ(fresh.stages, shared.stages);
  ASSERT_EQ(fresh.flows.size(), shared.flows.size());
  for (std::size_t i = 0; i < fresh.flows.size(); ++i) {
    EXPECT_EQ(fresh.flows[i].path, shared.flows[i].path);
    EXPECT_TRUE(same_bits(fresh.flows[i].bytes, shared.flows[i].bytes));
  }
}

const std::vector<std::pair<std::uint32_t, std::vector<Stride>>>& circulants() {
  static const std::vector<std::pair<std::uint32_t, std::vector<Stride>>> c{
      {16, {{1, 25e9, 7e-7}, {3, 10e9, 1.3e-6}, {5, 12.5e9, 3e-7}}},
      {24, {{1, 12.5e9, 1e-6}, {5, 12.5e9, 2.5e-6}}},  // equal bandwidths: latencies break ties
      {30, {{1, 3e9, 1e-6}, {7, 40e9, 1e-6}, {11, 9e9, 1e-6}}}};
  return c;
}

const std::vector<TwinFactors>& scales() {
  static const std::vector<TwinFactors> s{{1, 2}, {2, 0.5}, {0.25, 4}, {8, 1}, {1, 1}};
  return s;
}

TEST(Twins, LatencyAndBandwidthTwinsPickTheSameRingsAndPlan) {
  std::mt19937 rng(5);
  int compared = 0;
  for (const auto& [n, strides] : circulants()) {
    const Network base = circulant(n, strides, 1, 1);
    for (const TwinFactors& f : scales()) {
      SCOPED_TRACE(std::to_string(n) + " bw x" + std::to_string(f.bandwidth) + " lat x" +
                   std::to_string(f.latency));
      const Network twin = circulant(n, strides, f.bandwidth, f.latency);
      const auto found = power_of_two_twin_factors(base, twin);
      ASSERT_TRUE(found);
      EXPECT_EQ(found->bandwidth, f.bandwidth);
      EXPECT_EQ(found->latency, f.latency);
      CollectiveMemo base_memo(base);
      CollectiveMemo shared(twin, base_memo.shared());  // learns from base's searches
      CollectiveOptions options;
      options.with_flows = true;
      for (const auto& members : groups_of(n, rng)) {
        RouteCache routes(twin);
        const MultiRing fresh = multiring(twin, routes, members);
        const MultiRing& learned = base_memo.multiring(members);
        EXPECT_EQ(fresh.rings, learned.rings);
        EXPECT_EQ(fresh.shares, learned.shares);
        EXPECT_EQ(fresh.strides, learned.strides);
        EXPECT_EQ(&shared.multiring(members), &learned);  // shared, not searched again
        for (CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::AllGather}) {
          CollectiveRequest r;
          r.op = op;
          r.nodes = members;
          r.bytes = 3.5e8;
          expect_same_plan(plan_collective(twin, r, "multiring", options),
                           plan_collective(r, "multiring", options, shared));
        }
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 3 * 5 * 8);  // networks x scales x groups
}

TEST(Twins, LatencyAndBandwidthTwinsSharePathSumsAndDistances) {
  std::vector<std::pair<Network, Network>> twins;
  twins.emplace_back(circulant(16, circulants()[0].second, 1, 1),
                     circulant(16, circulants()[0].second, 4, 0.5));
  twins.emplace_back(circulant(24, circulants()[1].second, 1, 1),
                     circulant(24, circulants()[1].second, 1, 8));
  twins.emplace_back(testnet::fat_tree(4, 12.5e9, 2e-6), testnet::fat_tree(4, 25e9, 1e-6));
  twins.emplace_back(testnet::fat_tree(4, 12.5e9, 2e-6), testnet::fat_tree(4, 12.5e9, 4e-6));
  for (auto& [base, twin] : twins) {
    ASSERT_TRUE(power_of_two_twin_factors(base, twin));
    CollectiveMemo base_memo(base);
    CollectiveMemo shared(twin, base_memo.shared());
    RouteCache fresh_base(base), fresh_twin(twin);
    auto expect_same = [](const std::optional<PathSums>& got, const std::optional<PathSums>& want) {
      ASSERT_TRUE(want && got);
      EXPECT_EQ(got->hops, want->hops);
      EXPECT_TRUE(same_bits(got->latency_s, want->latency_s)) << got->latency_s << " vs " << want->latency_s;
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
      }
  }
}

TEST(Twins, OnlyPowerOfTwoFactorsOnEveryLinkMakeTwins) {
  const std::vector<Stride> strides{{1, 25e9, 1e-6}, {3, 10e9, 2e-6}};
  const Network base = circulant(16, strides, 1, 1);
  EXPECT_TRUE(power_of_two_twin_factors(base, circulant(16, strides, 1, 0.25)));
  EXPECT_FALSE(power_of_two_twin_factors(base, circulant(16, strides, 1, 3)));
  EXPECT_FALSE(power_of_two_twin_factors(base, circulant(16, strides, 1, 1.5)));
  EXPECT_FALSE(power_of_two_twin_factors(base, circulant(16, strides, 3, 2)));
  EXPECT_FALSE(power_of_two_twin_factors(
      base, circulant(16, {{1, 25e9, 2e-6}, {3, 10e9, 2e-6}}, 1, 1)));  // one stride's latency only
  EXPECT_FALSE(power_of_two_twin_factors(base, circulant(16, {{1, 25e9, 1e-6}, {5, 10e9, 2e-6}}, 1, 1)));
  // Latency factor 1: the bandwidth twins of before.
  EXPECT_TRUE(bandwidth_power_of_two_twins(base, circulant(16, strides, 2, 1)));
  EXPECT_FALSE(bandwidth_power_of_two_twins(base, circulant(16, strides, 2, 2)));
  // Links without latency stay without it.
  const std::vector<Stride> no_latency{{1, 25e9, 0}, {3, 10e9, 0}};
  const auto f =
      power_of_two_twin_factors(circulant(16, no_latency, 1, 1), circulant(16, no_latency, 0.5, 1));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->bandwidth, 0.5);
  EXPECT_EQ(f->latency, 1);
  EXPECT_FALSE(power_of_two_twin_factors(circulant(16, no_latency, 1, 1), base));
  EXPECT_FALSE(power_of_two_twin_factors(base, circulant(16, no_latency, 1, 1)));
}

TEST(Twins, NetworksWithTheSameArcsShareHopDistancesWhateverTheirSpeeds) {
  const std::vector<Stride> strides{{1, 25e9, 1e-6}, {3, 10e9, 2e-6}};
  const Network base = circulant(16, strides, 1, 1);
  const Network other_speeds = circulant(16, strides, 3, 1.7);  // not a twin, the same arcs
  EXPECT_FALSE(power_of_two_twin_factors(base, other_speeds));
  EXPECT_TRUE(same_arc_structure(base, other_speeds));
  EXPECT_EQ(arc_structure_hash(base), arc_structure_hash(other_speeds));
  const Network other_arcs = circulant(16, {{1, 25e9, 1e-6}, {5, 10e9, 2e-6}}, 1, 1);
  EXPECT_FALSE(same_arc_structure(base, other_arcs));
  EXPECT_NE(arc_structure_hash(base), arc_structure_hash(other_arcs));
  EXPECT_FALSE(same_arc_structure(base, circulant(18, strides, 1, 1)));

  const auto distances = std::make_shared<HopDistances>();
  RouteCache learned(base, distances);
  RouteCache shared(other_speeds, distances);
  RouteCache fresh(other_speeds);
  for (VertexId d = 0; d < base.vertex_count(); ++d) {
    if (d % 2) learned.distances_to(d);  // half learned on the other network first
    EXPECT_EQ(shared.distances_to(d), fresh.distances_to(d));
    EXPECT_EQ(&shared.distances_to(d), &learned.distances_to(d));
  }
}

}  // namespace
}  // namespace toposweep
