#include "toposweep/opt/matching.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>
#include <set>

namespace toposweep::opt {
namespace {

// Exhaustive: the best matching among vertices >= v that are still free.
double brute_force_best(std::uint32_t n, const std::map<std::pair<std::uint32_t, std::uint32_t>, double>& w) {
  std::vector<bool> used(n, false);
  std::function<double(std::uint32_t)> best = [&](std::uint32_t v) -> double {
    while (v < n && used[v]) ++v;
    if (v >= n) return 0.0;
    used[v] = true;
    double b = best(v + 1);  // v stays unmatched
    for (std::uint32_t u = v + 1; u < n; ++u) {
      auto it = w.find({v, u});
      if (used[u] || it == w.end()) continue;
      used[u] = true;
      b = std::max(b, it->second + best(v + 1));
      used[u] = false;
    }
    used[v] = false;
    return b;
  };
  return best(0);
}

TEST(Matching, HandWorkedPathPrefersTheTwoOuterEdges) {
  // Path 0-1-2-3 with weights 3, 4, 3: {01, 23} = 6 beats {12} = 4.
  const auto m = maximum_weight_matching(4, {{0, 1, 3}, {1, 2, 4}, {2, 3, 3}});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0], std::make_pair(0u, 1u));
  EXPECT_EQ(m[1], std::make_pair(2u, 3u));
}

TEST(Matching, OptimalAgainstBruteForceOnRandomSmallGraphs) {
  std::mt19937_64 rng(20230417);
  for (int trial = 0; trial < 300; ++trial) {
    const std::uint32_t n = 2 + rng() % 9;  // up to 10 vertices: odd cycles force blossoms
    std::map<std::pair<std::uint32_t, std::uint32_t>, double> w;
    std::vector<WeightedEdge> edges;
    std::uniform_real_distribution<double> weight(1e6, 1e9);  // bytes-like magnitudes
    for (std::uint32_t u = 0; u < n; ++u)
      for (std::uint32_t v = u + 1; v < n; ++v)
        if (rng() % 100 < 55) {
          const double x = trial % 2 ? std::floor(weight(rng) / 1e8) * 1e8 : weight(rng);  // ties too
          w[{u, v}] = x;
          edges.push_back({u, v, x});
        }
    const auto m = maximum_weight_matching(n, edges);
    std::set<std::uint32_t> seen;
    double total = 0;
    for (const auto& [u, v] : m) {
      EXPECT_TRUE(seen.insert(u).second);
      EXPECT_TRUE(seen.insert(v).second);
      ASSERT_TRUE(w.count({u, v}));
      total += w[{u, v}];
    }
    const double best = brute_force_best(n, w);
    EXPECT_NEAR(total, best, best * 1e-12) << "trial " << trial << " n " << n;
  }
}

}  // namespace
}  // namespace toposweep::opt
