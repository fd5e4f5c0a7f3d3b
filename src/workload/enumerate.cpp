#include "toposweep/workload/enumerate.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <type_traits>
#include <utility>

#include "toposweep/workload/block.hpp"
#include "toposweep/workload/memory.hpp"
#include "toposweep/workload/split.hpp"
#include "toposweep/workload/strategy_knobs.hpp"

namespace toposweep {
namespace {

// Each stage's aggregate (memory.hpp) for a fixed (activation split, pp) of the even stage split
// (or, `stage_split` = ends, the even split with the ends counted), selective recomputation
// recomputing `modules`, block recomputation the blocks `recomputed`.
std::vector<StageAggregate> aggregate_stages(const Workload& w, ActivationSplit split, std::uint32_t pp,
                                             RecomputeModules modules, StageSplit stage_split,
                                             RecomputedBlocks recomputed) {
  const auto ranges = partition_stages(w.model, pp, stage_split);
  std::vector<StageAggregate> out;
  out.reserve(pp);
  for (std::uint32_t p = 0; p < pp; ++p)
    out.push_back(stage_aggregate(w, ranges[p], split, pp, p + 1 == pp, {}, modules, recomputed));
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

// The stage splits a shape tries, of `codes` (knob_values): speed only on mixed servers (on equal
// devices it is the even split), ends only for transformers (elsewhere it is the even split); the
// default when none is left.
std::vector<std::uint32_t> stage_split_values(std::vector<std::uint32_t> codes, const Workload& w,
                                              const StrategyKnob& k) {
  std::erase_if(codes, [&](std::uint32_t c) {
    const auto split = static_cast<StageSplit>(c);
    return (split == StageSplit::Speed && !w.mixed()) || (split == StageSplit::Ends && !w.model.transformer);
  });
  if (codes.empty()) codes.push_back(knob_code(k, StrategyKnobs{}));
  return codes;
}

// The stage split whose stages the enumeration counts memory on: ends as it is, else the even
// one (speed: a heuristic on mixed servers, see for_each_strategy).
StageSplit counted_split(const Strategy& s) {
  return s.stage_split == StageSplit::Ends ? StageSplit::Ends : StageSplit::Even;
}

// The memory of a fixed (tp, pp) shape's strategies: the stage aggregates of each activation split
// and counted stage split the strategies use, and of the blocks block recomputation recomputes
// (computed when first needed; the recompute modules and layers are the space's, the same for every
// strategy visited), the mixed devices' roomiest capacity and the tables' bytes per GPU.
struct ShapeMemory {
  using Key = std::tuple<ActivationSplit, StageSplit, RecomputedBlocks>;
  std::vector<std::pair<Key, std::vector<StageAggregate>>> by_split;
  double capacity = 0, tables = 0;
  const std::vector<StageAggregate>& stages(const Workload& w, const Strategy& s) {
    const Key key{activation_split(s), counted_split(s), recomputed_blocks(s)};
    for (const auto& [k, aggregates] : by_split)
      if (k == key) return aggregates;
    by_split.emplace_back(key, aggregate_stages(w, std::get<0>(key), s.pp, s.recompute_modules,
                                                std::get<1>(key), std::get<2>(key)));
    return by_split.back().second;
  }
};

struct Feasibility {
  double worst = 0;  // memory per GPU, bytes
  bool feasible = false;
};

// Whether `s` fits: what depends on the knobs up to sequence parallelism (none after it). With
// interleaved chunks the exact per-device accounting, else the per-stage aggregates.
Feasibility feasibility(const Workload& w, const Strategy& s, ShapeMemory& shape) {
  const double B = w.bytes_per_element;
  // ZeRO shards over the ranks holding the same weights: dp x cp.
  const std::uint64_t dp = s.dp, replicas = std::uint64_t{s.dp} * s.cp, pp = s.pp;
  const std::uint8_t zero = s.zero;
  const Recompute recompute = s.recompute;
  const double mb = static_cast<double>(static_cast<std::uint64_t>(w.global_batch) / dp / s.microbatches);
  const double param_bytes = model_state_bytes_per_param(w, zero, static_cast<double>(replicas)).total();
  const double expert_bytes =  // the routed experts' states, over the dp x cp / ep ranks sharing them
      model_state_bytes_per_param(w, zero, static_cast<double>(s.expert_replicas())).total();
  const bool gathers = zero >= 3 && replicas > 1;
  const double capacity = shape.capacity, tables = shape.tables;
  double worst = 0;
  bool feasible = false;
  if (s.virtual_stages > 1) {
    // Chunks interleave over the devices: the exact per-device accounting of memory_per_gpu (of
    // the counted stage split, counted_split), from the shape's aggregates.
    Strategy even = s;
    even.stage_split = counted_split(s);
    const auto& stages = shape.stages(w, even);
    MemoryBreakdown mem;
    for (std::uint32_t p = 0; p < s.pp; ++p) {
      const MemoryBreakdown b = stage_memory(w, even, stages[p], p);
      if (p == 0 || b.total() > mem.total()) mem = b;
    }
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
      worst = std::max(worst, a.params * param_bytes + a.expert_params * expert_bytes + mb * act + gathered);
    }
    worst += tables;
    feasible = worst <= capacity;
    worst += w.device.memory_reserve_bytes;
  }
  return {worst, feasible};
}

template <class M>
using MemberType = std::remove_cvref_t<decltype(std::declval<StrategyKnobs&>().*std::declval<M>())>;

// Level I's knob set from a code with its member's own type: a plain function per level, chosen
// at compile time (no variant dispatch in the innermost loops).
template <std::size_t I>
void set_level(StrategyKnobs& s, std::uint32_t code) {
  constexpr KnobMember member = kEnumerationOrder[I].member;
  constexpr auto m = std::get<member.index()>(member);
  using T = MemberType<decltype(m)>;
  if constexpr (std::is_same_v<T, bool>)
    s.*m = code != 0;
  else
    s.*m = static_cast<T>(code);
}
using LevelSetter = void (*)(StrategyKnobs&, std::uint32_t);
template <std::size_t... I>
constexpr std::array<LevelSetter, sizeof...(I)> level_setters(std::index_sequence<I...>) {
  return {&set_level<I>...};
}
constexpr auto kLevelSetters = level_setters(std::make_index_sequence<std::size(kEnumerationOrder)>{});

// One factor of the product: a knob and its values, outermost first. Most levels have a fixed list
// per shape; the chunk count depends on the schedule and microbatches, compression on the ZeRO
// stage, the expert tensor parallelism on the sequence parallelism and the ep degree (knobs of
// earlier levels, already set in the strategy).
struct Level {
  enum class Values : std::uint8_t { Fixed, Chunks, Compression, ExpertTensor } kind = Values::Fixed;
  LevelSetter set = nullptr;
  const std::vector<std::uint32_t>* fixed = nullptr;
};

}  // namespace

Strategy StrategySpace::fixed(Strategy s) const {
  s.bucket_bytes = bucket_bytes;
  const std::vector<std::uint32_t>& modules = codes(row(&StrategyKnobs::recompute_modules));
  if (!modules.empty()) s.recompute_modules = static_cast<RecomputeModules>(modules.front());
  const std::vector<std::uint32_t>& recompute_layers = codes(row(&StrategyKnobs::recompute_layers));
  if (!recompute_layers.empty()) s.recompute_layers = recompute_layers.front();
  return s;
}

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

  Strategy s = space.fixed(Strategy{});
  Feasibility fit;
  // The visiting order: kEnumerationOrder (microbatches; schedule and chunks; recompute; ZeRO
  // stage; sequence parallelism, after which the memory is known; TP overlap; DP overlap; batch
  // split, stage split and compression, SFB only at ZeRO 0).
  constexpr std::size_t level_count = std::size(kEnumerationOrder);
  std::array<Level, level_count> levels;
  for (std::size_t i = 0; i < level_count; ++i) levels[i].set = kLevelSetters[i];
  // Per shape: the levels with a choice (a dynamic list or more than one value), in order; the
  // others are set once. `check_at`: the memory is computed after this many of them are set (the
  // last one whose knob the memory depends on).
  std::vector<std::size_t> active;
  std::size_t check_at = 0;
  std::vector<std::uint32_t> chunks;  // the chunk counts of the current strategy
  const std::vector<std::uint32_t> one_chunk{1};
  std::uint64_t dp = 0, pp = 0;
  std::array<std::vector<std::uint32_t>, level_count> values;
  std::vector<std::uint32_t> no_compression, etp_values;
  const auto level_values = [&](std::size_t i) -> const std::vector<std::uint32_t>& {
    const Level& level = levels[i];
    if (level.kind == Level::Values::Fixed) return *level.fixed;
    if (level.kind == Level::Values::Compression) return s.zero == 0 ? values[i] : no_compression;
    if (level.kind == Level::Values::ExpertTensor) {
      // Unfolded (0) where ep divides dp x cp; folded (e < tp, a divisor of tp: 1 runs whole
      // experts) with sequence parallelism, ep dividing tp / e x dp x cp.
      etp_values.clear();
      for (std::uint32_t code : values[i])
        if (code == 0 ? (s.dp * s.cp) % s.ep == 0
                      : s.sequence_parallel && (s.tp / code * s.dp * s.cp) % s.ep == 0)
          etp_values.push_back(code);
      return etp_values;
    }
    // Model chunks per device: interleaving only when pp divides the microbatch count.
    if (s.schedule != PipelineSchedule::Interleaved) return one_chunk;
    chunks.clear();
    if (s.microbatches % pp != 0) return chunks;
    for (std::uint32_t v = 2; pp * v <= m.pipeline_units(); ++v)
      if (space.virtual_stages.empty() || contains(space.virtual_stages, v)) chunks.push_back(v);
    return chunks;
  };
  const auto product = [&](const auto& self, std::size_t depth) -> void {
    if (depth == check_at) fit = feasibility(w, s, shape);
    if (depth == active.size()) {
      ++count.checked;
      ++(fit.feasible ? count.feasible : count.infeasible);
      if (visit) visit(s, fit.worst, fit.feasible);
      return;
    }
    const std::size_t i = active[depth];
    const LevelSetter set = levels[i].set;
    for (std::uint32_t v : level_values(i)) {
      set(s, v);
      self(self, depth + 1);
    }
  };

  const StrategyKnob& cp_row = row(&StrategyKnobs::cp);
  const StrategyKnob& ep_row = row(&StrategyKnobs::ep);
  const StrategyKnob& etp_row = row(&StrategyKnobs::etp);
  const bool moe = m.transformer && m.transformer->moe.has_value();
  // Whether a shape of this tp folds the experts (strategy.etp = e < tp, a divisor of tp): a MoE
  // model, tp > 1, such an e listed.
  const auto folding = [](std::uint64_t tp, std::uint32_t code) {
    return code > 0 && code < tp && tp % code == 0;
  };
  const auto folds = [&](std::uint64_t tp) {
    if (!moe || tp <= 1) return false;
    for (std::uint32_t code : space.codes(etp_row))
      if (folding(tp, code)) return true;
    return false;
  };
  for (std::uint64_t tp : divisors(gpus)) {
    if (tp > max_tp) break;
    if (m.transformer && m.transformer->heads % tp != 0) continue;
    if (!tp_divides_kv_heads(m, static_cast<std::uint32_t>(tp))) continue;
    if (!space.tp.empty() && !contains(space.tp, static_cast<std::uint32_t>(tp))) continue;
    for (std::uint64_t cp : divisors(gpus / tp)) {
      if (!contains(space.codes(cp_row), static_cast<std::uint32_t>(cp))) continue;
      if (!context_parallel_problem(w, static_cast<std::uint32_t>(cp)).empty()) continue;
      for (std::uint64_t pp_ : divisors(gpus / tp / cp)) {
        pp = pp_;
        if (pp > max_pp) break;
        if (!space.pp.empty() && !contains(space.pp, static_cast<std::uint32_t>(pp))) continue;
        dp = gpus / tp / cp / pp;
        if (global_batch % dp != 0) continue;
        const std::uint64_t replica = global_batch / dp;
        // The knobs of the data-parallel scope matter wherever several ranks share the weights.
        const std::uint64_t replicas = dp * cp;
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
        for (std::size_t i = 0; i < level_count; ++i) {
          const StrategyKnob& k = row(kEnumerationOrder[i].member);
          Level& level = levels[i];
          level.kind = Level::Values::Fixed;
          level.fixed = &values[i];
          if (&k == &microbatches_row) {
            values[i] = microbatches;
          } else if (&k == &chunks_row) {
            level.kind = Level::Values::Chunks;
          } else if (&k == &ep_row) {  // the listed degrees that divide dp x cp and the experts
            // (folded: tp x dp x cp, with whole experts listed; the etp level keeps the valid pairs)
            const std::uint32_t fold = folds(tp) ? static_cast<std::uint32_t>(tp) : 1;
            values[i].clear();
            for (std::uint32_t ep : knob_values(k, space.codes(k), replicas, tp, pp))
              if (expert_parallel_problem(m, ep, replicas, fold).empty()) values[i].push_back(ep);
          } else if (&k == &etp_row) {  // as listed (tp as 0), where the experts can fold
            values[i].clear();
            if (folds(tp)) {
              level.kind = Level::Values::ExpertTensor;
              const auto& codes = space.codes(k);
              if (contains(codes, std::uint32_t{0}) || contains(codes, static_cast<std::uint32_t>(tp)))
                values[i].push_back(0);
              for (std::uint32_t code : codes)
                if (folding(tp, code)) values[i].push_back(code);
            } else {
              values[i].push_back(0);
            }
          } else if (&k == &recompute_row) {
            values[i] = knob_values(k, recomputes, replicas, tp, pp);
          } else if (&k == &compression) {
            level.kind = Level::Values::Compression;
            values[i] = knob_values(k, space.codes(k), replicas, tp, pp, has_sfb_layers);
            no_compression = knob_values(k, space.codes(k), replicas, tp, pp, false);
          } else {
            const bool also = &k == &batch_split ? w.mixed() && !m.has_tables() : true;
            values[i] = knob_values(k, space.codes(k), replicas, tp, pp, also);
            if (&k == &stage_split) values[i] = stage_split_values(values[i], w, k);
          }
        }
        s.dp = static_cast<std::uint32_t>(dp);
        s.tp = static_cast<std::uint32_t>(tp);
        s.cp = static_cast<std::uint32_t>(cp);
        s.pp = static_cast<std::uint32_t>(pp);
        active.clear();
        check_at = 0;
        bool empty = false;
        for (std::size_t i = 0; i < level_count; ++i) {
          const Level& level = levels[i];
          if (level.kind == Level::Values::Fixed && level.fixed->size() <= 1) {
            empty = empty || level.fixed->empty();
            if (!empty) level.set(s, level.fixed->front());
            continue;
          }
          active.push_back(i);
          // The stage split moves the memory only through ends (counted_split counts speed as even).
          const bool memory = kEnumerationOrder[i].memory &&
                              (&row(kEnumerationOrder[i].member) != &stage_split ||
                               contains(*level.fixed, static_cast<std::uint32_t>(StageSplit::Ends)));
          if (memory) check_at = active.size();
        }
        if (empty) continue;  // a level without values: no strategy of this shape
        shape.by_split.clear();
        product(product, 0);
      }
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
