#include "toposweep/workload/hetero.hpp"

#include <algorithm>
#include <cmath>
#include <queue>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/ranks.hpp"

namespace toposweep {

std::vector<std::uint32_t> split_units(std::uint32_t units, std::span<const double> rates) {
  const auto n = static_cast<std::uint32_t>(rates.size());
  if (n == 0 || units < n) throw RuntimeFailure("split_units: fewer units than replicas");
  std::vector<std::uint32_t> out(n, 1);
  // (finish time after one more unit, index): smallest first, ties by index.
  using Item = std::pair<double, std::uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> next;
  for (std::uint32_t d = 0; d < n; ++d) next.push({2.0 / rates[d], d});
  for (std::uint32_t u = n; u < units; ++u) {
    const auto [t, d] = next.top();
    next.pop();
    ++out[d];
    next.push({(out[d] + 1.0) / rates[d], d});
  }
  return out;
}

double replica_stage_rate(const Workload& w, const Strategy& s, std::uint32_t d, std::uint32_t p) {
  const AxisGrid grid = axis_grid(s);
  double rate = w.flops_of_rank(grid.rank({{Axis::Dp, d}, {Axis::Pp, p}}));
  for (std::uint32_t t = 1; t < s.tp; ++t)
    rate = std::min(rate, w.flops_of_rank(grid.rank({{Axis::Tp, t}, {Axis::Dp, d}, {Axis::Pp, p}})));
  return rate;
}

double replica_stage_flops(const Workload& w, const Strategy& s, std::uint32_t d, std::uint32_t p) {
  if (!w.mixed()) return w.flops_per_s;
  return w.flops_per_s * (replica_stage_rate(w, s, d, p) / w.rate_reference());
}

double sfb_gather_bytes(const Workload& w, const Strategy& s, const DeviceShares& shares,
                        const Layer& layer) {
  return s.dp * s.microbatches * shares.max_samples * layer.sfb_elements * w.bytes_per_element;
}

SfbRebuild sfb_rebuild(const Workload& w, const Strategy& s, const DeviceShares& shares, const Layer& layer,
                       std::uint32_t stage) {
  SfbRebuild out;
  for (std::uint32_t d = 0; d < s.dp; ++d) {
    const double flops = (w.global_batch - s.microbatches * shares.replica_samples[d]) * layer.forward_flops;
    out.flops = std::max(out.flops, flops);
    out.seconds = std::max(out.seconds, flops / replica_stage_flops(w, s, d, stage));
  }
  return out;
}

std::vector<double> stage_weights(const Workload& w, const Strategy& s) {
  if (s.stage_split != StageSplit::Speed || !w.mixed() || s.pp == 1) return {};
  std::vector<double> weight(s.pp);
  for (std::uint32_t p = 0; p < s.pp; ++p) {
    weight[p] = replica_stage_rate(w, s, 0, p);
    for (std::uint32_t d = 1; d < s.dp; ++d) weight[p] = std::min(weight[p], replica_stage_rate(w, s, d, p));
  }
  if (std::all_of(weight.begin(), weight.end(), [&](double x) { return x == weight[0]; })) return {};
  return weight;
}

DeviceShares device_shares(const Workload& w, const Strategy& s) {
  DeviceShares out;
  const std::uint32_t v = s.schedule == PipelineSchedule::Interleaved ? s.virtual_stages : 1;
  const std::uint32_t chunks = s.pp * v;
  const auto weights = stage_weights(w, s);
  if (weights.empty()) {
    out.chunks = partition_stages(w.model, chunks, s.stage_split);
  } else {
    std::vector<double> chunk_weight(chunks);
    for (std::uint32_t c = 0; c < chunks; ++c) chunk_weight[c] = weights[c % s.pp];
    out.chunks = partition_stages(w.model, chunks, chunk_weight);
  }
  const double mb = microbatch_size(s, w);
  out.replica_samples.assign(s.dp, mb);
  out.max_samples = mb;
  out.slow.assign(s.pp, 1.0);
  const bool split = s.batch_split == BatchSplit::Proportional;
  if (!w.mixed() && !split) return out;
  // Rates per (stage, replica) and, for a proportional split, per replica through its pipeline.
  std::vector<double> rate(std::size_t{s.pp} * s.dp);
  for (std::uint32_t p = 0; p < s.pp; ++p)
    for (std::uint32_t d = 0; d < s.dp; ++d) rate[p * s.dp + d] = replica_stage_rate(w, s, d, p);
  if (split) {
    // A replica's pipeline runs at its slowest stage: time per sample max_p F_p / rate(p, d).
    std::vector<double> stage_flops(s.pp, 0);
    for (std::uint32_t c = 0; c < chunks; ++c)
      for (std::uint32_t i = out.chunks[c].first; i < out.chunks[c].last; ++i)
        stage_flops[c % s.pp] += w.model.layers[i].forward_flops + w.model.layers[i].backward_flops;
    std::vector<double> replica_rate(s.dp);
    for (std::uint32_t d = 0; d < s.dp; ++d) {
      double per_sample = 0;
      for (std::uint32_t p = 0; p < s.pp; ++p)
        per_sample = std::max(per_sample, stage_flops[p] / rate[p * s.dp + d]);
      replica_rate[d] = per_sample > 0 ? 1 / per_sample : 1;
    }
    const auto units = static_cast<std::uint32_t>(std::llround(w.global_batch / s.microbatches));
    const auto share = split_units(units, replica_rate);
    for (std::uint32_t d = 0; d < s.dp; ++d) out.replica_samples[d] = share[d];
    out.max_samples = *std::max_element(out.replica_samples.begin(), out.replica_samples.end());
  }
  bool uniform = true;
  for (std::uint32_t d = 0; d < s.dp; ++d) uniform = uniform && out.replica_samples[d] == mb;
  for (std::uint32_t p = 0; p < s.pp; ++p)
    for (std::uint32_t d = 0; d < s.dp; ++d) uniform = uniform && rate[p * s.dp + d] == w.rate_reference();
  if (uniform) return out;
  for (std::uint32_t p = 0; p < s.pp; ++p) {
    double worst = 0;
    for (std::uint32_t d = 0; d < s.dp; ++d)
      worst = std::max(worst, out.replica_samples[d] / rate[p * s.dp + d]);
    out.slow[p] = worst * w.rate_reference() / mb;
  }
  return out;
}

}  // namespace toposweep
