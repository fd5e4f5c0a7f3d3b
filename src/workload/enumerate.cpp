#include "toposweep/workload/enumerate.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "toposweep/workload/block.hpp"
#include "toposweep/workload/memory.hpp"
#include "toposweep/workload/strategy_knobs.hpp"

namespace toposweep {
namespace {

// Each stage's aggregate (memory.hpp) for a fixed (activation split, pp) of the even stage split.
std::vector<StageAggregate> aggregate_stages(const Workload& w, ActivationSplit split, std::uint32_t pp) {
  const auto ranges = partition_stages(w.model, pp);
  std::vector<StageAggregate> out;
  out.reserve(pp);
  for (std::uint32_t p = 0; p < pp; ++p) out.push_back(stage_aggregate(w, ranges[p], split, pp, p + 1 == pp));
  return out;
}

double table_bytes_per_gpu(const Workload& w, std::uint32_t gpus) {
  if (!w.model.has_tables()) return 0;
  Strategy round_robin;
  const auto owners = table_owners(round_robin, w.model.tables.size(), gpus);
  std::vector<double> per_rank(gpus, 0);
  for (std::size_t t = 0; t < w.model.tables.size(); ++t)
    per_rank[owners[t]] += w.model.tables[t].parameters();
  return *std::max_element(per_rank.begin(), per_rank.end()) * w.table_bytes_per_element;
}

}  // namespace

KnobLists default_knob_lists() {
  KnobLists lists;
  for (const StrategyKnob& k : kStrategyKnobs)
    if (!k.search_key.empty()) lists[knob_index(k)] = knob_search_default(k);
  for (const KnobMember m : {KnobMember(&StrategyKnobs::batch_split), KnobMember(&StrategyKnobs::stage_split),
                             KnobMember(&StrategyKnobs::compression)}) {
    const StrategyKnob& k = *find_strategy_knob(m);
    lists[knob_index(k)] = {knob_code(k, StrategyKnobs{})};
  }
  return lists;
}

std::vector<std::uint64_t> divisors(std::uint64_t n) {
  std::vector<std::uint64_t> low, high;
  for (std::uint64_t d = 1; d * d <= n; ++d)
    if (n % d == 0) {
      low.push_back(d);
      if (d != n / d) high.push_back(n / d);
    }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

namespace {

template <class T>
bool contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

const StrategyKnob& row(KnobMember member) {
  return *find_strategy_knob(member);
}

// The values of a knob for a shape, as codes (knob_code): the space's list where the knob matters
// (its row's scope, and `also`: what the model adds), else only its default (the knob changes
// nothing there, whatever the list says).
template <class T>
std::vector<std::uint32_t> knob_values(const StrategyKnob& k, const std::vector<T>& values, std::uint64_t dp,
                                       std::uint64_t tp, std::uint64_t pp, bool also = true) {
  const bool matters =
      also &&
      (k.scope == KnobScope::Always || (k.scope == KnobScope::DataParallel && dp > 1) ||
       (k.scope == KnobScope::TensorParallel && tp > 1) || (k.scope == KnobScope::Pipeline && pp > 1));
  std::vector<std::uint32_t> out;
  if (!matters) {
    out.push_back(knob_code(k, StrategyKnobs{}));
    return out;
  }
  for (const T& v : values) out.push_back(static_cast<std::uint32_t>(v));
  return out;
}

// The memory of a fixed (tp, pp) shape's strategies: the stage aggregates of each activation split
// the strategies use (computed when first needed), the mixed devices' roomiest capacity and the
// tables' bytes per GPU.
struct ShapeMemory {
  std::vector<std::pair<ActivationSplit, std::vector<StageAggregate>>> by_split;
  double capacity = 0, tables = 0;
  const std::vector<StageAggregate>& stages(const Workload& w, const Strategy& s) {
    const ActivationSplit split = activation_split(s);
    for (const auto& [key, aggregates] : by_split)
      if (key == split) return aggregates;
    by_split.emplace_back(split, aggregate_stages(w, split, s.pp));
    return by_split.back().second;
  }
};

struct Feasibility {
  double worst = 0;  // memory per GPU, bytes
  bool feasible = false;
};

// Whether `s` fits: what depends on the knobs up to sequence parallelism (none after it). With
// interleaved chunks the exact per-device accounting, else the per-stage aggregates.
Feasibility feasibility(const Workload& w, Strategy& s, ShapeMemory& shape) {
  const double B = w.bytes_per_element;
  const std::uint64_t dp = s.dp, pp = s.pp;
  const std::uint8_t zero = s.zero;
  const Recompute recompute = s.recompute;
  const double mb = static_cast<double>(static_cast<std::uint64_t>(w.global_batch) / dp / s.microbatches);
  const double param_bytes = model_state_bytes_per_param(w, zero, static_cast<double>(dp)).total();
  const bool gathers = zero >= 3 && dp > 1;
  const double capacity = shape.capacity, tables = shape.tables;
  double worst = 0;
  bool feasible = false;
  if (s.virtual_stages > 1) {
    // Chunks interleave over the devices: the exact per-device accounting (of the
    // even stage split, as for every candidate of this shape).
    s.stage_split = StageSplit::Even;
    const MemoryBreakdown mem = memory_per_gpu(w, s);
    worst = mem.total();
    feasible = w.mixed() ? mem.total() - mem.reserve <= capacity : fits_in_memory(w, mem);
  } else {
    const auto& stages = shape.stages(w, s);
    for (std::uint64_t p = 0; p < pp; ++p) {
      const StageAggregate& a = stages[p];
      const double in_flight = microbatches_in_flight(s, static_cast<std::uint32_t>(p));
      const double act =
          a.act.kept(recompute) * in_flight + (recompute == Recompute::Full ? a.working_set : 0);
      const double gathered = gathers ? a.largest_layer * B : 0;
      worst = std::max(worst, a.params * param_bytes + mb * act + gathered);
    }
    worst += tables;
    feasible = worst <= capacity;
    worst += w.device.memory_reserve_bytes;
  }
  return {worst, feasible};
}

// One factor of the product: a knob and its values given the knobs before it (set in the
// strategy), outermost first.
struct Level {
  const StrategyKnob* knob;
  std::function<const std::vector<std::uint32_t>&(const Strategy&)> values;
};

}  // namespace

StrategyCount for_each_strategy(const Workload& w, std::uint32_t gpus, const StrategySpace& space,
                                const StrategyVisitor& visit) {
  StrategyCount count;
  const Model& m = w.model;
  // Mixed devices: the roomiest device prunes (what does not fit there fits nowhere); the plan
  // checks every GPU against its own device (a heuristic with stage_split = speed, whose
  // stages are not the even ones counted here).
  ShapeMemory shape;
  shape.capacity = w.device.hbm_bytes - w.device.memory_reserve_bytes;
  for (const Device& d : w.kinds)
    shape.capacity = std::max(shape.capacity, d.hbm_bytes - d.memory_reserve_bytes);
  shape.tables = table_bytes_per_gpu(w, gpus);
  const bool has_sfb_layers =
      std::any_of(m.layers.begin(), m.layers.end(), [](const Layer& l) { return l.sfb_elements > 0; });
  std::uint32_t max_tp = m.transformer ? m.transformer->heads : 1;
  if (space.max_tp > 0) max_tp = std::min(max_tp, space.max_tp);
  if (space.gpus_per_server > 0 && !space.tp_across_servers) max_tp = std::min(max_tp, space.gpus_per_server);
  const std::uint32_t max_pp = m.has_tables() ? 1 : m.pipeline_units();
  if (w.global_batch != std::floor(w.global_batch) || w.global_batch < 1) return count;
  const auto global_batch = static_cast<std::uint64_t>(w.global_batch);

  const StrategyKnob& microbatches_row = row(&StrategyKnobs::microbatches);
  const StrategyKnob& chunks_row = row(&StrategyKnobs::virtual_stages);
  const StrategyKnob& recompute_row = row(&StrategyKnobs::recompute);
  const StrategyKnob& batch_split = row(&StrategyKnobs::batch_split);
  const StrategyKnob& stage_split = row(&StrategyKnobs::stage_split);
  const StrategyKnob& compression = row(&StrategyKnobs::compression);
  // Selective recomputation recomputes attention: only transformers have it.
  std::vector<std::uint32_t> recomputes;
  for (std::uint32_t r : space.codes(recompute_row))
    if (static_cast<Recompute>(r) != Recompute::Selective || m.transformer) recomputes.push_back(r);

  Strategy s;
  s.bucket_bytes = space.bucket_bytes;
  Feasibility fit;
  // The visiting order: kEnumerationOrder (microbatches; schedule and chunks; recompute; ZeRO
  // stage; sequence parallelism, after which the memory is known; TP overlap; DP overlap; batch
  // split, stage split and compression, SFB only at ZeRO 0).
  constexpr std::size_t level_count = std::size(kEnumerationOrder);
  std::vector<Level> levels(level_count);
  std::size_t memory_level = 0;  // the level after which the memory is computed
  for (std::size_t i = 0; i < level_count; ++i)
    if (kEnumerationOrder[i].memory) memory_level = i;
  const auto product = [&](const auto& self, std::size_t i) -> void {
    if (i == levels.size()) {
      ++count.checked;
      ++(fit.feasible ? count.feasible : count.infeasible);
      if (visit) visit(s, fit.worst, fit.feasible);
      return;
    }
    for (std::uint32_t v : levels[i].values(s)) {
      set_knob(*levels[i].knob, s, v);
      if (i == memory_level) fit = feasibility(w, s, shape);
      self(self, i + 1);
    }
  };

  for (std::uint64_t tp : divisors(gpus)) {
    if (tp > max_tp) break;
    if (m.transformer && m.transformer->heads % tp != 0) continue;
    if (!tp_divides_kv_heads(m, static_cast<std::uint32_t>(tp))) continue;
    if (!space.tp.empty() && !contains(space.tp, static_cast<std::uint32_t>(tp))) continue;
    for (std::uint64_t pp : divisors(gpus / tp)) {
      if (pp > max_pp) break;
      if (!space.pp.empty() && !contains(space.pp, static_cast<std::uint32_t>(pp))) continue;
      const std::uint64_t dp = gpus / tp / pp;
      if (global_batch % dp != 0) continue;
      const std::uint64_t replica = global_batch / dp;
      std::vector<std::uint32_t> microbatches;
      for (std::uint64_t mu : divisors(replica)) {
        if (space.max_microbatches > 0 && mu > space.max_microbatches) break;
        if (!space.microbatch_size.empty() &&
            !contains(space.microbatch_size, static_cast<std::uint32_t>(replica / mu)))
          continue;
        microbatches.push_back(static_cast<std::uint32_t>(mu));
      }
      // Each level's values: the space's list where the knob matters (its row's scope). Mixed
      // servers: the batch split matters with several replicas, the stage split with several
      // stages; compression needs replicas and layers that can send factors, and ZeRO 0.
      std::array<std::vector<std::uint32_t>, level_count> values;
      std::vector<std::uint32_t> no_compression;
      // Model chunks per device: interleaving only when pp divides the microbatch count.
      std::vector<std::uint32_t> chunks;
      const std::vector<std::uint32_t> one_chunk{1};
      const auto fixed = [](const std::vector<std::uint32_t>& list) {
        return [&list](const Strategy&) -> const std::vector<std::uint32_t>& { return list; };
      };
      for (std::size_t i = 0; i < level_count; ++i) {
        const StrategyKnob& k = row(kEnumerationOrder[i].member);
        levels[i].knob = &k;
        if (&k == &microbatches_row) {
          levels[i].values = fixed(microbatches);
        } else if (&k == &chunks_row) {
          levels[i].values = [&](const Strategy& at) -> const std::vector<std::uint32_t>& {
            if (at.schedule != PipelineSchedule::Interleaved) return one_chunk;
            chunks.clear();
            if (at.microbatches % pp != 0) return chunks;
            for (std::uint32_t v = 2; pp * v <= m.pipeline_units(); ++v)
              if (space.virtual_stages.empty() || contains(space.virtual_stages, v)) chunks.push_back(v);
            return chunks;
          };
        } else if (&k == &recompute_row) {
          values[i] = knob_values(k, recomputes, dp, tp, pp);
          levels[i].values = fixed(values[i]);
        } else if (&k == &compression) {
          values[i] = knob_values(k, space.codes(k), dp, tp, pp, has_sfb_layers);
          no_compression = knob_values(k, space.codes(k), dp, tp, pp, false);
          levels[i].values = [&values, &no_compression,
                              i](const Strategy& at) -> const std::vector<std::uint32_t>& {
            return at.zero == 0 ? values[i] : no_compression;
          };
        } else {
          const bool also = &k == &batch_split   ? w.mixed() && !m.has_tables()
                            : &k == &stage_split ? w.mixed()
                                                 : true;
          values[i] = knob_values(k, space.codes(k), dp, tp, pp, also);
          levels[i].values = fixed(values[i]);
        }
      }
      shape.by_split.clear();
      s.dp = static_cast<std::uint32_t>(dp);
      s.tp = static_cast<std::uint32_t>(tp);
      s.pp = static_cast<std::uint32_t>(pp);
      product(product, 0);
    }
  }
  return count;
}

std::vector<Strategy> feasible_strategies(const Workload& w, std::uint32_t gpus, const StrategySpace& space,
                                          StrategyCount* counts) {
  std::vector<Strategy> out;
  const StrategyCount c = for_each_strategy(w, gpus, space, [&](const Strategy& s, double, bool feasible) {
    if (feasible) out.push_back(s);
  });
  if (counts) *counts = c;
  return out;
}

}  // namespace toposweep
