#include "toposweep/util/alltoall_dedup.hpp"

#include <algorithm>

namespace toposweep {

namespace {

// C(pool - held, k) / C(pool, k): none of k picks from `pool` lands on the `held` of one node.
double none_held(double pool, double held, double k) {
  double q = 1;
  for (double i = 0; i < k; ++i) q *= std::max(0.0, pool - held - i) / (pool - i);
  return q;
}

}  // namespace

double dedup_network_fraction(std::uint32_t top_k, std::uint32_t experts, std::uint32_t nodes,
                              std::uint32_t groups, std::uint32_t group_topk) {
  if (nodes <= 1 || top_k == 0 || experts == 0) return 1.0;
  const double E = experts, N = nodes, per_node = E / N;
  // Group-limited routing with a group on each node: M nodes picked, the experts among theirs.
  const bool limited = groups == nodes && group_topk > 0 && group_topk < groups;
  const double M = limited ? group_topk : N, pool = M * per_node;
  const double k = std::min<double>(top_k, pool);
  return std::min(1.0, M * (1 - none_held(pool, per_node, k)) / k);
}

}  // namespace toposweep
