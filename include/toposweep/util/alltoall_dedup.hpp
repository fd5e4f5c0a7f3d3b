#pragma once
// Node-deduplicated MoE All-to-All (TokenDedup, util/collective_op.hpp): DeepEP's normal
// kernels (deepseek-ai/DeepEP, "normal kernels with NVLink and RDMA forwarding") and HybridEP send a
// token over the network once per destination node, where the receiving GPU forwards it over the
// node's fabric to the GPUs holding its experts; the combine reduces a token's expert outputs on
// that node and sends one result back. A plain All-to-All sends one copy per (token, expert).
//
// With top_k of E experts chosen per token uniformly without replacement (balanced routing) and
// the E experts spread evenly over N nodes (E / N each), a given other node holds at least one of a
// token's experts with probability 1 - q, q = C(E - E/N, k) / C(E, k); the expected copies leaving
// the token's node are (N - 1)(1 - q) against the plain k (N - 1) / N. dedup_network_fraction is
// their ratio, N (1 - q) / k: at most 1 (the union bound), 1 when k = 1 or when every node holds
// one expert (no token has two experts on one node); DeepSeek-V3 (256 experts, top 8) over 8 nodes:
// 0.662; Qwen3-30B-A3B (128 experts, top 8) over 2 nodes: 0.249.
//
// Group-limited routing (DeepSeek-V3's node-limited routing: the experts in G groups, a token's k
// experts within M of them) with the groups on the nodes (G = N, consecutive experts on a node as in
// a group): a token picks M of the N nodes, then its k experts among their M E / N; a given other
// node is picked with probability M / N and then holds one of them with probability 1 - q_M,
// q_M = C(M E/N - E/N, k) / C(M E/N, k); the copies a plain All-to-All sends are still k (N - 1) / N,
// so the fraction is M (1 - q_M) / k: DeepSeek-V3 (4 of 8) over 8 nodes 0.454. With G != N the limit
// is not applied (the unlimited fraction, an upper estimate of the bytes).
#include <cstdint>

#include "toposweep/util/collective_op.hpp"

namespace toposweep {

// The fraction of a plain All-to-All's network bytes a node-deduplicating dispatcher sends among
// `nodes` nodes (1 for one node, or without dedup).
// `groups` > 0: group-limited routing within `group_topk` of `groups` groups (applied when groups ==
// nodes).
double dedup_network_fraction(std::uint32_t top_k, std::uint32_t experts, std::uint32_t nodes,
                              std::uint32_t groups = 0, std::uint32_t group_topk = 0);
// The same for a task's routing (1 when `dedup` is inactive: a plain All-to-All).
inline double dedup_network_fraction(const TokenDedup& dedup, std::uint32_t nodes) {
  return dedup.active()
             ? dedup_network_fraction(dedup.top_k, dedup.experts, nodes, dedup.groups, dedup.group_topk)
             : 1.0;
}

}  // namespace toposweep
