// The permutations(...) generator: stride sets from the topology module's enumeration, checked
// against an independent orbit count.
#include <gtest/gtest.h>

#include <bit>
#include <map>
#include <numeric>
#include <set>

#include "toposweep/sweep/space.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::sweep {
namespace {

// Multiplier classes of connected stride sets with degree/2 rings (every ring 2 ports, the
// topology module's convention): union-find over all subsets of {1..n/2}, joined under units.
std::size_t classes_by_orbits(std::int64_t n, std::int64_t degree) {
  const std::int64_t half = n / 2;
  const std::int64_t rings = degree / 2;
  std::vector<std::set<std::int64_t>> sets;
  for (std::uint64_t mask = 1; mask < (1ULL << half); ++mask)
    if (std::popcount(mask) == rings) {
      std::set<std::int64_t> s;
      for (std::int64_t b = 0; b < half; ++b)
        if (mask >> b & 1) s.insert(b + 1);
      sets.push_back(s);
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

std::uint64_t permutations_axis_size(int n, int degree) {
  Config c;
  load_ini_text(c,
                "[space.p]\ntopology.servers = " + std::to_string(n) + "\ntopology.strides = permutations(" +
                    std::to_string(degree) + ")\n",
                "p.ini");
  const KeyRegistry r({{"topology.servers", "", ""}, {"topology.strides", "", ""}, {"space.*", "", ""}});
  return parse_space(c, r).size();
}

TEST(PermutationsGenerator, HandWorkedSmallCases) {
  // n = 8, two rings: {1,2} ~ {2,3} (×3), {1,3} alone, {1,4} and {3,4} ~ (×3) -> 3 classes.
  EXPECT_EQ(classes_by_orbits(8, 4), 3u);
  EXPECT_EQ(permutations_axis_size(8, 4), 3u);
  // One ring: every unit stride gives the same Hamiltonian cycle class.
  EXPECT_EQ(permutations_axis_size(16, 2), 1u);
}

TEST(PermutationsGenerator, MatchesIndependentOrbitCount) {
  for (int n = 5; n <= 20; ++n)
    for (int d = 2; d <= 6 && d < n; d += 2)
      EXPECT_EQ(permutations_axis_size(n, d), classes_by_orbits(n, d)) << "n " << n << " d " << d;
}

TEST(PermutationsGenerator, OddDegreeIsBadInput) {
  EXPECT_THROW(permutations_axis_size(8, 3), BadInput);
}

}  // namespace
}  // namespace toposweep::sweep
