#pragma once
// Communication patterns of the classic collective algorithms as phases of transfers between
// the members (see schedule.hpp), independent of the network they run on. `order` lists the
// members; Broadcast and Reduce use `root`, which must be one of them. `bytes` follows the
// nccl-tests convention (docs/collectives.md). Throws BadInput when an algorithm does not apply to an op.
#include <vector>

#include "toposweep/collective/schedule.hpp"
#include "toposweep/util/collective_op.hpp"

namespace toposweep {

// Rings run concurrently, ring j carrying the fraction shares[j] of the data (shares sum to 1).
// One ring in member order is NCCL's ring; several are TopoOpt's multi-ring.
std::vector<Phase> ring_phases(CollectiveOp op, const std::vector<std::vector<VertexId>>& rings,
                               const std::vector<double>& shares, double bytes, VertexId root);

// Double binary tree (AllReduce: each tree reduces and broadcasts half of the data, pipelined);
// Broadcast / Reduce: one pipelined binary tree rooted at `root`.
std::vector<Phase> tree_phases(CollectiveOp op, const std::vector<VertexId>& order, double bytes,
                               VertexId root);

// Recursive halving / doubling (Rabenseifner) with the extra ranks of a non-power-of-two group
// folded in first and served last; binomial trees for Broadcast / Reduce; Bruck for AllToAll.
std::vector<Phase> halving_doubling_phases(CollectiveOp op, const std::vector<VertexId>& order, double bytes,
                                           VertexId root);

// Every member sends to every other member at once.
std::vector<Phase> direct_phases(CollectiveOp op, const std::vector<VertexId>& order, double bytes,
                                 VertexId root);

// p-1 rounds; in round k member i sends to member i+k (mod p).
std::vector<Phase> pairwise_phases(CollectiveOp op, const std::vector<VertexId>& order, double bytes);

// Height (in arcs) of the binary tree tree_phases builds over p members (NCCL's btree).
std::uint32_t binary_tree_height(std::uint32_t p);

}  // namespace toposweep
