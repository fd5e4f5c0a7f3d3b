#include "toposweep/workload/memory.hpp"

#include <algorithm>
#include <cmath>

#include "toposweep/workload/block.hpp"
#include "toposweep/workload/hetero.hpp"
#include "toposweep/workload/ranks.hpp"

namespace toposweep {

namespace {

// What a model-state component is divided by: dp from the ZeRO stage that shards it on.
double zero_shards(std::uint8_t zero, std::uint8_t from_stage, double dp) {
  return zero >= from_stage ? dp : 1.0;
}

// Bytes per element an operator keeps its kept elements in: a weight GEMM's input at the GEMM's
// operand size (fp8 with model.datatype = fp8), the rest at the activations'; the routed
// experts' at most model.moe_activation_datatype's (Workload::expert_kept_bytes_per_element).
double kept_bytes_per_element(const Workload& w, const BlockOp& op) {
  const double bytes = op.kind == OpKind::Gemm ? w.gemm_bytes_per_element : w.bytes_per_element;
  const bool expert = op.role == OpRole::ExpertGemm || op.role == OpRole::ExpertActivation;
  return expert && w.expert_kept_bytes_per_element > 0 ? std::min(bytes, w.expert_kept_bytes_per_element)
                                                       : bytes;
}

// Bytes per sample an operator keeps on one rank at `bytes` per element (as layer_activations
// splits them), the busiest EP rank's experts Workload::expert_load x the mean.
double op_kept_bytes(const Workload& w, const BlockOp& op, ActivationSplit split, double bytes) {
  const double t = split.tp;
  const bool sp = split.sequence_split();
  const double r = op.kept_replicated, sh = op.kept_sharded;
  const bool expert = op.role == OpRole::ExpertGemm || op.role == OpRole::ExpertActivation;
  const double imbalance = expert ? w.expert_load(split.ep) : 1;
  return imbalance * bytes * (sp ? (r + sh) / t : r + sh / t) / split.cp;
}

}  // namespace

ModelStateBytes model_state_bytes_per_param(const Workload& w, std::uint8_t zero, double dp) {
  return {(w.bytes_per_element + w.fp8_weight_bytes) / zero_shards(zero, 3, dp),
          w.grad_bytes_per_element / zero_shards(zero, 2, dp),
          w.optimizer_bytes_per_param() / zero_shards(zero, 1, dp)};
}

LayerActivations layer_activations(const Workload& w, const Layer& l, ActivationSplit split, double k,
                                   RecomputeModules modules) {
  const double B = w.bytes_per_element;
  const double t = split.tp;
  LayerActivations a;
  const auto& shape = w.model.transformer;
  if (shape && l.kind == LayerKind::TransformerBlock) {
    // Korthikanti et al. 2022 Table 2: sbh (10 + 24/t + 5as/(ht)) bytes, all over t with sequence
    // parallelism; selective recomputation (and a fused attention kernel) keep no s x s tensors;
    // full recomputation keeps the layer input (split over t with sequence parallelism). The
    // layer's fields are its operator table's sums (block.hpp).
    // Context parallelism: each CP rank keeps its s / cp tokens' share of every tensor (it runs
    // only with fused attention, which keeps no s x s tensors).
    const bool sp = split.sequence_split();
    const double c = split.cp;
    auto kept = [&](double sharded) {
      return B * (sp ? (l.act_replicated + sharded) / t : l.act_replicated + sharded / t) / c;
    };
    double no_scores = kept(l.act_sharded - l.act_scores);
    a.none = w.fused_attention ? no_scores : kept(l.act_sharded);
    if (w.gemm_bytes_per_element < B) {
      // model.datatype = fp8: Transformer Engine keeps the weight GEMMs' inputs (QKV, attention
      // output, FFN in, FFN out) as their fp8 copies, gemm_bytes_per_element each, the rest in bf16.
      const double G = w.gemm_bytes_per_element;
      const double r = l.act_gemm_replicated, sh = l.act_gemm_sharded;
      const double fp8_saving = (B - G) * (sp ? (r + sh) / t : r + sh / t) / c;
      no_scores -= fp8_saving;
      a.none -= fp8_saving;
    }
    if (const double load = w.expert_load(split.ep); load != 1) {
      // The busiest EP rank's experts keep Workload::expert_load x the mean rows.
      const double r = l.act_expert_replicated, sh = l.act_expert_sharded;
      const double extra = (load - 1) * B * (sp ? (r + sh) / t : r + sh / t) / c;
      no_scores += extra;
      a.none += extra;
    }
    const RecomputeModules others = without_core_attn(modules);
    const bool probs = l.moe && w.moe_probs_in_activation;
    if (probs || w.expert_kept_bytes_per_element > 0 || others != RecomputeModules::None) {
      const std::vector<BlockOp> ops = describe_block(*shape, l);
      // model.moe_probs_in_activation: the unpermutation keeps its k probabilities per token, not
      // the k expert outputs of h elements each. model.moe_activation_datatype: the routed
      // experts' kept inputs in its datatype (DeepSeek-V3, arXiv:2412.19437 Sec. 3.3.2: cached in
      // FP8 for the backward pass).
      double probs_saving = 0, expert_saving = 0;
      for (const BlockOp& op : ops) {
        if (probs && op.role == OpRole::Unpermute)
          probs_saving += op_kept_bytes(w, op, split, B) * (shape->hidden - 1) / shape->hidden;
        if (w.expert_kept_bytes_per_element > 0) {
          const double base = op.kind == OpKind::Gemm ? w.gemm_bytes_per_element : B;
          expert_saving += op_kept_bytes(w, op, split, base - kept_bytes_per_element(w, op));
        }
      }
      no_scores -= probs_saving;
      a.none -= probs_saving;
      no_scores -= expert_saving;
      a.none -= expert_saving;
      // Recomputation by module: each listed module drops what its operators keep
      // (BlockOp::kept_module); without core_attn the s x s tensors stay.
      a.selective = recomputes(modules, RecomputeModules::CoreAttn) ? no_scores : a.none;
      for (const BlockOp& op : ops)
        if (recomputes(others, op.kept_module))
          a.selective -= op_kept_bytes(w, op, split, kept_bytes_per_element(w, op));
    } else {
      a.selective = recomputes(modules, RecomputeModules::CoreAttn) ? no_scores : a.none;
    }
    a.full = B * l.input_elements / (sp ? t : 1) / c;
    a.working_set = a.none;
    return a;
  }
  if (shape && l.kind == LayerKind::Embedding) {
    a.none = a.selective = a.full = a.working_set = embedding_kept_bytes(*shape, split);
    return a;
  }
  if (shape && l.kind == LayerKind::Head) {
    a.none = a.selective = a.full = a.working_set = head_kept_bytes(*shape, B, split);
    return a;
  }
  a.none = a.selective = B * (l.act_replicated + l.act_sharded / t) * k;
  a.full = B * l.input_elements * k;
  a.working_set = a.none;
  return a;
}

double microbatches_in_flight(const Strategy& s, std::uint32_t stage) {
  const double mu = s.microbatches;
  if (s.schedule == PipelineSchedule::GPipe) return mu;
  if (s.schedule == PipelineSchedule::Interleaved && s.pp > 1 && s.virtual_stages > 1) {
    // Megatron-LM's interleaved 1F1B: the warm-up forwards plus the one in progress, each through
    // 1/v of the device's layers.
    const double v = s.virtual_stages, pp = s.pp;
    const double units = std::min(2 * (pp - stage - 1) + (v - 1) * pp + 1, mu * v);
    return units / v;
  }
  return std::min<double>(s.pp - stage, mu);
}

// Stage p ends at the first layer whose forward-FLOP prefix reaches cum[p+1] / cum[pp] of the
// total, keeping at least one layer per stage.
// Transformers (layers = [embedding, block 0 .. L-1, head]): stage p holds blocks
// [blocks_before[p], blocks_before[p+1]), the embedding on the first stage, the head on the last.
static void stages_from_blocks(const std::vector<std::uint64_t>& blocks_before, std::uint32_t n,
                               std::vector<StageRange>& stages) {
  const auto pp = static_cast<std::uint32_t>(stages.size());
  for (std::uint32_t p = 0; p < pp; ++p) {
    stages[p].first = p == 0 ? 0 : static_cast<std::uint32_t>(1 + blocks_before[p]);
    stages[p].last = p + 1 == pp ? n : static_cast<std::uint32_t>(1 + blocks_before[p + 1]);
  }
}

static void balance_flops(const Model& m, const std::vector<double>& cum, std::vector<StageRange>& stages) {
  const auto n = static_cast<std::uint32_t>(m.layers.size());
  const auto pp = static_cast<std::uint32_t>(stages.size());
  std::vector<double> prefix(n + 1, 0);
  for (std::uint32_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + m.layers[i].forward_flops;
  std::uint32_t start = 0;
  for (std::uint32_t p = 0; p < pp; ++p) {
    std::uint32_t end = n;
    if (p + 1 < pp) {
      const double target = prefix[n] * cum[p + 1] / cum[pp];
      end = start + 1;
      while (end < n - (pp - p - 1) && prefix[end] < target) ++end;
    }
    stages[p] = {start, end};
    start = end;
  }
}

std::uint32_t pipeline_slots(const Model& m, StageSplit split) {
  if (split == StageSplit::Ends && m.transformer)
    return m.transformer->layers + m.transformer->mtp_layers + 2;
  return m.pipeline_units();
}

std::vector<StageRange> partition_stages(const Model& m, std::uint32_t pp, StageSplit split) {
  const auto n = static_cast<std::uint32_t>(m.layers.size());
  std::vector<StageRange> stages(pp);
  if (pp == 1) {
    stages[0] = {0, n};
    return stages;
  }
  if (m.transformer) {
    // Stage p holds blocks [p L / pp, (p+1) L / pp) (the multi-token-prediction layers after them
    // on the last stage); with the ends counted, the blocks and MTP layers (B of them) of slots
    // [p (B+2) / pp, (p+1) (B+2) / pp), slot 0 the embedding and slot B + 1 the head.
    const std::uint64_t L = m.transformer->layers;
    std::vector<std::uint64_t> before(pp + 1);
    for (std::uint32_t p = 0; p <= pp; ++p) before[p] = p * L / pp;
    const std::uint64_t B = L + m.transformer->mtp_layers;
    if (split == StageSplit::Ends && B + 2 >= pp)
      for (std::uint32_t p = 1; p < pp; ++p) before[p] = std::min<std::uint64_t>(p * (B + 2) / pp - 1, B);
    stages_from_blocks(before, n, stages);
    return stages;
  }
  // Balance forward FLOPs: boundary p is the first layer whose prefix reaches p/pp of the total,
  // keeping at least one layer per stage.
  std::vector<double> cum(pp + 1);
  for (std::uint32_t p = 0; p <= pp; ++p) cum[p] = p;
  balance_flops(m, cum, stages);
  return stages;
}

std::vector<StageRange> partition_stages(const Model& m, std::uint32_t pp, std::span<const double> weight,
                                         StageSplit split) {
  if (weight.empty() || std::all_of(weight.begin(), weight.end(), [&](double x) { return x == weight[0]; }))
    return partition_stages(m, pp, split);
  const auto n = static_cast<std::uint32_t>(m.layers.size());
  std::vector<double> cum(pp + 1, 0);
  for (std::uint32_t p = 0; p < pp; ++p) cum[p + 1] = cum[p] + weight[p];
  std::vector<StageRange> stages(pp);
  if (m.transformer) {
    // Boundary b_p (blocks before stage p) at round(L cum_p / total), each stage >= 1 block.
    const auto L = static_cast<std::int64_t>(m.transformer->layers);
    std::vector<std::uint64_t> before(pp + 1, 0);
    before[pp] = static_cast<std::uint64_t>(L);
    for (std::uint32_t p = 1; p < pp; ++p) {
      const auto ideal = static_cast<std::int64_t>(std::llround(static_cast<double>(L) * cum[p] / cum[pp]));
      before[p] = static_cast<std::uint64_t>(std::clamp(ideal, static_cast<std::int64_t>(before[p - 1]) + 1,
                                                        L - static_cast<std::int64_t>(pp - p)));
    }
    stages_from_blocks(before, n, stages);
    return stages;
  }
  balance_flops(m, cum, stages);
  return stages;
}

StageAggregate stage_aggregate(const Workload& w, StageRange range, ActivationSplit split, std::uint32_t pp,
                               bool last_stage, std::span<const std::uint32_t> layer_degree,
                               RecomputeModules modules, RecomputedBlocks recomputed) {
  const Model& m = w.model;
  const bool per_layer = !layer_degree.empty();
  const std::uint32_t tp = split.tp;
  StageAggregate a;
  double last_layer = 0;
  // Block recomputation: the first `recomputed.layers` blocks of each of the stage's chunks keep
  // their input (act.full), the others everything (act.none's size).
  std::uint32_t blocks = 0, block = 0;
  if (recomputed.layers > 0)
    for (std::uint32_t i = range.first; i < range.last; ++i)
      blocks += m.layers[i].kind == LayerKind::TransformerBlock;
  const std::uint32_t per_chunk = (blocks + recomputed.chunks - 1) / recomputed.chunks;
  for (std::uint32_t i = range.first; i < range.last; ++i) {
    const Layer& l = m.layers[i];
    if (l.kind == LayerKind::EmbeddingBag) continue;
    last_layer = per_layer ? l.parameters() / layer_degree[i] : l.params_sharded / tp + l.params_replicated;
    const double experts = per_layer ? 0.0 : l.params_expert / (double(split.expert_tp()) * split.ep);
    a.params += last_layer;
    a.expert_params += experts;
    a.largest_layer = std::max(a.largest_layer, last_layer + experts);
    // A layer model-parallel over k ranks works on the k ranks' gathered samples.
    const double k = per_layer ? layer_degree[i] : 1;
    const LayerActivations la = layer_activations(w, l, split, k, modules);
    a.act.none += la.none;
    a.act.selective += la.selective;
    const bool skipped = recomputed.layers > 0 && l.kind == LayerKind::TransformerBlock &&
                         block++ % per_chunk >= recomputed.layers;
    a.act.full += skipped ? la.none : la.full;
    a.working_set = std::max(a.working_set, la.working_set);
  }
  // The head (the stage's last layer) uses the tied copy, so ZeRO-3 gathers it with the head.
  if (last_stage) {
    const double copy = tied_embedding_copy(m, tp, pp);
    if (copy > 0) {
      a.params += copy;
      a.largest_layer = std::max(a.largest_layer, last_layer + copy);
    }
  }
  return a;
}

MemoryBreakdown stage_memory(const Workload& w, const Strategy& s, const std::vector<StageRange>& stages,
                             std::uint32_t stage) {
  return stage_memory(w, s,
                      stage_aggregate(w, stages[stage], activation_split(s), s.pp, stage + 1 == s.pp,
                                      s.layer_degree, s.recompute_modules, recomputed_blocks(s)),
                      stage);
}

MemoryBreakdown stage_memory(const Workload& w, const Strategy& s, const StageAggregate& a,
                             std::uint32_t stage) {
  const Model& m = w.model;
  MemoryBreakdown b;
  b.stage = stage;
  // ZeRO shards over every rank holding the same weights: dp x cp (Megatron-Core's
  // data-parallel group with context parallelism).
  const ModelStateBytes per_param = model_state_bytes_per_param(w, s.zero, s.grad_replicas());
  // The routed experts' states shard over the tp x dp x cp / (etp x ep) ranks holding the same
  // experts (dp x cp / ep unless strategy.etp folds them).
  const ModelStateBytes expert = model_state_bytes_per_param(w, s.zero, s.expert_replicas());
  b.weights = a.params * per_param.weights + a.expert_params * expert.weights;
  b.gradients = a.params * per_param.gradients + a.expert_params * expert.gradients;
  b.optimizer = a.params * per_param.optimizer + a.expert_params * expert.optimizer;
  // ZeRO-3 gathers each layer's full weights before it computes and frees them after.
  if (s.zero >= 3 && s.grad_replicas() > 1) b.gathered_weights = a.largest_layer * w.bytes_per_element;
  const double mb = microbatch_size(s, w);
  const bool full = s.recompute == Recompute::Full;
  b.activations =
      mb * (a.act.kept(s.recompute) * microbatches_in_flight(s, stage) + (full ? a.working_set : 0));
  if (m.has_tables()) {
    const auto owners = table_owners(s, m.tables.size(), s.gpus());
    std::vector<double> per_rank(s.gpus(), 0);
    for (std::size_t t = 0; t < m.tables.size(); ++t) per_rank[owners[t]] += m.tables[t].parameters();
    b.tables = *std::max_element(per_rank.begin(), per_rank.end()) * w.table_bytes_per_element;
  }
  b.reserve = w.device.memory_reserve_bytes;
  return b;
}

MemoryBreakdown memory_per_gpu(const Workload& w, const Strategy& s) {
  const auto stages = partition_stages(w.model, s.pp, stage_weights(w, s), s.stage_split);
  MemoryBreakdown worst;
  for (std::uint32_t p = 0; p < s.pp; ++p) {
    const MemoryBreakdown b = stage_memory(w, s, stages, p);
    if (p == 0 || b.total() > worst.total()) worst = b;
  }
  return worst;
}

}  // namespace toposweep

namespace toposweep {

RankMemory tightest_rank_memory(const Workload& w, const Strategy& s,
                                std::span<const double> replica_samples) {
  const auto stages = partition_stages(w.model, s.pp, stage_weights(w, s), s.stage_split);
  const double mb = microbatch_size(s, w);
  const AxisGrid grid = axis_grid(s);
  RankMemory out;
  double least = 0;
  bool first = true;
  for (std::uint32_t p = 0; p < s.pp; ++p) {
    const MemoryBreakdown b = stage_memory(w, s, stages, p);
    for (std::uint32_t d = 0; d < s.dp; ++d) {
      MemoryBreakdown r = b;
      r.activations = b.activations * (replica_samples[d] / mb);
      for (std::uint32_t i = 0; i < s.tp * s.cp; ++i) {
        const Device& dev = w.device_of_rank(
            grid.rank({{Axis::Tp, i % s.tp}, {Axis::Cp, i / s.tp}, {Axis::Dp, d}, {Axis::Pp, p}}));
        r.reserve = dev.memory_reserve_bytes;
        const double headroom = dev.hbm_bytes - r.total();
        if (first || headroom < least) {
          least = headroom;
          first = false;
          out.memory = r;
          out.capacity = dev.hbm_bytes;
          out.device = dev.name;
        }
      }
    }
  }
  return out;
}

}  // namespace toposweep
