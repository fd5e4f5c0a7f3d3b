#include "toposweep/collective/alltoall_dedup.hpp"

#include <algorithm>

namespace toposweep {

double dedup_network_fraction(std::uint32_t top_k, std::uint32_t experts, std::uint32_t nodes) {
  if (nodes <= 1 || top_k == 0 || experts == 0) return 1.0;
  const double E = experts, k = std::min<double>(top_k, experts), N = nodes;
  const double others = E - E / N;  // experts on the other nodes
  // q = C(others, k) / C(E, k), as a product (E / N need not be whole).
  double q = 1;
  for (double i = 0; i < k; ++i) q *= std::max(0.0, others - i) / (E - i);
  return std::min(1.0, N * (1 - q) / k);
}

}  // namespace toposweep
