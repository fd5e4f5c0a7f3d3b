#include "toposweep/workload/memory.hpp"

#include <algorithm>

namespace toposweep {

namespace {

// What a model-state component is divided by: dp from the ZeRO stage that shards it on.
double zero_shards(std::uint8_t zero, std::uint8_t from_stage, double dp) {
  return zero >= from_stage ? dp : 1.0;
}

}  // namespace

ModelStateBytes model_state_bytes_per_param(const Workload& w, std::uint8_t zero, double dp) {
  return {w.bytes_per_element / zero_shards(zero, 3, dp), w.bytes_per_element / zero_shards(zero, 2, dp),
          w.optimizer_bytes_per_param() / zero_shards(zero, 1, dp)};
}

std::vector<StageRange> partition_stages(const Model& m, std::uint32_t pp) {
  const auto n = static_cast<std::uint32_t>(m.layers.size());
  std::vector<StageRange> stages(pp);
  if (pp == 1) {
    stages[0] = {0, n};
    return stages;
  }
  if (m.transformer) {
    // layers = [embedding, block 0 .. L-1, head]: stage p holds blocks [p L / pp, (p+1) L / pp).
    const std::uint64_t L = m.transformer->layers;
    for (std::uint32_t p = 0; p < pp; ++p) {
      stages[p].first = p == 0 ? 0 : static_cast<std::uint32_t>(1 + p * L / pp);
      stages[p].last = p + 1 == pp ? n : static_cast<std::uint32_t>(1 + (p + 1) * L / pp);
    }
    return stages;
  }
  // Balance forward FLOPs: boundary p is the first layer whose prefix reaches p/pp of the total,
  // keeping at least one layer per stage.
  std::vector<double> prefix(n + 1, 0);
  for (std::uint32_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + m.layers[i].forward_flops;
  std::uint32_t start = 0;
  for (std::uint32_t p = 0; p < pp; ++p) {
    std::uint32_t end = n;
    if (p + 1 < pp) {
      const double target = prefix[n] * (p + 1) / pp;
      end = start + 1;
      while (end < n - (pp - p - 1) && prefix[end] < target) ++end;
    }
    stages[p] = {start, end};
    start = end;
  }
  return stages;
}

MemoryBreakdown stage_memory(const Workload& w, const Strategy& s, const std::vector<StageRange>& stages,
                             std::uint32_t stage) {
  const Model& m = w.model;
  const double tp = s.tp;
  double params = 0, act_elements = 0, working_set = 0, largest_layer = 0, last_layer = 0;
  for (std::uint32_t i = stages[stage].first; i < stages[stage].last; ++i) {
    const Layer& l = m.layers[i];
    if (l.kind == LayerKind::EmbeddingBag) continue;
    last_layer =
        s.per_layer() ? l.parameters() / s.layer_degree[i] : l.params_sharded / tp + l.params_replicated;
    params += last_layer;
    largest_layer = std::max(largest_layer, last_layer);
    // A layer model-parallel over k ranks works on the k ranks' gathered samples.
    const double k = s.per_layer() ? s.layer_degree[i] : 1;
    const bool sp = s.sequence_parallel && l.kind == LayerKind::TransformerBlock;
    const double full =
        (sp ? (l.act_replicated + l.act_sharded) / tp : l.act_replicated + l.act_sharded / tp) * k;
    act_elements += (s.recompute ? l.input_elements * k : full);
    working_set = std::max(working_set, full);
  }
  // Tied embeddings: the last stage keeps its own copy of the word embeddings (Megatron).
  // The head uses that copy, so ZeRO-3 gathers it with the head.
  if (m.transformer && m.transformer->tied_embeddings && s.pp > 1 && stage + 1 == s.pp) {
    const double copy = static_cast<double>(m.transformer->vocab) * m.transformer->hidden / tp;
    params += copy;
    largest_layer = std::max(largest_layer, last_layer + copy);
  }

  MemoryBreakdown b;
  b.stage = stage;
  b.weights = params * w.bytes_per_element / zero_shards(s.zero, 3, s.dp);
  b.gradients = params * w.bytes_per_element / zero_shards(s.zero, 2, s.dp);
  b.optimizer = params * w.optimizer_bytes_per_param() / zero_shards(s.zero, 1, s.dp);
  // ZeRO-3 gathers each layer's full weights before it computes and frees them after.
  if (s.zero >= 3 && s.dp > 1) b.gathered_weights = largest_layer * w.bytes_per_element;
  const double mb = microbatch_size(s, w);
  const double in_flight =
      s.schedule == PipelineSchedule::GPipe ? s.microbatches : std::min<double>(s.pp - stage, s.microbatches);
  b.activations = mb * w.bytes_per_element * (act_elements * in_flight + (s.recompute ? working_set : 0));
  if (m.has_tables()) {
    const auto owners = table_owners(s, m.tables.size(), s.gpus());
    std::vector<double> per_rank(s.gpus(), 0);
    for (std::size_t t = 0; t < m.tables.size(); ++t) per_rank[owners[t]] += m.tables[t].parameters();
    b.tables = *std::max_element(per_rank.begin(), per_rank.end()) * w.table_bytes_per_element;
  }
  return b;
}

MemoryBreakdown memory_per_gpu(const Workload& w, const Strategy& s) {
  const auto stages = partition_stages(w.model, s.pp);
  MemoryBreakdown worst;
  for (std::uint32_t p = 0; p < s.pp; ++p) {
    const MemoryBreakdown b = stage_memory(w, s, stages, p);
    if (p == 0 || b.total() > worst.total()) worst = b;
  }
  return worst;
}

}  // namespace toposweep
