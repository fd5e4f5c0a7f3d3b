#pragma once
// Block recomputation (Megatron-Core's --recompute-granularity full --recompute-method block
// --recompute-num-layers N; strategy.recompute_layers = N): in each pipeline chunk the first N
// transformer blocks recompute their whole forward in the backward and keep only their input, the
// others keep every activation, as without recomputation. Megatron-Core counts the blocks of each
// model chunk (each virtual stage with the interleaved schedule). N = 0, or N at least a chunk's
// blocks, is full recomputation of every block (docs/models.md, "Block recomputation").
#include <cstdint>

#include "toposweep/workload/model.hpp"
#include "toposweep/workload/strategy.hpp"

namespace toposweep {

// Whether some blocks of `s` skip the full recomputation: recompute = full with recompute_layers > 0.
bool partial_recompute(const Strategy& s);
// The strategy the skipped blocks run under: `s` without recomputation.
Strategy without_recompute(const Strategy& s);

// Walks one chunk's layers in order and says which run without recomputation (one walker per
// chunk).
class ChunkRecompute {
 public:
  explicit ChunkRecompute(const Strategy& s) : layers_(partial_recompute(s) ? s.recompute_layers : 0) {}
  // Whether layer `l`, the chunk's next, skips the recomputation (a block past the first N).
  bool skips(const Layer& l) {
    if (layers_ == 0 || l.kind != LayerKind::TransformerBlock) return false;
    return blocks_++ >= layers_;
  }

 private:
  std::uint32_t layers_;
  std::uint32_t blocks_ = 0;
};

// The blocks a pipeline stage's full recomputation re-runs, for the memory model: the first
// `layers` of each of `chunks` equal runs of the stage's blocks (0: all).
struct RecomputedBlocks {
  std::uint32_t layers = 0, chunks = 1;
  bool operator==(const RecomputedBlocks&) const = default;
};
RecomputedBlocks recomputed_blocks(const Strategy& s);

}  // namespace toposweep
