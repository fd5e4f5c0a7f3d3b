#pragma once
// How a strategy splits a transformer's work and tensors over its ranks: the activations over
// the TP group (tensor and sequence parallelism) and the CP group (context parallelism), the
// FLOPs of a layer over tp x cp ranks, and the pipeline's stage-boundary tensor. The memory
// model, the per-operator costs, the plan and the strategy bound all read these.
#include <cstdint>

#include "toposweep/workload/block.hpp"
#include "toposweep/workload/strategy.hpp"

namespace toposweep {

// How a strategy splits its blocks' activations (block.hpp).
ActivationSplit activation_split(const Strategy& s);

// The ranks a layer's FLOPs (and its per-GPU compute) divide over: tp x cp for a transformer's
// layers (tensor parallelism splits the GEMMs, context parallelism the tokens and attention),
// 1 for other models (their model-parallel degrees are per layer).
double compute_shard(const Model& m, const Strategy& s);

// How a pipeline stage-boundary tensor (the activations forward, their gradients backward)
// travels between the stages of a transformer: `split`, each TP rank sends its 1/tp of it (with
// sequence parallelism or scatter/gather); `gathered`, the receiving stage AllGathers it over its
// TP group before the pass uses it (scatter/gather without sequence parallelism). Neither for
// other models or tp = 1. (Each CP rank sends only its own s / cp tokens.) The plan (iteration.cpp) and the
// strategy bound both follow it.
struct StageBoundary {
  bool split = false, gathered = false;
};
StageBoundary stage_boundary(const Strategy& s, bool transformer);

}  // namespace toposweep
