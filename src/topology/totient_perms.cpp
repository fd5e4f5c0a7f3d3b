#include "toposweep/topology/totient_perms.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "toposweep/util/error.hpp"

namespace toposweep::topology {

std::uint32_t gcd_u32(std::uint32_t a, std::uint32_t b) {
  while (b != 0) {
    const std::uint32_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

std::uint32_t euler_phi(std::uint32_t n) {
  std::uint32_t result = n;
  std::uint32_t m = n;
  for (std::uint32_t p = 2; p * p <= m; ++p) {
    if (m % p != 0) continue;
    while (m % p == 0) m /= p;
    result -= result / p;
  }
  if (m > 1) result -= result / m;
  return result;
}

std::vector<std::uint32_t> units_mod(std::uint32_t n) {
  std::vector<std::uint32_t> u;
  for (std::uint32_t k = 1; k < n; ++k)
    if (gcd_u32(k, n) == 1) u.push_back(k);
  return u;
}

std::vector<std::uint32_t> totient_candidates(std::uint32_t n, std::uint32_t g, const std::string& where) {
  if (g < 2 || g > n || n % g != 0)
    throw BadInput("TotientPerms group size " + std::to_string(g) + " must be >= 2 and divide the " +
                       std::to_string(n) + " servers",
                   where);
  const std::uint32_t spacing = n / g;
  std::vector<std::uint32_t> c;
  for (std::uint32_t k = 1; k < g; ++k)
    if (gcd_u32(k, g) == 1) c.push_back(spacing * k);
  return c;
}

std::vector<std::uint32_t> select_geometric(std::uint32_t n, const std::vector<std::uint32_t>& candidates,
                                            std::uint32_t m) {
  std::set<std::uint32_t> reps_set;
  for (std::uint32_t s : candidates) {
    const std::uint32_t r = s % n;
    if (r == 0) continue;
    reps_set.insert(std::min(r, n - r));
  }
  std::vector<std::uint32_t> reps(reps_set.begin(), reps_set.end());
  if (m >= reps.size()) return reps;
  std::vector<std::uint32_t> picks;
  if (m == 0) return picks;
  std::vector<bool> used(reps.size(), false);
  const double ratio = std::pow(static_cast<double>(reps.back()) / reps.front(), 1.0 / m);
  double target = reps.front();
  for (std::uint32_t i = 0; i < m; ++i) {
    // Smallest unused representative at or above the running target (with a little slack so
    // that an exact power is not missed to rounding).
    std::size_t pick = reps.size();
    for (std::size_t j = 0; j < reps.size(); ++j)
      if (!used[j] && reps[j] + 1e-9 * reps[j] >= target) {
        pick = j;
        break;
      }
    if (pick == reps.size())
      for (std::size_t j = reps.size(); j-- > 0;)
        if (!used[j]) {
          pick = j;
          break;
        }
    used[pick] = true;
    picks.push_back(reps[pick]);
    target *= ratio;
  }
  return picks;
}

std::vector<std::uint32_t> totient_perms(std::uint32_t n, std::uint32_t g, std::uint32_t m,
                                         const std::string& where) {
  std::vector<std::uint32_t> picks;
  if (m == 0) return picks;
  if (g == n) {
    picks = select_geometric(n, totient_candidates(n, g, where), m);
  } else {
    const std::vector<std::uint32_t> cands = totient_candidates(n, g, where);
    picks.push_back(1);
    for (std::uint32_t s : select_geometric(n, cands, m - 1))
      if (s != 1) picks.push_back(s);
  }
  if (picks.size() < m) {
    std::vector<std::uint32_t> rest;
    for (std::uint32_t u : units_mod(n)) {
      const std::uint32_t r = std::min(u, n - u);
      if (std::find(picks.begin(), picks.end(), r) == picks.end()) rest.push_back(r);
    }
    for (std::uint32_t s : select_geometric(n, rest, m - static_cast<std::uint32_t>(picks.size())))
      picks.push_back(s);
  }
  if (picks.size() < m) {
    // Units exhausted (small n): the remaining ports still add bandwidth and shorten paths
    // as rings of non-unit strides (several shorter cycles each).
    std::vector<std::uint32_t> rest;
    for (std::uint32_t r = 1; r <= n / 2; ++r)
      if (std::find(picks.begin(), picks.end(), r) == picks.end()) rest.push_back(r);
    for (std::uint32_t s : select_geometric(n, rest, m - static_cast<std::uint32_t>(picks.size())))
      picks.push_back(s);
  }
  return picks;
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> ring_arcs(std::uint32_t n,
                                                               const std::vector<std::uint32_t>& strides,
                                                               bool bidirectional) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> arcs;
  arcs.reserve(static_cast<std::size_t>(n) * strides.size() * (bidirectional ? 2 : 1));
  for (std::uint32_t s : strides) {
    const std::uint32_t r = s % n;
    for (std::uint32_t i = 0; i < n; ++i) {
      arcs.emplace_back(i, (i + r) % n);
      if (bidirectional) arcs.emplace_back(i, (i + n - r) % n);
    }
  }
  return arcs;
}

}  // namespace toposweep::topology
