#pragma once
// Permutation-set algebra for circulant direct-connect topologies. A stride set S of
// bidirectional rings on Z_n gives the circulant C_n(S u -S). For a unit u of Z_n,
// x -> u*x mod n maps C_n(S) onto C_n(uS), so stride sets related by a unit are isomorphic
// networks and one representative per class suffices in a sweep. The converse (Adam's
// conjecture) fails in general; the smallest undirected counterexample is n = 16,
// {1,2,7} vs {2,3,5} (Elspas & Turner 1970): isomorphic, yet not related by a unit. Canonical
// forms here are therefore "up to multipliers", the classes TopoOpt deduplicates.
#include <cstdint>
#include <string>
#include <vector>

namespace toposweep::topology {

// Each stride s -> min(s mod n, n - s mod n), sorted ascending. Throws BadInput naming
// `where` for a stride that is 0 or >= n, or two strides giving the same bidirectional ring.
std::vector<std::uint32_t> normalize_strides(std::uint32_t n, const std::vector<std::uint32_t>& strides,
                                             const std::string& where = "topology.strides");

// The lexicographically smallest normalized image of `strides` under multiplication by a
// unit of Z_n. Equal canonical forms <=> related by a unit.
std::vector<std::uint32_t> canonical_stride_set(std::uint32_t n, const std::vector<std::uint32_t>& strides);
bool multiplier_equivalent(std::uint32_t n, const std::vector<std::uint32_t>& a,
                           const std::vector<std::uint32_t>& b);

// The strides generate Z_n (the circulant is connected) iff gcd(n, s_1, ..., s_m) = 1.
bool stride_set_connected(std::uint32_t n, const std::vector<std::uint32_t>& strides);

// Every canonical stride set of degree/2 bidirectional rings on Z_n (one per multiplier
// class), in lexicographic order. degree must be even and 2 <= degree < n (a stride n/2
// ring counts 2 ports, like any other ring). connected_only drops sets with gcd > 1.
// `limit` > 0 stops after that many sets. BadInput naming `where` on odd degree or n < 3.
std::vector<std::vector<std::uint32_t>> enumerate_stride_sets(std::uint32_t n, std::uint32_t degree,
                                                              bool connected_only = true,
                                                              std::size_t limit = 0,
                                                              const std::string& where = "topology.degree");

}  // namespace toposweep::topology
