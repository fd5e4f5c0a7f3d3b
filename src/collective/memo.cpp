#include "toposweep/collective/memo.hpp"

#include <cmath>

namespace toposweep {

bool bandwidth_power_of_two_twins(const Network& a, const Network& b) {
  if (a.vertex_count() != b.vertex_count() || a.compute_count() != b.compute_count() ||
      a.arc_count() != b.arc_count() || a.info().strides != b.info().strides)
    return false;
  if (a.arc_count() == 0) return true;
  const double factor = b.arc(0).bandwidth_Bps / a.arc(0).bandwidth_Bps;
  int exponent = 0;
  if (!(std::frexp(factor, &exponent) == 0.5)) return false;  // not a power of two (or not finite)
  for (ArcId i = 0; i < a.arc_count(); ++i) {
    const Arc &x = a.arc(i), &y = b.arc(i);
    if (x.src != y.src || x.dst != y.dst || x.latency_s != y.latency_s ||
        x.bandwidth_Bps * factor != y.bandwidth_Bps)
      return false;
  }
  return true;
}

const MultiRing& CollectiveMemo::multiring(const std::vector<VertexId>& members) {
  auto it = multirings_->find(members);
  if (it == multirings_->end())
    it = multirings_->emplace(members, toposweep::multiring(routes_.network(), routes_, members)).first;
  return it->second;
}

}  // namespace toposweep
