// FlowNetwork against a plain reference on random cases: the reference recomputes the max-min
// fair rates of every active flow from scratch at every event (textbook progressive filling:
// raise all unfrozen flows together, freeze the flows of the first arc to saturate), with no
// components, heaps, caches or shortcuts. Finish times must agree to rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "toposweep/sim/flow_network.hpp"

namespace toposweep::sim {
namespace {

struct RefFlow {
  std::vector<ArcId> path;
  double weight = 1;
  double remaining = 0;
  double start = 0;
  bool started = false, done = false;
  double finish = -1;
};

// Max-min fair rates of the started, unfinished flows.
std::vector<double> reference_rates(const std::vector<double>& cap, const std::vector<RefFlow>& flows) {
  std::vector<double> rate(flows.size(), 0.0);
  std::vector<bool> frozen(flows.size(), true);
  for (std::size_t i = 0; i < flows.size(); ++i) frozen[i] = !(flows[i].started && !flows[i].done);
  double level = 0;  // rate per unit of weight of every unfrozen flow
  // Arc a's rate taken by frozen flows and the weight of the unfrozen flows crossing it.
  auto arc_load = [&](std::size_t a, double& used, double& w) {
    used = 0;
    w = 0;
    for (std::size_t i = 0; i < flows.size(); ++i) {
      if (!(flows[i].started && !flows[i].done)) continue;
      for (ArcId b : flows[i].path)
        if (b == a) {
          if (frozen[i])
            used += rate[i];
          else
            w += flows[i].weight;
        }
    }
  };
  for (;;) {
    // The smallest level increase that saturates an arc.
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t a = 0; a < cap.size(); ++a) {
      double used = 0, w = 0;
      arc_load(a, used, w);
      if (w > 0) best = std::min(best, (cap[a] - used) / w);
    }
    if (best == std::numeric_limits<double>::infinity()) break;
    level = best;
    // Freeze the unfrozen flows on every arc saturated at this level.
    std::vector<bool> saturated(cap.size(), false);
    for (std::size_t a = 0; a < cap.size(); ++a) {
      double used = 0, w = 0;
      arc_load(a, used, w);
      if (w > 0 && used + level * w >= cap[a] * (1 - 1e-12)) saturated[a] = true;
    }
    for (std::size_t i = 0; i < flows.size(); ++i) {
      if (frozen[i]) continue;
      for (ArcId b : flows[i].path)
        if (saturated[b]) {
          frozen[i] = true;
          rate[i] = level * flows[i].weight;
          break;
        }
    }
  }
  return rate;
}

// Plays the flows (start times given) to the end and records each flow's finish time.
void play_reference(const std::vector<double>& cap, std::vector<RefFlow>& flows) {
  double now = 0;
  for (;;) {
    for (RefFlow& f : flows)
      if (!f.started && f.start <= now) f.started = true;
    const std::vector<double> rate = reference_rates(cap, flows);
    double next = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < flows.size(); ++i) {
      if (!flows[i].started) next = std::min(next, flows[i].start);
      if (flows[i].started && !flows[i].done) next = std::min(next, now + flows[i].remaining / rate[i]);
    }
    if (next == std::numeric_limits<double>::infinity()) return;
    for (std::size_t i = 0; i < flows.size(); ++i) {
      if (!(flows[i].started && !flows[i].done)) continue;
      flows[i].remaining -= rate[i] * (next - now);
      if (flows[i].remaining <= 1e-9 * (1 + rate[i] * next)) {
        flows[i].done = true;
        flows[i].finish = next;
      }
    }
    now = next;
  }
}

// Plays the same flows on FlowNetwork; returns finish times by flow index (the tag).
struct PlayCounts {
  std::uint64_t recomputations = 0, rate_assignments = 0, searches_skipped = 0;
};

std::vector<double> play_network(const std::vector<double>& cap, const std::vector<RefFlow>& flows,
                                 bool record, PlayCounts* counts = nullptr, bool resumable = true) {
  FlowNetwork net(cap);
  net.record_link_loads(record);
  net.set_resumable(resumable);
  std::vector<std::size_t> order(flows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return flows[a].start < flows[b].start; });
  std::vector<double> finish(flows.size(), -1);
  std::vector<FinishedFlow> done;
  std::size_t next = 0;
  for (;;) {
    while (next < order.size() && flows[order[next]].start <= net.now()) {
      const RefFlow& f = flows[order[next]];
      net.start(f.path, f.remaining, order[next], f.weight);
      ++next;
    }
    const double tf = net.next_finish_time();
    const double ts = next < order.size() ? flows[order[next]].start : FlowNetwork::kNever;
    const double t = std::min(tf, ts);
    if (t == FlowNetwork::kNever) break;
    done.clear();
    net.advance_to(t, done);
    for (const FinishedFlow& d : done) finish[d.tag] = net.now();
  }
  if (counts) *counts = {net.recomputations(), net.rate_assignments(), net.searches_skipped()};
  return finish;
}

// A random case: `arcs` arcs of capacities 1..4 (x 10), flows on random arc sets (paths of
// 1..5 distinct arcs), integer weights 1..3, sizes 1..100, start times on a coarse grid so that
// several flows start together.
std::vector<RefFlow> random_case(std::mt19937_64& rng, std::size_t arcs, std::size_t count,
                                 std::vector<double>& cap) {
  cap.resize(arcs);
  for (double& c : cap) c = 10.0 * static_cast<double>(1 + rng() % 4);
  std::vector<RefFlow> flows(count);
  for (RefFlow& f : flows) {
    const std::size_t hops = 1 + rng() % 5;
    while (f.path.size() < hops) {
      const auto a = static_cast<ArcId>(rng() % arcs);
      if (std::find(f.path.begin(), f.path.end(), a) == f.path.end()) f.path.push_back(a);
    }
    f.weight = static_cast<double>(1 + rng() % 3);
    f.remaining = static_cast<double>(1 + rng() % 100);
    f.start = 0.5 * static_cast<double>(rng() % 8);
  }
  return flows;
}

TEST(FlowNetworkRandom, FinishTimesMatchAFromScratchMaxMinReference) {
  std::mt19937_64 rng(20261122);
  for (int c = 0; c < 60; ++c) {
    std::vector<double> cap;
    // Small networks with many flows (one big component: the search shortcuts run), and large
    // sparse ones (many small components).
    const bool dense = c % 2 == 0;
    std::vector<RefFlow> flows = random_case(rng, dense ? 12 : 200, dense ? 80 : 60, cap);
    const std::vector<double> got = play_network(cap, flows, false);
    play_reference(cap, flows);
    for (std::size_t i = 0; i < flows.size(); ++i)
      ASSERT_NEAR(got[i], flows[i].finish, 1e-9 * flows[i].finish) << "case " << c << " flow " << i;
  }
}

TEST(FlowNetworkRandom, RecordingLinkLoadsChangesNoResultBit) {
  // Recording link loads turns off a shortcut of the component search; the rates, and hence
  // every finish time, must be the same to the last bit.
  std::mt19937_64 rng(7);
  for (int c = 0; c < 40; ++c) {
    std::vector<double> cap;
    const std::vector<RefFlow> flows = random_case(rng, 10 + c, 120, cap);
    PlayCounts plain_counts, recorded_counts;
    const std::vector<double> plain = play_network(cap, flows, false, &plain_counts);
    const std::vector<double> recorded = play_network(cap, flows, true, &recorded_counts);
    ASSERT_EQ(plain, recorded) << "case " << c;
    EXPECT_EQ(plain_counts.recomputations, recorded_counts.recomputations);
  }
}

TEST(FlowNetworkRandom, IndependentComponentsDoNotDisturbEachOther) {
  // Two copies of one random case on disjoint arc ranges: every flow of each copy finishes
  // when it does alone (components are independent, and a recomputation of one leaves the
  // other's rates and events alone). Flow ids are reused in a different order, which may
  // reorder simultaneous finishes and so round differently: compare to 1e-12.
  std::mt19937_64 rng(99);
  for (int c = 0; c < 20; ++c) {
    std::vector<double> cap;
    const std::vector<RefFlow> one = random_case(rng, 8, 40, cap);
    std::vector<double> cap2 = cap;
    cap2.insert(cap2.end(), cap.begin(), cap.end());
    std::vector<RefFlow> two = one;
    for (RefFlow f : one) {
      for (ArcId& a : f.path) a += static_cast<ArcId>(cap.size());
      two.push_back(f);
    }
    const std::vector<double> alone = play_network(cap, one, false);
    const std::vector<double> both = play_network(cap2, two, false);
    for (std::size_t i = 0; i < one.size(); ++i) {
      EXPECT_NEAR(both[i], alone[i], 1e-12 * alone[i]) << "case " << c << " flow " << i;
      EXPECT_NEAR(both[one.size() + i], alone[i], 1e-12 * alone[i]) << "case " << c << " flow " << i;
    }
  }
}

TEST(FlowNetworkRandom, ResumedFillingsGiveTheSameBitsAsFreshOnes) {
  // Big whole-network components (thousands of flows on a few dozen arcs) whose flows mostly
  // finish one after another: the network resumes its last filling at a checkpoint instead of
  // filling afresh. Every finish time must equal, to the last bit, the one of a network that
  // always fills afresh; and the resumed runs must have done far fewer rate assignments (the
  // resumption really ran).
  std::mt19937_64 rng(424242);
  for (int c = 0; c < 6; ++c) {
    std::vector<double> cap;
    std::vector<RefFlow> flows = random_case(rng, 30 + 5 * c, 1500 + 300 * c, cap);
    // Most flows start together; a few later (a start forces a fresh filling).
    for (std::size_t i = 0; i < flows.size(); ++i) flows[i].start = i % 50 == 0 ? flows[i].start : 0.0;
    PlayCounts fresh_counts, resumed_counts;
    const std::vector<double> fresh = play_network(cap, flows, false, &fresh_counts, false);
    const std::vector<double> resumed = play_network(cap, flows, false, &resumed_counts, true);
    ASSERT_EQ(fresh, resumed) << "case " << c;
    EXPECT_EQ(fresh_counts.recomputations, resumed_counts.recomputations);
    EXPECT_LT(4 * resumed_counts.rate_assignments, 3 * fresh_counts.rate_assignments) << "case " << c;
  }
}

TEST(FlowNetworkRandom, ChainsThatFinishesSplitGiveTheSameBitsAsFreshFillings) {
  // Components shaped like chains: each flow crosses a private arc (its NIC) and 1..3
  // consecutive arcs of a line, so a flow finishing in the middle can cut its component in
  // two. A logged component skips the search for the part its finishes touched while its
  // spanning tree shows they cut nothing; when a finished flow held busy arcs of the tree, it
  // must search, find the cut and fill the parts apart. Either way every finish time must equal,
  // to the last bit, the one of a network that always searches and fills afresh.
  std::mt19937_64 rng(20261125);
  std::uint64_t skipped = 0;
  for (int c = 0; c < 8; ++c) {
    const std::size_t line = 60 + 20 * c, count = 200 + 40 * c;
    std::vector<double> cap(line + count);
    for (double& x : cap) x = 10.0 * static_cast<double>(1 + rng() % 4);
    std::vector<RefFlow> flows(count);
    for (std::size_t i = 0; i < count; ++i) {
      RefFlow& f = flows[i];
      f.path.push_back(static_cast<ArcId>(line + i));
      const std::size_t first = rng() % line, hops = 1 + rng() % 3;
      for (std::size_t h = first; h < std::min(line, first + hops); ++h)
        f.path.push_back(static_cast<ArcId>(h));
      f.weight = static_cast<double>(1 + rng() % 2);
      f.remaining = static_cast<double>(1 + rng() % 100);
      f.start = i % 40 == 0 ? 0.5 * static_cast<double>(rng() % 8) : 0.0;
    }
    PlayCounts fresh_counts, resumed_counts;
    const std::vector<double> fresh = play_network(cap, flows, false, &fresh_counts, false);
    const std::vector<double> resumed = play_network(cap, flows, false, &resumed_counts, true);
    ASSERT_EQ(fresh, resumed) << "case " << c;
    EXPECT_EQ(fresh_counts.recomputations, resumed_counts.recomputations);
    EXPECT_EQ(fresh_counts.searches_skipped, 0u);
    skipped += resumed_counts.searches_skipped;
  }
  EXPECT_GT(skipped, 0u);  // the spanning tree really spared searches
}

TEST(FlowNetworkRandom, NonIntegerWeightsFillAfreshAndStillAgree) {
  // Non-integer weights turn resumption off (unfrozen weights would not subtract exactly).
  std::mt19937_64 rng(5);
  std::vector<double> cap;
  std::vector<RefFlow> flows = random_case(rng, 30, 1500, cap);
  for (RefFlow& f : flows) {
    f.start = 0;
    f.weight *= 0.75;
  }
  PlayCounts fresh_counts, resumable_counts;
  const std::vector<double> fresh = play_network(cap, flows, false, &fresh_counts, false);
  const std::vector<double> resumable = play_network(cap, flows, false, &resumable_counts, true);
  ASSERT_EQ(fresh, resumable);
  EXPECT_EQ(fresh_counts.rate_assignments, resumable_counts.rate_assignments);
}

}  // namespace
}  // namespace toposweep::sim
