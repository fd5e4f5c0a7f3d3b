#pragma once
// Memory per GPU of a strategy: weights, gradients, optimizer state (ZeRO stage 1 shards the
// optimizer state over the data-parallel group, stage 2 also the gradients, stage 3 also the
// weights, plus a buffer for one gathered layer), activations in flight, embedding tables and the
// device's allocator reserve. Transformer activations per layer follow Korthikanti et al. 2022
// Table 2 (tensor and sequence parallelism, selective and full recomputation); microbatches in
// flight: GPipe all, 1F1B min(pp - stage, microbatches), interleaved 1F1B its warm-up units
// (pp (1 + (pp - 1)/(pp v)) on the first stage). The worst stage decides (docs/models.md).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "toposweep/workload/block.hpp"
#include "toposweep/workload/block_recompute.hpp"
#include "toposweep/workload/split.hpp"
#include "toposweep/workload/strategy.hpp"
#include "toposweep/workload/workload.hpp"

namespace toposweep {

struct MemoryBreakdown {
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, tables = 0;
  // ZeRO-3: the largest layer's weights, gathered from the DP group while it computes.
  double gathered_weights = 0;
  double reserve = 0;       // the device's allocator reserve (Device::memory_reserve_bytes)
  std::uint32_t stage = 0;  // the stage this breakdown is for (the worst one)
  double model_states() const { return weights + gradients + optimizer; }
  double total() const {
    return weights + gradients + optimizer + activations + tables + gathered_weights + reserve;
  }
};

// Activation bytes one sample of a layer keeps for its backward, by recomputation mode, and the
// layer's whole working set (what full recomputation rebuilds for one layer at a time). `k` is
// a per-layer model-parallel degree (the layer works on k ranks' samples).
struct LayerActivations {
  double none = 0, selective = 0, full = 0, working_set = 0;
  double kept(Recompute r) const {
    return r == Recompute::Full ? full : r == Recompute::Selective ? selective : none;
  }
};
// `modules`: what selective recomputation recomputes (strategy.recompute_modules; its default
// keeps every size as before the list).
LayerActivations layer_activations(const Workload& w, const Layer& l, ActivationSplit split, double k = 1,
                                   RecomputeModules modules = RecomputeModules::CoreAttn);
// Microbatches whose activations a pipeline stage holds at once (fractional with interleaving:
// units of 1/v of the stage's layers).
double microbatches_in_flight(const Strategy& s, std::uint32_t stage);

// Model-state bytes per parameter on one GPU (ZeRO paper, Rajbhandari et al. SC'20, sec. 5):
// weights `bytes_per_element`, gradients `grad_bytes_per_element`, optimizer state K =
// optimizer_bytes_per_param(); stage >= 1 divides the optimizer state by dp, >= 2 also the gradients, 3 also
// the weights.
struct ModelStateBytes {
  double weights = 0, gradients = 0, optimizer = 0;
  double total() const { return weights + gradients + optimizer; }
};
ModelStateBytes model_state_bytes_per_param(const Workload& w, std::uint8_t zero, double dp);

// Layers [first, last) of Model::layers on each pipeline stage. Transformers split their blocks
// evenly (embedding on the first stage, head on the last); other models balance forward FLOPs.
// `split` = StageSplit::Ends (transformers): the embedding and the head each take one of B + 2
// even slots (B: the blocks and the multi-token-prediction layers), stage p holding slots
// [p (B + 2) / pp, (p + 1) (B + 2) / pp) (Megatron-Core's account_for_embedding_in_pipeline_split
// and account_for_loss_in_pipeline_split; Megatron-Bridge's DeepSeek-V3 layout `Et|(tt|)*30mL`):
// the first and the last stage hold a block fewer when pp divides B + 2. Other models: as even.
struct StageRange {
  std::uint32_t first = 0, last = 0;
};
std::vector<StageRange> partition_stages(const Model& m, std::uint32_t pp,
                                         StageSplit split = StageSplit::Even);
// The most stages (or interleaved chunks) `split` can give a block or an end: a transformer's B + 2
// slots with the ends counted (the first chunk may hold the embedding alone, the last the head
// alone), else Model::pipeline_units(). validate_strategy rejects more.
std::uint32_t pipeline_slots(const Model& m, StageSplit split);
// The same with stage p's share in proportion to weight[p] (strategy.stage_split = speed):
// transformer blocks by cumulative share (boundary after stage p at round(L x its cumulative
// weight share), at least one block each), other models by weighted FLOP targets. Equal or no
// weights give the unweighted split of `split`.
std::vector<StageRange> partition_stages(const Model& m, std::uint32_t pp, std::span<const double> weight,
                                         StageSplit split = StageSplit::Even);

// What the memory of one pipeline stage depends on besides the schedule, ZeRO and the
// microbatch: sums over the stage's layers (EmbeddingBag tables apart), on one GPU.
struct StageAggregate {
  double params = 0;         // dense parameters (the last stage's tied embedding copy included)
  double expert_params = 0;  // the routed experts' parameters on one GPU (split over tp x ep)
  LayerActivations act;      // activation bytes per sample by recomputation mode, summed
  double working_set = 0;    // the largest layer's working set per sample (full recomputation)
  double largest_layer = 0;  // parameters of the largest layer (ZeRO-3 gather buffer)
};
// Layers `range` of w.model with its activations split as `split` (tensor parallelism split.tp), the stage
// being the last of `pp` or not; `layer_degree` (per-layer model parallelism, one per layer) replaces tp when
// not empty; `recomputed` (block recomputation): act.full keeps the skipped blocks' act.none instead.
// stage_memory and the strategy enumeration both read it.
StageAggregate stage_aggregate(const Workload& w, StageRange range, ActivationSplit split, std::uint32_t pp,
                               bool last_stage, std::span<const std::uint32_t> layer_degree = {},
                               RecomputeModules modules = RecomputeModules::CoreAttn,
                               RecomputedBlocks recomputed = {});

MemoryBreakdown stage_memory(const Workload& w, const Strategy& s, const std::vector<StageRange>& stages,
                             std::uint32_t stage);
// The same from the stage's aggregate (stage_aggregate of its range, activation_split(s), s.pp):
// what the enumerator uses with the aggregates it keeps per shape.
MemoryBreakdown stage_memory(const Workload& w, const Strategy& s, const StageAggregate& a,
                             std::uint32_t stage);
MemoryBreakdown memory_per_gpu(const Workload& w, const Strategy& s);
// Mixed devices or unequal microbatches (workload/hetero.hpp): every GPU against its own device,
// activations scaled by its replica's microbatch (replica_samples[d] over the mean), the reserve
// its device's. The GPU with the least headroom: its breakdown, its capacity and device name.
struct RankMemory {
  MemoryBreakdown memory;
  double capacity = 0;
  std::string device;
};
RankMemory tightest_rank_memory(const Workload& w, const Strategy& s,
                                std::span<const double> replica_samples);

inline bool fits_in_memory(const Workload& w, const MemoryBreakdown& m) {
  return m.total() <= w.device.hbm_bytes;
}

}  // namespace toposweep
