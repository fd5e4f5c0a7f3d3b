#include "toposweep/sweep/generators.hpp"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <set>

#include "toposweep/util/error.hpp"

namespace toposweep::sweep {
namespace {

std::uint64_t binomial(std::uint64_t n, std::uint64_t k) {
  std::uint64_t r = 1;
  for (std::uint64_t i = 1; i <= k; ++i) r = r * (n - k + i) / i;
  return r;
}

TEST(Compositions, CountIsBinomialAndOrderIsLexicographic) {
  for (std::int64_t total = 1; total <= 12; ++total)
    for (std::int64_t parts = 1; parts <= 5; ++parts) {
      const auto c = compositions(total, parts);
      const std::uint64_t expected = total < parts ? 0 : binomial(total - 1, parts - 1);
      ASSERT_EQ(c.size(), expected) << total << " " << parts;
      for (std::size_t i = 0; i < c.size(); ++i) {
        EXPECT_EQ(std::accumulate(c[i].begin(), c[i].end(), std::int64_t{0}), total);
        for (auto x : c[i]) EXPECT_GE(x, 1);
        if (i) {
          EXPECT_LT(c[i - 1], c[i]);
        }
      }
    }
}

TEST(Simplex, ValuesCarryUnitsAndRejectNonMultiples) {
  const auto v = simplex_allocations(100e9, 25e9, 2, "k");
  EXPECT_EQ(v, (std::vector<std::string>{"25GB/s,75GB/s", "50GB/s,50GB/s", "75GB/s,25GB/s"}));
  EXPECT_THROW(simplex_allocations(100e9, 30e9, 2, "k"), BadInput);
  EXPECT_THROW(simplex_allocations(100e9, 50e9, 3, "k"), BadInput);
}

// Independent count of multiplier-equivalence classes: union-find over all stride sets with the
// right port count, joined under every unit, then keep connected classes.
std::size_t classes_by_orbits(std::int64_t n, std::int64_t ports) {
  const std::int64_t half = n / 2;
  std::vector<std::set<std::int64_t>> sets;
  for (std::uint64_t mask = 1; mask < (1ULL << half); ++mask) {
    std::set<std::int64_t> s;
    std::int64_t p = 0;
    for (std::int64_t b = 0; b < half; ++b)
      if (mask >> b & 1) {
        s.insert(b + 1);
        p += (n % 2 == 0 && b + 1 == half) ? 1 : 2;
      }
    if (p == ports) sets.push_back(s);
  }
  std::map<std::set<std::int64_t>, std::size_t> id;
  for (std::size_t i = 0; i < sets.size(); ++i) id[sets[i]] = i;
  std::vector<std::size_t> parent(sets.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (std::size_t i = 0; i < sets.size(); ++i)
    for (std::int64_t u = 2; u < n; ++u) {
      if (std::gcd(u, n) != 1) continue;
      std::set<std::int64_t> img;
      for (auto s : sets[i]) img.insert(std::min(u * s % n, n - u * s % n));
      parent[find(i)] = find(id.at(img));
    }
  std::set<std::size_t> roots;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    std::int64_t g = n;
    for (auto s : sets[i]) g = std::gcd(g, s);
    if (g == 1) roots.insert(find(i));  // connectivity is invariant under units
  }
  return roots.size();
}

TEST(CirculantStrideSets, HandWorkedSmallCases) {
  // n=8, 4 ports: {1,2} ~ {2,3} (×3), {1,3} alone; K_{4,4} vs a non-bipartite graph.
  EXPECT_EQ(circulant_stride_sets(8, 4), (std::vector<std::vector<std::int64_t>>{{1, 2}, {1, 3}}));
  // n=6, 3 ports: {1,3} (K_{3,3}) and {2,3} (prism).
  EXPECT_EQ(circulant_stride_sets(6, 3), (std::vector<std::vector<std::int64_t>>{{1, 3}, {2, 3}}));
  // n=5, 2 ports: the 5-cycle, once.
  EXPECT_EQ(circulant_stride_sets(5, 2), (std::vector<std::vector<std::int64_t>>{{1}}));
  // Degree 2 on n nodes: a single Hamiltonian cycle class.
  EXPECT_EQ(circulant_stride_sets(16, 2).size(), 1u);
}

TEST(CirculantStrideSets, MatchesIndependentOrbitCount) {
  for (std::int64_t n = 4; n <= 22; ++n)
    for (std::int64_t d = 2; d <= 6; ++d)
      EXPECT_EQ(circulant_stride_sets(n, d).size(), classes_by_orbits(n, d)) << "n " << n << " d " << d;
}

TEST(Strategies, CountsOfOrderedFactorisations) {
  // 8 = 2^3: exponents (a,b,c) with a+b+c = 3: C(5,2) = 10. 12 = 2^2·3: C(4,2)·C(3,2) = 18.
  EXPECT_EQ(all_strategies(8, INT64_MAX, INT64_MAX).size(), 10u);
  EXPECT_EQ(all_strategies(12, INT64_MAX, INT64_MAX).size(), 18u);
  EXPECT_EQ(all_strategies(7, INT64_MAX, INT64_MAX).size(), 3u);
  // tp ≤ 1 and pp ≤ 1 leaves pure data parallelism.
  const auto dp_only = all_strategies(12, 1, 1);
  ASSERT_EQ(dp_only.size(), 1u);
  EXPECT_EQ(dp_only[0].spelled(), "dp12tp1pp1");
  EXPECT_EQ(parse_strategy("dp12tp1pp1", "k"), (StrategyTriple{12, 1, 1}));
  EXPECT_THROW(parse_strategy("dp0tp1pp1", "k"), BadInput);
  EXPECT_THROW(parse_strategy("dp1tp1", "k"), BadInput);
}

}  // namespace
}  // namespace toposweep::sweep
