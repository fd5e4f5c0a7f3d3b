#include "toposweep/collective/memo.hpp"

#include <cmath>

namespace toposweep {

namespace {

// Whether f is a power of two (1 included; not 0, not infinite, not NaN).
bool power_of_two(double f) {
  int exponent = 0;
  return std::frexp(f, &exponent) == 0.5;
}

// The first arc with a latency (arc_count() when none has one).
ArcId first_latency_arc(const Network& net) {
  ArcId i = 0;
  while (i < net.arc_count() && net.arc(i).latency_s == 0) ++i;
  return i;
}

}  // namespace

bool same_arc_structure(const Network& a, const Network& b) {
  if (a.vertex_count() != b.vertex_count() || a.compute_count() != b.compute_count() ||
      a.arc_count() != b.arc_count() || a.info().strides != b.info().strides)
    return false;
  for (ArcId i = 0; i < a.arc_count(); ++i)
    if (a.arc(i).src != b.arc(i).src || a.arc(i).dst != b.arc(i).dst) return false;
  return true;
}

std::uint64_t arc_structure_hash(const Network& net) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&h](std::uint64_t x) {
    h ^= x;
    h *= 0x100000001b3ULL;
  };
  mix(net.vertex_count());
  mix(net.compute_count());
  mix(net.arc_count());
  for (std::uint32_t s : net.info().strides) mix(s);
  for (ArcId i = 0; i < net.arc_count(); ++i)
    mix(static_cast<std::uint64_t>(net.arc(i).src) << 32 | net.arc(i).dst);
  return h;
}

std::optional<TwinFactors> power_of_two_twin_factors(const Network& a, const Network& b) {
  // A dragonfly routed minimally and one routed by Valiant load their links differently.
  if (!same_arc_structure(a, b) || a.info().routing != b.info().routing) return std::nullopt;
  TwinFactors f;
  if (a.arc_count() == 0) return f;
  f.bandwidth = b.arc(0).bandwidth_Bps / a.arc(0).bandwidth_Bps;
  if (!power_of_two(f.bandwidth)) return std::nullopt;
  const ArcId l = first_latency_arc(a);
  if (l < a.arc_count()) {
    f.latency = b.arc(l).latency_s / a.arc(l).latency_s;
    if (!power_of_two(f.latency)) return std::nullopt;
  }
  for (ArcId i = 0; i < a.arc_count(); ++i) {
    const Arc &x = a.arc(i), &y = b.arc(i);
    if (x.latency_s * f.latency != y.latency_s || x.bandwidth_Bps * f.bandwidth != y.bandwidth_Bps)
      return std::nullopt;
  }
  return f;
}

bool bandwidth_power_of_two_twins(const Network& a, const Network& b) {
  const auto f = power_of_two_twin_factors(a, b);
  return f && f->latency == 1;
}

CollectiveMemo::CollectiveMemo(const Network& net, std::shared_ptr<TwinShared> shared)
    : shared_(shared ? std::move(shared) : std::make_shared<TwinShared>()), routes_(net, shared_->distances) {
  if (net.arc_count() == 0) return;
  if (shared_->reference_Bps == 0) {
    shared_->reference_Bps = net.arc(0).bandwidth_Bps;
    const ArcId l = first_latency_arc(net);
    if (l < net.arc_count()) shared_->reference_latency_s = net.arc(l).latency_s;
  }
  factor_ = net.arc(0).bandwidth_Bps / shared_->reference_Bps;
  if (shared_->reference_latency_s != 0)
    latency_factor_ = net.arc(first_latency_arc(net)).latency_s / shared_->reference_latency_s;
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
    sums->narrowest_Bps /= factor_;  // exact: powers of two
    sums->latency_s /= latency_factor_;
    it = shared_->path_sums.emplace(key, *sums).first;
  }
  PathSums s = it->second;
  s.narrowest_Bps *= factor_;
  s.latency_s *= latency_factor_;
  return s;
}

}  // namespace toposweep
