#pragma once
// Memory per GPU of a strategy: weights, gradients, optimizer state (ZeRO-1 shards it over the
// data-parallel group), activations in flight (1F1B keeps min(pp - stage, microbatches) per
// stage, GPipe all microbatches; recompute keeps only layer inputs plus one layer's working
// set), and embedding tables. The worst stage decides.
#include <cstdint>
#include <vector>

#include "toposweep/workload/strategy.hpp"
#include "toposweep/workload/workload.hpp"

namespace toposweep {

struct MemoryBreakdown {
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, tables = 0;
  std::uint32_t stage = 0;  // the stage this breakdown is for (the worst one)
  double total() const { return weights + gradients + optimizer + activations + tables; }
};

// Layers [first, last) of Model::layers on each pipeline stage. Transformers split their blocks
// evenly (embedding on the first stage, head on the last); other models balance forward FLOPs.
struct StageRange {
  std::uint32_t first = 0, last = 0;
};
std::vector<StageRange> partition_stages(const Model& m, std::uint32_t pp);

MemoryBreakdown stage_memory(const Workload& w, const Strategy& s, const std::vector<StageRange>& stages,
                             std::uint32_t stage);
MemoryBreakdown memory_per_gpu(const Workload& w, const Strategy& s);
inline bool fits_in_memory(const Workload& w, const MemoryBreakdown& m) {
  return m.total() <= w.device.hbm_bytes;
}

}  // namespace toposweep
