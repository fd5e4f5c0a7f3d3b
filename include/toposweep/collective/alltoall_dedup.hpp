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
// 0.662; Qwen3-30B-A3B (128 experts, top 8) over 2 nodes: 0.249. Node-limited routing (DeepSeek-V3's
// at most 4 nodes a token) is not modelled.
#include <cstdint>

namespace toposweep {

// The fraction of a plain All-to-All's network bytes a node-deduplicating dispatcher sends among
// `nodes` nodes (1 for one node, or without dedup).
double dedup_network_fraction(std::uint32_t top_k, std::uint32_t experts, std::uint32_t nodes);

}  // namespace toposweep
