#include "toposweep/workload/compute_bound.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "toposweep/workload/hetero.hpp"
#include "toposweep/workload/memory.hpp"

namespace toposweep {

// The per-pass compute below is the compute task durations plan_iteration gives the layers
// (iteration.cpp, make_3d_programs and flush): per-operator costs where the layer has them,
// else its FLOPs at the device's sustained rate, the recomputed forward counted in the backward.
double compute_lower_bound(const Workload& w, const Strategy& s, LayerCostCache* cache) {
  if (s.per_layer()) return 0;
  const Model& m = w.model;
  const std::uint32_t v = s.schedule == PipelineSchedule::Interleaved ? s.virtual_stages : 1;
  const std::uint32_t chunks = s.pp * v;
  // Unequal devices or microbatches: the plan's own stage split and per-stage slowdown (the
  // bound below holds for any chunk times, so it stays admissible).
  const bool hetero = w.mixed() || s.batch_split != BatchSplit::Even || s.stage_split != StageSplit::Even;
  std::optional<DeviceShares> shares;
  if (hetero) shares = device_shares(w, s);
  const auto ranges = hetero ? shares->chunks : partition_stages(m, chunks);
  const bool transformer = m.transformer && !m.has_tables();
  const bool timed = transformer && w.per_operator;
  std::optional<TransformerCosts> own;
  const TransformerCosts* costs = nullptr;
  if (timed) {
    const LayerCostKey key = layer_cost_key(w, s);
    if (cache) {
      costs = &cache->get(key);
    } else {
      own = transformer_costs(key);
      costs = &*own;
    }
  }
  const double shard = m.transformer ? s.tp : 1;
  const double mb = microbatch_size(s, w);
  std::vector<double> F(chunks, 0), B(chunks, 0);
  for (std::uint32_t c = 0; c < chunks; ++c)
    for (std::uint32_t i = ranges[c].first; i < ranges[c].last; ++i) {
      const Layer& l = m.layers[i];
      const LayerCost* cost = costs ? cost_of_layer(*costs, l) : nullptr;
      const double recomputed = recomputed_forward_flops(w, s, l);
      F[c] += cost ? cost->forward.compute_s : l.forward_flops * mb / shard / w.flops_per_s;
      B[c] += cost ? cost->backward.compute_s : (l.backward_flops + recomputed) * mb / shard / w.flops_per_s;
    }
  if (hetero)
    for (std::uint32_t c = 0; c < chunks; ++c) {
      F[c] *= shares->slow[c % s.pp];
      B[c] *= shares->slow[c % s.pp];
    }
  double bound = 0, before_f = 0, before_b = 0;
  for (std::uint32_t p = 0; p < s.pp; ++p) {
    double busy = 0;
    for (std::uint32_t c = p; c < chunks; c += s.pp) busy += F[c] + B[c];
    bound = std::max(bound, before_f + s.microbatches * busy + before_b);
    before_f += F[p];
    before_b += B[p];
  }
  // Summation order differs from the simulator's by a few ulps: stay safely below it.
  return bound * (1 - 1e-12);
}

}  // namespace toposweep
