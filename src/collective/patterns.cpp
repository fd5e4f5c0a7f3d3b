#include "toposweep/collective/patterns.hpp"

#include <algorithm>
#include <string>

#include "toposweep/util/error.hpp"

namespace toposweep {

namespace {

[[noreturn]] void not_applicable(const char* algorithm, CollectiveOp op) {
  throw BadInput(
      std::string("algorithm ") + algorithm + " does not apply to " + std::string(collective_op_name(op)),
      "collective.algorithm");
}

// Members rotated so that `root` comes first.
std::vector<VertexId> rooted(const std::vector<VertexId>& order, VertexId root) {
  auto it = std::find(order.begin(), order.end(), root);
  if (it == order.end())
    throw BadInput("root " + std::to_string(root) + " is not a member of the group", "collective root");
  std::vector<VertexId> r(it, order.end());
  r.insert(r.end(), order.begin(), it);
  return r;
}

// NCCL's binary tree over positions 0..p-1 (root 0): a position's parent clears its lowest set
// bit and sets the next one up (or only clears it when that leaves the range), so inner nodes are
// even positions and leaves odd ones; mirroring (even p) or shifting (odd p) the positions gives a
// second tree whose inner nodes are the first one's leaves.
std::int64_t btree_parent(std::uint32_t r, std::uint32_t p) {
  if (r == 0) return -1;
  const std::uint32_t bit = r & (~r + 1);
  const std::uint64_t up = static_cast<std::uint64_t>(r ^ bit) | (static_cast<std::uint64_t>(bit) << 1);
  return up < p ? static_cast<std::int64_t>(up) : static_cast<std::int64_t>(r ^ bit);
}

std::uint32_t log2_floor(std::uint32_t x) {
  std::uint32_t k = 0;
  while ((2u << k) <= x) ++k;
  return k;
}

}  // namespace

std::uint32_t binary_tree_height(std::uint32_t p) {
  std::uint32_t height = 0;
  for (std::uint32_t r = 1; r < p; ++r) {
    std::uint32_t depth = 0;
    for (std::int64_t v = r; v > 0; v = btree_parent(static_cast<std::uint32_t>(v), p)) ++depth;
    height = std::max(height, depth);
  }
  return height;
}

std::vector<Phase> ring_phases(CollectiveOp op, const std::vector<std::vector<VertexId>>& rings,
                               const std::vector<double>& shares, double bytes, VertexId root) {
  std::vector<Phase> phases;
  if (rings.empty() || rings[0].size() < 2) return phases;
  const double p = static_cast<double>(rings[0].size());
  Phase ph;
  const bool chain = op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce;
  for (std::size_t j = 0; j < rings.size(); ++j) {
    if (chain) {
      // A pipelined chain through the ring starting at the root (Broadcast) or ending there (Reduce).
      std::vector<VertexId> r = rooted(rings[j], root);
      // Reduce runs along the ring's own arcs and ends at the root: a1 -> a2 -> ... -> root.
      if (op == CollectiveOp::Reduce) std::rotate(r.begin(), r.begin() + 1, r.end());
      for (std::size_t i = 0; i + 1 < r.size(); ++i)
        ph.transfers.push_back({r[i], r[i + 1], bytes * shares[j]});
      continue;
    }
    const auto& r = rings[j];
    for (std::size_t i = 0; i < r.size(); ++i)
      ph.transfers.push_back({r[i], r[(i + 1) % r.size()], bytes / p * shares[j]});
  }
  switch (op) {
    case CollectiveOp::AllReduce:
      ph.repeat = ph.latency_steps = 2 * (p - 1);
      ph.reduce_steps = p - 1;
      break;
    case CollectiveOp::ReduceScatter:
      ph.repeat = ph.latency_steps = p - 1;
      ph.reduce_steps = p - 1;
      break;
    case CollectiveOp::AllGather:
      ph.repeat = ph.latency_steps = p - 1;
      break;
    case CollectiveOp::AllToAll:
      // Each step forwards what is still in transit: (p-1) + (p-2) + ... + 1 chunks of bytes/p.
      ph.repeat = p * (p - 1) / 2;
      ph.latency_steps = p - 1;
      break;
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce:
      ph.pipeline_depth = static_cast<std::uint32_t>(p) - 1;
      break;
  }
  phases.push_back(std::move(ph));
  return phases;
}

std::vector<Phase> tree_phases(CollectiveOp op, const std::vector<VertexId>& order, double bytes,
                               VertexId root) {
  std::vector<Phase> phases;
  const std::uint32_t p = static_cast<std::uint32_t>(order.size());
  if (p < 2) return phases;
  Phase ph;
  if (op == CollectiveOp::AllReduce) {
    // Tree B mirrors (even p) or shifts (odd p) tree A so that A's leaves are B's inner nodes.
    for (int tree = 0; tree < 2; ++tree) {
      auto place = [&](std::uint32_t pos) {
        if (tree == 0) return order[pos];
        return p % 2 == 0 ? order[p - 1 - pos] : order[(pos + 1) % p];
      };
      for (std::uint32_t i = 1; i < p; ++i) {
        const VertexId child = place(i), par = place(static_cast<std::uint32_t>(btree_parent(i, p)));
        ph.transfers.push_back({child, par, bytes / 2});  // reduce
        ph.transfers.push_back({par, child, bytes / 2});  // broadcast
      }
    }
    ph.pipeline_depth = 2 * binary_tree_height(p);
  } else if (op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce) {
    const std::vector<VertexId> r = rooted(order, root);
    for (std::uint32_t i = 1; i < p; ++i) {
      const VertexId child = r[i], par = r[static_cast<std::uint32_t>(btree_parent(i, p))];
      if (op == CollectiveOp::Broadcast)
        ph.transfers.push_back({par, child, bytes});
      else
        ph.transfers.push_back({child, par, bytes});
    }
    ph.pipeline_depth = binary_tree_height(p);
  } else {
    not_applicable("tree", op);
  }
  phases.push_back(std::move(ph));
  return phases;
}

std::vector<Phase> halving_doubling_phases(CollectiveOp op, const std::vector<VertexId>& order, double bytes,
                                           VertexId root) {
  std::vector<Phase> phases;
  const std::uint32_t p = static_cast<std::uint32_t>(order.size());
  if (p < 2) return phases;
  const std::uint32_t q = 1u << log2_floor(p);  // largest power of two <= p
  const std::uint32_t extra = p - q;
  const double S = bytes;
  auto fold = [&](double b, bool inward) {  // extra ranks q+j pair with rank j
    Phase ph;
    for (std::uint32_t j = 0; j < extra; ++j)
      ph.transfers.push_back(inward ? Transfer{order[q + j], order[j], b}
                                    : Transfer{order[j], order[q + j], b});
    if (!ph.transfers.empty()) phases.push_back(std::move(ph));
  };
  auto exchange = [&](std::uint32_t distance, double b) {
    Phase ph;
    for (std::uint32_t i = 0; i < q; ++i) ph.transfers.push_back({order[i], order[i ^ distance], b});
    phases.push_back(std::move(ph));
  };
  auto halving = [&]() {
    double b = S;
    for (std::uint32_t d = q / 2; d >= 1; d /= 2) exchange(d, b /= 2);
  };
  auto doubling = [&](double block) {
    for (std::uint32_t d = 1; d < q; d *= 2) exchange(d, block * d);
  };
  switch (op) {
    case CollectiveOp::AllReduce:
      fold(S, true);
      halving();
      doubling(S / q);
      fold(S, false);
      break;
    case CollectiveOp::ReduceScatter:
      fold(S, true);
      halving();
      fold(S / p, false);
      break;
    case CollectiveOp::AllGather:
      fold(S / p, true);
      doubling(S / q);
      fold(S, false);
      break;
    case CollectiveOp::AllToAll:
      // Bruck: log2 rounds, each moving about half of the buffer to the member 2^k further on.
      for (std::uint32_t d = 1; d < p; d *= 2) {
        Phase ph;
        for (std::uint32_t i = 0; i < p; ++i) ph.transfers.push_back({order[i], order[(i + d) % p], S / 2});
        phases.push_back(std::move(ph));
      }
      break;
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce: {
      // Binomial tree: in round k the 2^k members that have the data send it 2^k further on.
      const std::vector<VertexId> r = rooted(order, root);
      std::vector<Phase> rounds;
      for (std::uint32_t d = 1; d < p; d *= 2) {
        Phase ph;
        for (std::uint32_t i = 0; i < d && i + d < p; ++i)
          ph.transfers.push_back(op == CollectiveOp::Broadcast ? Transfer{r[i], r[i + d], S}
                                                               : Transfer{r[i + d], r[i], S});
        rounds.push_back(std::move(ph));
      }
      if (op == CollectiveOp::Reduce) std::reverse(rounds.begin(), rounds.end());
      for (auto& ph : rounds) phases.push_back(std::move(ph));
      break;
    }
  }
  return phases;
}

std::vector<Phase> direct_phases(CollectiveOp op, const std::vector<VertexId>& order, double bytes,
                                 VertexId root) {
  std::vector<Phase> phases;
  const std::uint32_t p = static_cast<std::uint32_t>(order.size());
  if (p < 2) return phases;
  auto all_pairs = [&](double b) {
    Phase ph;
    ph.transfers.reserve(static_cast<std::size_t>(p) * (p - 1));
    for (std::uint32_t i = 0; i < p; ++i)
      for (std::uint32_t j = 0; j < p; ++j)
        if (i != j) ph.transfers.push_back({order[i], order[j], b});
    phases.push_back(std::move(ph));
  };
  switch (op) {
    case CollectiveOp::AllReduce:
      all_pairs(bytes / p);  // reduce-scatter
      all_pairs(bytes / p);  // all-gather
      break;
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllGather:
    case CollectiveOp::AllToAll:
      all_pairs(bytes / p);
      break;
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce: {
      rooted(order, root);  // validates the root
      Phase ph;
      for (VertexId v : order)
        if (v != root)
          ph.transfers.push_back(op == CollectiveOp::Broadcast ? Transfer{root, v, bytes}
                                                               : Transfer{v, root, bytes});
      phases.push_back(std::move(ph));
      break;
    }
  }
  return phases;
}

std::vector<Phase> pairwise_phases(CollectiveOp op, const std::vector<VertexId>& order, double bytes) {
  std::vector<Phase> phases;
  const std::uint32_t p = static_cast<std::uint32_t>(order.size());
  if (op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce) not_applicable("pairwise", op);
  if (p < 2) return phases;
  const int passes = op == CollectiveOp::AllReduce ? 2 : 1;  // reduce-scatter, then all-gather
  for (int pass = 0; pass < passes; ++pass) {
    for (std::uint32_t k = 1; k < p; ++k) {
      Phase ph;
      for (std::uint32_t i = 0; i < p; ++i) ph.transfers.push_back({order[i], order[(i + k) % p], bytes / p});
      phases.push_back(std::move(ph));
    }
  }
  return phases;
}

}  // namespace toposweep
