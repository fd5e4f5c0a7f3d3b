#include "toposweep/workload/enumerate.hpp"

#include <algorithm>
#include <cmath>

#include "toposweep/workload/block.hpp"
#include "toposweep/workload/memory.hpp"

namespace toposweep {
namespace {

// Each stage's aggregate (memory.hpp) for a fixed (tp, pp, sp) of the even stage split.
std::vector<StageAggregate> aggregate_stages(const Workload& w, std::uint32_t tp, std::uint32_t pp, bool sp) {
  const auto ranges = partition_stages(w.model, pp);
  std::vector<StageAggregate> out;
  out.reserve(pp);
  for (std::uint32_t p = 0; p < pp; ++p)
    out.push_back(stage_aggregate(w, ranges[p], tp, sp, pp, p + 1 == pp));
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

// The values of a knob for a shape: the space's list where the knob matters, else only its
// canonical value (the knob changes nothing there, whatever the list says).
template <class T>
std::vector<T> knob(const std::vector<T>& values, bool matters, T canonical) {
  return matters ? values : std::vector<T>{canonical};
}

}  // namespace

StrategyCount for_each_strategy(const Workload& w, std::uint32_t gpus, const StrategySpace& space,
                                const StrategyVisitor& visit) {
  StrategyCount count;
  const Model& m = w.model;
  const double B = w.bytes_per_element;
  // Mixed devices: the roomiest device prunes (what does not fit there fits nowhere); the plan
  // checks every GPU against its own device (a heuristic with stage_split = speed, whose
  // stages are not the even ones counted here).
  double capacity = w.device.hbm_bytes - w.device.memory_reserve_bytes;
  for (const Device& d : w.kinds) capacity = std::max(capacity, d.hbm_bytes - d.memory_reserve_bytes);
  const double tables = table_bytes_per_gpu(w, gpus);
  const bool has_sfb_layers =
      std::any_of(m.layers.begin(), m.layers.end(), [](const Layer& l) { return l.sfb_elements > 0; });
  std::uint32_t max_tp = m.transformer ? m.transformer->heads : 1;
  if (space.max_tp > 0) max_tp = std::min(max_tp, space.max_tp);
  if (space.gpus_per_server > 0 && !space.tp_across_servers) max_tp = std::min(max_tp, space.gpus_per_server);
  const std::uint32_t max_pp = m.has_tables() ? 1 : m.pipeline_units();
  if (w.global_batch != std::floor(w.global_batch) || w.global_batch < 1) return count;
  const auto global_batch = static_cast<std::uint64_t>(w.global_batch);

  Strategy s;
  s.bucket_bytes = space.bucket_bytes;
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
      const auto sps = knob(space.sequence_parallel, tp > 1, false);
      const auto tp_overlaps = knob(space.tp_overlap, tp > 1, TpOverlap::None);
      const auto zeros = knob(space.zero, dp > 1, std::uint8_t{0});
      const auto dp_overlaps = knob(space.dp_overlap, dp > 1, true);
      // Mixed servers: the batch split matters with several replicas, the stage split with
      // several stages; compression needs replicas and layers that can send factors.
      // (batch split, stage split, compression) in that order, compression last; SFB only at ZeRO 0.
      struct Extra {
        BatchSplit batch_split;
        StageSplit stage_split;
        Compression compression;
      };
      std::vector<Extra> extras, extras_zero0;
      for (BatchSplit bs : knob(space.batch_split, dp > 1 && w.mixed() && !m.has_tables(), BatchSplit::Even))
        for (StageSplit ss : knob(space.stage_split, pp > 1 && w.mixed(), StageSplit::Even)) {
          extras.push_back({bs, ss, Compression::None});
          for (Compression cm : knob(space.compression, dp > 1 && has_sfb_layers, Compression::None))
            extras_zero0.push_back({bs, ss, cm});
        }
      const auto schedules = knob(space.schedules, pp > 1, PipelineSchedule::OneFOneB);
      const auto stages_plain =
          aggregate_stages(w, static_cast<std::uint32_t>(tp), static_cast<std::uint32_t>(pp), false);
      const auto stages_sp = contains(sps, true) ? aggregate_stages(w, static_cast<std::uint32_t>(tp),
                                                                    static_cast<std::uint32_t>(pp), true)
                                                 : std::vector<StageAggregate>{};
      s.dp = static_cast<std::uint32_t>(dp);
      s.tp = static_cast<std::uint32_t>(tp);
      s.pp = static_cast<std::uint32_t>(pp);
      const std::uint64_t replica = global_batch / dp;
      for (std::uint64_t mu : divisors(replica)) {
        if (space.max_microbatches > 0 && mu > space.max_microbatches) break;
        if (!space.microbatch_size.empty() &&
            !contains(space.microbatch_size, static_cast<std::uint32_t>(replica / mu)))
          continue;
        s.microbatches = static_cast<std::uint32_t>(mu);
        const double mb = static_cast<double>(replica / mu);
        for (PipelineSchedule schedule : schedules) {
          std::vector<std::uint32_t> chunk_counts{1};
          if (schedule == PipelineSchedule::Interleaved) {
            chunk_counts.clear();
            if (mu % pp != 0) continue;
            for (std::uint32_t v = 2; pp * v <= m.pipeline_units(); ++v)
              if (space.virtual_stages.empty() || contains(space.virtual_stages, v))
                chunk_counts.push_back(v);
          }
          s.schedule = schedule;
          for (std::uint32_t v : chunk_counts) {
            s.virtual_stages = v;
            for (Recompute recompute : space.recompute) {
              if (recompute == Recompute::Selective && !m.transformer) continue;
              s.recompute = recompute;
              for (std::uint8_t zero : zeros) {
                s.zero = zero;
                const double param_bytes =
                    model_state_bytes_per_param(w, zero, static_cast<double>(dp)).total();
                const bool gathers = zero >= 3 && dp > 1;
                for (bool sp : sps) {
                  s.sequence_parallel = sp;
                  double worst = 0;
                  bool feasible = false;
                  if (v > 1) {
                    // Chunks interleave over the devices: the exact per-device accounting (of the
                    // even stage split, as for every candidate of this shape).
                    s.stage_split = StageSplit::Even;
                    const MemoryBreakdown mem = memory_per_gpu(w, s);
                    worst = mem.total();
                    feasible = w.mixed() ? mem.total() - mem.reserve <= capacity : fits_in_memory(w, mem);
                  } else {
                    const auto& stages = sp ? stages_sp : stages_plain;
                    for (std::uint64_t p = 0; p < pp; ++p) {
                      const StageAggregate& a = stages[p];
                      const double in_flight = microbatches_in_flight(s, static_cast<std::uint32_t>(p));
                      const double act = a.act.kept(recompute) * in_flight +
                                         (recompute == Recompute::Full ? a.working_set : 0);
                      const double gathered = gathers ? a.largest_layer * B : 0;
                      worst = std::max(worst, a.params * param_bytes + mb * act + gathered);
                    }
                    worst += tables;
                    feasible = worst <= capacity;
                    worst += w.device.memory_reserve_bytes;
                  }
                  for (TpOverlap tpo : tp_overlaps) {
                    s.tp_overlap = tpo;
                    for (bool dpo : dp_overlaps) {
                      s.dp_overlap = dpo;
                      for (const Extra& x : zero == 0 ? extras_zero0 : extras) {
                        s.batch_split = x.batch_split;
                        s.stage_split = x.stage_split;
                        s.compression = x.compression;
                        ++count.checked;
                        ++(feasible ? count.feasible : count.infeasible);
                        if (visit) visit(s, worst, feasible);
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  s.virtual_stages = 1;
  s.batch_split = BatchSplit::Even;
  s.stage_split = StageSplit::Even;
  s.compression = Compression::None;
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
