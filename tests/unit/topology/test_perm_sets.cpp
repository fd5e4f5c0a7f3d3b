// Canonical forms of stride sets vs brute-force graph isomorphism of the circulants, n <= 16.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <numbers>
#include <set>

#include "topology_test_helpers.hpp"
#include "toposweep/topology/perm_sets.hpp"
#include "toposweep/topology/totient_perms.hpp"

namespace toposweep::topology {
namespace {

using Adjacency = std::array<std::array<int, 16>, 16>;

// Multigraph adjacency of C_n(S u -S): each stride adds a link to i+s and one to i-s (a
// stride n/2 thus gives two parallel links, as a bidirectional ring does).
Adjacency circulant(std::uint32_t n, const std::vector<std::uint32_t>& strides) {
  Adjacency a{};
  for (std::uint32_t s : strides)
    for (std::uint32_t i = 0; i < n; ++i) {
      ++a[i][(i + s) % n];
      ++a[i][(i + n - s) % n];
    }
  return a;
}

// Brute-force isomorphism by backtracking (vertex 0 -> 0 is enough: circulants are
// vertex-transitive), vertices taken in BFS order so every new one has a mapped neighbour.
bool isomorphic(std::uint32_t n, const Adjacency& A, const Adjacency& B) {
  std::vector<std::uint32_t> order{0};
  std::vector<bool> seen(n, false);
  seen[0] = true;
  for (std::size_t i = 0; i < order.size(); ++i)
    for (std::uint32_t v = 0; v < n; ++v)
      if (A[order[i]][v] && !seen[v]) {
        seen[v] = true;
        order.push_back(v);
      }
  for (std::uint32_t v = 0; v < n; ++v)
    if (!seen[v]) order.push_back(v);
  std::vector<int> f(n, -1);
  std::vector<bool> used(n, false);
  auto extend = [&](auto&& self, std::size_t depth) -> bool {
    if (depth == n) return true;
    const std::uint32_t v = order[depth];
    for (std::uint32_t w = 0; w < n; ++w) {
      if (used[w]) continue;
      bool ok = true;
      for (std::size_t d = 0; d < depth && ok; ++d) {
        const std::uint32_t u = order[d];
        ok = A[u][v] == B[f[u]][w];
      }
      if (!ok) continue;
      f[v] = static_cast<int>(w);
      used[w] = true;
      if (self(self, depth + 1)) return true;
      used[w] = false;
    }
    f[v] = -1;
    return false;
  };
  f[0] = 0;
  used[0] = true;
  return extend(extend, 1);
}

// Sorted spectrum, a cheap isomorphism invariant to skip most non-isomorphic pairs.
std::vector<long> spectrum(std::uint32_t n, const std::vector<std::uint32_t>& strides) {
  std::vector<long> ev;
  for (std::uint32_t j = 0; j < n; ++j) {
    double l = 0;
    for (std::uint32_t s : strides) l += 2 * std::cos(2 * std::numbers::pi * j * s / n);
    ev.push_back(std::lround(l * 1e6));
  }
  std::sort(ev.begin(), ev.end());
  return ev;
}

std::vector<std::vector<std::uint32_t>> all_sets(std::uint32_t n, std::uint32_t m) {
  std::vector<std::vector<std::uint32_t>> out;
  const std::uint32_t reps = n / 2;
  for (std::uint32_t mask = 0; mask < (1u << reps); ++mask) {
    if (static_cast<std::uint32_t>(__builtin_popcount(mask)) != m) continue;
    std::vector<std::uint32_t> s;
    for (std::uint32_t r = 1; r <= reps; ++r)
      if (mask >> (r - 1) & 1u) s.push_back(r);
    out.push_back(s);
  }
  return out;
}

TEST(PermSets, CanonicalFormsAgreeWithBruteForceIsomorphism) {
  // Known exception to Adam's conjecture (Elspas & Turner 1970): C_16(1,2,7) and C_16(2,3,5)
  // are isomorphic but not related by a unit of Z_16; in canonical form {1,2,7} vs {1,6,7}
  // (3*{2,3,5} = {6,9,15} -> {1,6,7}). Strides 4 and 8 are fixed by every unit, so adding
  // them keeps the pair an exception. Any other disagreement is a bug.
  std::set<std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>> adam_exceptions;
  for (const auto& [a, b] : std::vector<std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>>{
           {{1, 2, 7}, {1, 6, 7}}, {{1, 2, 4, 7}, {1, 4, 6, 7}}, {{1, 2, 7, 8}, {1, 6, 7, 8}}}) {
    adam_exceptions.insert({a, b});
    adam_exceptions.insert({b, a});
  }
  std::size_t exceptions_seen = 0;
  for (std::uint32_t n = 3; n <= 16; ++n)
    for (std::uint32_t m = 1; 2 * m < n && m <= 4; ++m) {
      const auto sets = all_sets(n, m);
      std::vector<std::vector<std::uint32_t>> canon;
      std::vector<Adjacency> adj;
      std::vector<std::vector<long>> spec;
      for (const auto& s : sets) {
        canon.push_back(canonical_stride_set(n, s));
        adj.push_back(circulant(n, s));
        spec.push_back(spectrum(n, s));
      }
      for (std::size_t i = 0; i < sets.size(); ++i)
        for (std::size_t j = i + 1; j < sets.size(); ++j) {
          const bool same_canon = canon[i] == canon[j];
          if (same_canon) {
            // Related by a unit => isomorphic, and so cospectral.
            EXPECT_EQ(spec[i], spec[j]);
            if ((i + j) % 7 == 0) {
              EXPECT_TRUE(isomorphic(n, adj[i], adj[j])) << n;
            }
            continue;
          }
          if (spec[i] != spec[j]) continue;  // certainly not isomorphic
          if (!isomorphic(n, adj[i], adj[j])) continue;
          // Isomorphic with different canonical forms: only the Adam exceptions (and their
          // multiplier images) may do that.
          const bool known = n == 16 && adam_exceptions.count({canon[i], canon[j]});
          EXPECT_TRUE(known) << "n=" << n << " sets " << ::testing::PrintToString(sets[i]) << " "
                             << ::testing::PrintToString(sets[j]) << " canonical "
                             << ::testing::PrintToString(canon[i]) << " "
                             << ::testing::PrintToString(canon[j]);
          exceptions_seen += known;
        }
    }
  EXPECT_GT(exceptions_seen, 0u);  // the brute force does find the known counterexample
}

TEST(PermSets, EnumerationGivesOnePerClass) {
  for (std::uint32_t n = 5; n <= 24; ++n)
    for (std::uint32_t d = 2; d < n && d <= 8; d += 2) {
      std::set<std::vector<std::uint32_t>> classes, connected_classes;
      for (const auto& s : all_sets(n, d / 2)) {
        classes.insert(canonical_stride_set(n, s));
        if (stride_set_connected(n, s)) connected_classes.insert(canonical_stride_set(n, s));
      }
      const auto all = enumerate_stride_sets(n, d, /*connected_only=*/false);
      const auto conn = enumerate_stride_sets(n, d, /*connected_only=*/true);
      EXPECT_EQ(std::set<std::vector<std::uint32_t>>(all.begin(), all.end()), classes) << n << " " << d;
      EXPECT_EQ(all.size(), classes.size());
      EXPECT_EQ(std::set<std::vector<std::uint32_t>>(conn.begin(), conn.end()), connected_classes);
    }
}

TEST(PermSets, HandWorkedClasses) {
  // n = 7 (prime), one ring: all strides are units, so a single class {1}.
  EXPECT_EQ(enumerate_stride_sets(7, 2), (std::vector<std::vector<std::uint32_t>>{{1}}));
  // n = 8, two rings, connected: {1,2},{1,3},{1,4} vs units {1,3,5,7}: 3*{1,2} = {3,2} -> {2,3};
  // {2,3} and {1,2} are one class; {1,3} -> 3*{1,3} = {3,1}; {1,4}; {2,3}; {3,4} -> 3*{3,4}={1,4}.
  EXPECT_EQ(enumerate_stride_sets(8, 4), (std::vector<std::vector<std::uint32_t>>{{1, 2}, {1, 3}, {1, 4}}));
  EXPECT_EQ(canonical_stride_set(8, {3, 2}), (std::vector<std::uint32_t>{1, 2}));
  EXPECT_TRUE(multiplier_equivalent(13, {1, 5}, {2, 3}));  // 2*{1,5} = {2,10} -> {2,3}
  EXPECT_FALSE(stride_set_connected(12, {2, 4}));
  EXPECT_TRUE(stride_set_connected(12, {3, 4}));
  EXPECT_THAT(test::bad_input_text([] { enumerate_stride_sets(10, 3); }), ::testing::HasSubstr("even"));
  EXPECT_THAT(test::bad_input_text([] {
                normalize_strides(10, {1, 9});
              }),
              ::testing::HasSubstr("same bidirectional ring"));
  EXPECT_EQ(enumerate_stride_sets(64, 8, true, 5).size(), 5u);
}

}  // namespace
}  // namespace toposweep::topology
