// Block recomputation: which blocks of a chunk recompute (block_recompute.hpp).
#include "toposweep/workload/block_recompute.hpp"

namespace toposweep {

bool partial_recompute(const Strategy& s) {
  return s.recompute == Recompute::Full && s.recompute_layers > 0;
}

Strategy without_recompute(const Strategy& s) {
  Strategy out = s;
  out.recompute = Recompute::None;
  out.recompute_layers = 0;
  return out;
}

RecomputedBlocks recomputed_blocks(const Strategy& s) {
  if (!partial_recompute(s)) return {};
  return {s.recompute_layers, s.schedule == PipelineSchedule::Interleaved ? s.virtual_stages : 1};
}

}  // namespace toposweep
