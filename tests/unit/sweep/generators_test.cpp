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

TEST(Strategies, CountsOfOrderedFactorisations) {
  // 8 = 2^3: exponents (a,b,c) with a+b+c = 3: C(5,2) = 10. 12 = 2^2·3: C(4,2)·C(3,2) = 18.
  EXPECT_EQ(all_strategies(8, INT64_MAX, INT64_MAX).size(), 10u);
  EXPECT_EQ(all_strategies(12, INT64_MAX, INT64_MAX).size(), 18u);
  EXPECT_EQ(all_strategies(7, INT64_MAX, INT64_MAX).size(), 3u);
  // tp ≤ 1 and pp ≤ 1 leaves pure data parallelism.
  const auto dp_only = all_strategies(12, 1, 1);
  ASSERT_EQ(dp_only.size(), 1u);
  EXPECT_EQ(dp_only[0].spelled(), "dp12tp1pp1");
  EXPECT_EQ(parse_strategy("dp12tp1pp1", "k"), (StrategyTriple{12, 1, 1, {}}));
  EXPECT_THROW(parse_strategy("dp0tp1pp1", "k"), BadInput);
  EXPECT_THROW(parse_strategy("dp1tp1", "k"), BadInput);
}

}  // namespace
}  // namespace toposweep::sweep
