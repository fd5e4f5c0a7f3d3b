#include "toposweep/topology/perm_sets.hpp"

#include <algorithm>

#include "toposweep/topology/totient_perms.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::topology {
namespace {

std::uint32_t rep(std::uint64_t s, std::uint32_t n) {
  const auto r = static_cast<std::uint32_t>(s % n);
  return std::min(r, n - r);
}

// Image of a normalized set under unit u, normalized and sorted into `out`.
void image(std::uint32_t n, const std::vector<std::uint32_t>& set, std::uint32_t u,
           std::vector<std::uint32_t>& out) {
  out.clear();
  for (std::uint32_t s : set) out.push_back(rep(static_cast<std::uint64_t>(s) * u, n));
  std::sort(out.begin(), out.end());
}

}  // namespace

std::vector<std::uint32_t> normalize_strides(std::uint32_t n, const std::vector<std::uint32_t>& strides,
                                             const std::string& where) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t s : strides) {
    if (s == 0 || s >= n)
      throw BadInput("stride " + std::to_string(s) + " must be between 1 and n-1 = " + std::to_string(n - 1),
                     where);
    out.push_back(std::min(s, n - s));
  }
  std::sort(out.begin(), out.end());
  for (std::size_t i = 1; i < out.size(); ++i)
    if (out[i] == out[i - 1])
      throw BadInput("strides give the same bidirectional ring twice (s and n-s, or a repeat): " +
                         std::to_string(out[i]),
                     where);
  return out;
}

std::vector<std::uint32_t> canonical_stride_set(std::uint32_t n, const std::vector<std::uint32_t>& strides) {
  std::vector<std::uint32_t> set;
  for (std::uint32_t s : strides) set.push_back(rep(s, n));
  std::sort(set.begin(), set.end());
  std::vector<std::uint32_t> best = set, cur;
  for (std::uint32_t u : units_mod(n)) {
    image(n, set, u, cur);
    if (cur < best) best = cur;
  }
  return best;
}

bool multiplier_equivalent(std::uint32_t n, const std::vector<std::uint32_t>& a,
                           const std::vector<std::uint32_t>& b) {
  return canonical_stride_set(n, a) == canonical_stride_set(n, b);
}

bool stride_set_connected(std::uint32_t n, const std::vector<std::uint32_t>& strides) {
  std::uint32_t g = n;
  for (std::uint32_t s : strides) g = gcd_u32(g, s % n);
  return g == 1;
}

std::vector<std::vector<std::uint32_t>> enumerate_stride_sets(std::uint32_t n, std::uint32_t degree,
                                                              bool connected_only, std::size_t limit,
                                                              const std::string& where) {
  if (n < 3) throw BadInput("permutation sets need at least 3 servers, got " + std::to_string(n), where);
  if (degree % 2 != 0 || degree == 0)
    throw BadInput("degree " + std::to_string(degree) + " must be even: each bidirectional ring uses 2 ports",
                   where);
  if (degree >= n)
    throw BadInput(
        "degree " + std::to_string(degree) + " must be below the " + std::to_string(n) + " servers", where);
  const std::uint32_t m = degree / 2;
  const std::uint32_t classes = n / 2;  // representatives 1..floor(n/2)
  std::vector<std::vector<std::uint32_t>> result;
  if (m > classes) return result;
  const std::vector<std::uint32_t> units = units_mod(n);
  std::vector<std::uint32_t> set(m), cur;
  for (std::uint32_t i = 0; i < m; ++i) set[i] = i + 1;
  while (true) {
    bool keep = !connected_only || stride_set_connected(n, set);
    // A set is output iff no unit maps it to something smaller: exactly one per class.
    for (std::size_t k = 0; keep && k < units.size(); ++k) {
      image(n, set, units[k], cur);
      if (cur < set) keep = false;
    }
    if (keep) {
      result.push_back(set);
      if (limit != 0 && result.size() >= limit) break;
    }
    // Next m-combination of 1..classes in lexicographic order.
    int i = static_cast<int>(m) - 1;
    while (i >= 0 && set[i] == classes - (m - 1 - i)) --i;
    if (i < 0) break;
    ++set[i];
    for (std::uint32_t j = i + 1; j < m; ++j) set[j] = set[j - 1] + 1;
  }
  return result;
}

}  // namespace toposweep::topology
