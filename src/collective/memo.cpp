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

CollectiveMemo::CollectiveMemo(const Network& net, std::shared_ptr<TwinShared> shared)
    : shared_(shared ? std::move(shared) : std::make_shared<TwinShared>()), routes_(net, shared_->distances) {
  if (net.arc_count() == 0) return;
  if (shared_->reference_Bps == 0) shared_->reference_Bps = net.arc(0).bandwidth_Bps;
  factor_ = net.arc(0).bandwidth_Bps / shared_->reference_Bps;
}

const MultiRing& CollectiveMemo::multiring(const std::vector<VertexId>& members) {
  RingSets& rings = shared_->rings;
  auto it = rings.find(members);
  if (it == rings.end())
    it = rings.emplace(members, toposweep::multiring(routes_.network(), routes_, members)).first;
  return it->second;
}

std::optional<PathSums> CollectiveMemo::path_sums(VertexId src, VertexId dst) {
  const std::uint64_t key = static_cast<std::uint64_t>(src) << 32 | dst;
  auto it = shared_->path_sums.find(key);
  if (it == shared_->path_sums.end()) {
    auto sums = routes_.path_sums(src, dst);
    if (!sums) return std::nullopt;
    sums->narrowest_Bps /= factor_;  // exact: a power of two
    it = shared_->path_sums.emplace(key, *sums).first;
  }
  PathSums s = it->second;
  s.narrowest_Bps *= factor_;
  return s;
}

}  // namespace toposweep
