// TotientPerms: candidates, Hamiltonian rings, geometric selection.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "topology_test_helpers.hpp"
#include "toposweep/topology/totient_perms.hpp"

namespace toposweep::topology {
namespace {

// Walk the directed ring i -> i+s from 0 using ring_arcs; the cycle length is the number of
// distinct nodes visited before returning to 0.
std::uint32_t cycle_length_from_arcs(std::uint32_t n, std::uint32_t s) {
  const auto arcs = ring_arcs(n, {s}, /*bidirectional=*/false);
  std::vector<std::uint32_t> next(n);
  for (const auto& [a, b] : arcs) next[a] = b;
  std::uint32_t v = 0, len = 0;
  do {
    v = next[v];
    ++len;
  } while (v != 0 && len <= n);
  return len;
}

TEST(TotientPerms, CoprimeStridesAreHamiltonianOthersAreNot) {
  for (std::uint32_t n = 3; n <= 40; ++n)
    for (std::uint32_t s = 1; s < n; ++s) {
      const std::uint32_t len = cycle_length_from_arcs(n, s);
      EXPECT_EQ(len == n, std::gcd(n, s) == 1u) << n << " " << s;
      EXPECT_EQ(is_hamiltonian_stride(n, s), len == n) << n << " " << s;
      EXPECT_EQ(ring_cycle_count(n, s), n / len) << n << " " << s;
    }
}

TEST(TotientPerms, EulerPhiMatchesCounting) {
  for (std::uint32_t n = 1; n <= 200; ++n) {
    std::uint32_t count = 0;
    for (std::uint32_t k = 1; k <= n; ++k) count += std::gcd(k, n) == 1u;
    EXPECT_EQ(euler_phi(n), count) << n;
  }
}

TEST(TotientPerms, CandidatesAreHamiltonianOverEachGroup) {
  // n = 24 servers, groups of g = 8 at stride 3: candidates 3k, k in {1,3,5,7}.
  const auto c = totient_candidates(24, 8);
  EXPECT_EQ(c, (std::vector<std::uint32_t>{3, 9, 15, 21}));
  for (std::uint32_t g : {2u, 3u, 4u, 6u, 8u, 12u, 24u}) {
    const auto cands = totient_candidates(24, g);
    EXPECT_EQ(cands.size(), euler_phi(g));
    std::set<std::uint32_t> group;
    for (std::uint32_t j = 0; j < g; ++j) group.insert(j * (24 / g));
    for (std::uint32_t s : cands) {
      std::set<std::uint32_t> orbit;
      std::uint32_t v = 0;
      do {
        orbit.insert(v);
        v = (v + s) % 24;
      } while (v != 0);
      EXPECT_EQ(orbit, group) << "g=" << g << " s=" << s;  // one cycle through the whole group
    }
  }
  EXPECT_THAT(test::bad_input_text([] { totient_candidates(24, 5); }), ::testing::HasSubstr("divide"));
}

TEST(TotientPerms, GeometricSelectionHandWorked) {
  // n = g = 64: representatives are the odd numbers 1..31. m = 4: ratio 31^(1/4) = 2.3596;
  // targets 1, 2.36, 5.57, 13.14 -> 1, 3, 7, 15.
  EXPECT_EQ(totient_perms(64, 64, 4), (std::vector<std::uint32_t>{1, 3, 7, 15}));
  // n = g = 12: unit representatives {1, 5}; select_geometric returns all when asked for more,
  // and totient_perms completes the third ring with the smallest other stride, 2.
  EXPECT_EQ(select_geometric(12, totient_candidates(12, 12), 3), (std::vector<std::uint32_t>{1, 5}));
  EXPECT_EQ(totient_perms(12, 12, 3), (std::vector<std::uint32_t>{1, 5, 2}));
  // n = 100, m = 2: reps of units <= 50 run 1..49; ratio 7; targets 1, 7 -> 1, 7.
  EXPECT_EQ(totient_perms(100, 100, 2), (std::vector<std::uint32_t>{1, 7}));
}

TEST(TotientPerms, SmallGroupKeepsAFullRing) {
  // n = 16, g = 4: candidates {4, 12} = one ring class {4}. Stride 1 comes first for
  // connectivity, then 4, then (candidates exhausted) a unit of Z_16: 3.
  EXPECT_EQ(totient_perms(16, 4, 2), (std::vector<std::uint32_t>{1, 4}));
  EXPECT_EQ(totient_perms(16, 4, 3), (std::vector<std::uint32_t>{1, 4, 3}));
  // n = 8: the units give rings {1, 3} only; a third ring takes the next stride >= 2: 2.
  EXPECT_EQ(totient_perms(8, 8, 3), (std::vector<std::uint32_t>{1, 3, 2}));
}

TEST(TotientPerms, RingArcsBidirectional) {
  const auto arcs = ring_arcs(5, {2});
  ASSERT_EQ(arcs.size(), 10u);
  EXPECT_EQ(arcs[0], (std::pair<std::uint32_t, std::uint32_t>{0, 2}));
  EXPECT_EQ(arcs[1], (std::pair<std::uint32_t, std::uint32_t>{0, 3}));
}

}  // namespace
}  // namespace toposweep::topology
