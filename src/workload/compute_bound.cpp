#include "toposweep/workload/compute_bound.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "toposweep/workload/block_recompute.hpp"
#include "toposweep/workload/hetero.hpp"
#include "toposweep/workload/memory.hpp"
#include "toposweep/workload/split.hpp"

namespace toposweep {

// The per-pass compute below is the compute task durations plan_iteration gives the layers
// (iteration.cpp, make_3d_programs and flush): per-operator costs where the layer has them,
// else its FLOPs at the device's sustained rate, the recomputed forward counted in the backward.
ChunkTimes chunk_compute_times(const Workload& w, const Strategy& s, LayerCostCache* cache) {
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
  std::optional<TransformerCosts> own, own_kept;
  const TransformerCosts* costs = nullptr;
  const TransformerCosts* kept_costs = nullptr;  // block recomputation's skipped blocks
  const bool partial = partial_recompute(s);
  std::optional<Strategy> kept_storage;  // the skipped blocks' strategy, only with block recomputation
  if (partial) kept_storage = without_recompute(s);
  const Strategy& kept = partial ? *kept_storage : s;
  if (timed) {
    const LayerCostKey key = layer_cost_key(w, s);
    // A copy of the skipped blocks' costs: the next lookup may move or replace the cache's entries.
    if (partial) {
      const LayerCostKey skipped = skipped_blocks_key(key);
      own_kept = cache ? cache->get(skipped) : transformer_costs(skipped);
    }
    if (cache) {
      costs = &cache->get(key);
    } else {
      own = transformer_costs(key);
      costs = &*own;
    }
    kept_costs = partial ? &*own_kept : costs;
  }
  const double shard = compute_shard(m, s);
  const double mb = microbatch_size(s, w);
  ChunkTimes t;
  t.forward.assign(chunks, 0);
  t.backward.assign(chunks, 0);
  for (std::uint32_t c = 0; c < chunks; ++c) {
    ChunkRecompute blocks(s);
    for (std::uint32_t i = ranges[c].first; i < ranges[c].last; ++i) {
      const Layer& l = m.layers[i];
      const bool skips = blocks.skips(l);
      const TransformerCosts* layer_costs = skips ? kept_costs : costs;
      const LayerCost* cost = layer_costs ? cost_of_layer(*layer_costs, l) : nullptr;
      const double recomputed = recomputed_forward_flops(w, skips ? kept : s, l);
      t.forward[c] += cost ? cost->forward.compute_s : l.forward_flops * mb / shard / w.flops_per_s;
      t.backward[c] +=
          cost ? cost->backward.compute_s : (l.backward_flops + recomputed) * mb / shard / w.flops_per_s;
    }
  }
  if (hetero)
    for (std::uint32_t c = 0; c < chunks; ++c) {
      t.forward[c] *= shares->slow[c % s.pp];
      t.backward[c] *= shares->slow[c % s.pp];
    }
  return t;
}

double pipeline_lower_bound(const Strategy& s, const ChunkTimes& t) {
  const auto chunks = static_cast<std::uint32_t>(t.forward.size());
  const auto send = [](const std::vector<double>& v, std::uint32_t c) { return v.empty() ? 0.0 : v[c]; };
  double bound = 0, before_f = 0, before_b = 0;
  for (std::uint32_t p = 0; p < s.pp; ++p) {
    // The device's passes back to back (with blocking sends, each pass's send too).
    double busy = 0;
    for (std::uint32_t c = p; c < chunks; c += s.pp) {
      busy += t.forward[c] + t.backward[c];
      if (t.blocking_sends) busy += send(t.send_forward, c) + send(t.send_backward, c);
    }
    // After the last pass (chunk p's backward of the last microbatch): its send to chunk p - 1
    // unless the pass already waited for it, then the backward through the chunks before p.
    const double tail = before_b + (p > 0 && !t.blocking_sends ? send(t.send_backward, p) : 0.0);
    bound = std::max(bound, before_f + s.microbatches * busy + tail);
    before_f += t.forward[p] + send(t.send_forward, p);
    before_b += t.backward[p] + (p > 0 ? send(t.send_backward, p) : 0.0);
  }
  return bound;
}

double compute_lower_bound(const Workload& w, const Strategy& s, LayerCostCache* cache) {
  if (s.per_layer()) return 0;
  // Summation order differs from the simulator's by a few ulps: stay safely below it.
  return pipeline_lower_bound(s, chunk_compute_times(w, s, cache)) * (1 - 1e-12);
}

}  // namespace toposweep
