#pragma once
// TotientPerms (TopoOpt, NSDI'23 §4): ring permutations for a direct-connect fabric of n
// servers whose data-parallel groups have g members at stride n/g. Each candidate stride s
// (ring i -> i+s mod n) is a Hamiltonian cycle over every group; a few are picked spaced
// geometrically so that multi-hop (model-parallel) paths stay short, Chord-like.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace toposweep::topology {

std::uint32_t gcd_u32(std::uint32_t a, std::uint32_t b);
// Euler's totient phi(n).
std::uint32_t euler_phi(std::uint32_t n);
// Units of Z_n (1 <= u < n, gcd(u, n) = 1), ascending; {1} for n = 1, 2... ({} for n = 1).
std::vector<std::uint32_t> units_mod(std::uint32_t n);

// Candidate strides (n/g)*k for 1 <= k < g with gcd(k, g) = 1, ascending: phi(g) of them.
// g must divide n and be >= 2 (BadInput naming `where` otherwise).
std::vector<std::uint32_t> totient_candidates(std::uint32_t n, std::uint32_t g,
                                              const std::string& where = "topology.ring_group");

// The ring stride s (i -> i+s mod n) splits Z_n into gcd(n, s) cycles of n/gcd(n, s) nodes;
// it is one Hamiltonian cycle iff gcd(n, s) = 1.
inline std::uint32_t ring_cycle_count(std::uint32_t n, std::uint32_t s) {
  return gcd_u32(n, s);
}
inline bool is_hamiltonian_stride(std::uint32_t n, std::uint32_t s) {
  return s % n != 0 && gcd_u32(n, s) == 1;
}

// Picks `m` bidirectional rings from `candidates` (strides mod n; s and n-s are one
// bidirectional ring, represented by min(s, n-s)). With the distinct representatives sorted,
// s_min and s_max their ends and q = (s_max/s_min)^(1/m), the i-th pick is the smallest unused
// representative >= s_min*q^i (the largest unused one when none is left above). Returns the
// representatives in pick order; all of them when m >= their number.
std::vector<std::uint32_t> select_geometric(std::uint32_t n, const std::vector<std::uint32_t>& candidates,
                                            std::uint32_t m);

// TotientPerms: `m` bidirectional ring strides (representatives <= n/2) for n servers and DP
// group size g. g = n: geometric pick among the units of Z_n (stride 1 always included).
// g < n: stride 1 first (a full-size ring keeps the graph connected), then m-1 geometric
// picks among the group candidates. If the candidates run out, the rest are geometric picks
// among the unused units of Z_n (more full-size rings), then among the remaining strides
// <= n/2 (rings of several cycles), so that all m rings exist whenever m <= n/2.
std::vector<std::uint32_t> totient_perms(std::uint32_t n, std::uint32_t g, std::uint32_t m,
                                         const std::string& where = "topology.ring_group");

// Directed arcs (i, i+s mod n) for every stride s, plus (i, i-s mod n) when bidirectional;
// one entry per ring arc (a stride n/2 ring gives each pair twice: two parallel links).
std::vector<std::pair<std::uint32_t, std::uint32_t>> ring_arcs(std::uint32_t n,
                                                               const std::vector<std::uint32_t>& strides,
                                                               bool bidirectional = true);

}  // namespace toposweep::topology
