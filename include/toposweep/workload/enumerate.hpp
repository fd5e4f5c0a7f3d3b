#pragma once
// Enumeration of every valid global strategy (dp x tp x pp = GPUs, microbatch counts dividing
// the per-replica batch, schedules, recompute, ZeRO stages) of a workload, each checked against the
// device memory. Infeasible strategies are counted and skipped, not planned or simulated.
// The memory check reuses per-(tp, pp) stage aggregates, so a check costs O(pp) flops.
#include <cstdint>
#include <functional>
#include <vector>

#include "toposweep/workload/strategy.hpp"
#include "toposweep/workload/workload.hpp"

namespace toposweep {

struct StrategySpace {
  std::vector<PipelineSchedule> schedules{PipelineSchedule::OneFOneB, PipelineSchedule::GPipe};
  std::vector<Recompute> recompute{Recompute::None, Recompute::Full};
  // ZeRO stages to try (0..3); the default keeps the historical {none, ZeRO-1} space.
  std::vector<std::uint8_t> zero{0, 1};
  std::vector<bool> sequence_parallel{false};  // add true to search Megatron-SP too (tp > 1 only)
  std::uint32_t max_microbatches = 0;          // 0: every divisor of the per-replica batch
  std::uint32_t max_tp = 0;                    // 0: up to the head count (transformers), 1 otherwise
  double bucket_bytes = 25.0 * 1024 * 1024;
  bool operator==(const StrategySpace&) const = default;
};

struct StrategyCount {
  std::uint64_t checked = 0;  // valid strategies whose memory was checked
  std::uint64_t feasible = 0;
  std::uint64_t infeasible = 0;  // do not fit in device memory
};

// Calls `visit(strategy, memory_per_gpu_bytes, feasible)` for every valid strategy, in a fixed
// order (tp, pp ascending; then microbatches, schedule, recompute, ZeRO stage,
// sequence parallel — only for tp > 1, where it changes anything). `visit` may be empty.
using StrategyVisitor = std::function<void(const Strategy&, double, bool)>;
StrategyCount for_each_strategy(const Workload& w, std::uint32_t gpus, const StrategySpace& space,
                                const StrategyVisitor& visit);

// The feasible strategies (and the counts, when `counts` is given).
std::vector<Strategy> feasible_strategies(const Workload& w, std::uint32_t gpus,
                                          const StrategySpace& space = {}, StrategyCount* counts = nullptr);

// Divisors of n, ascending.
std::vector<std::uint64_t> divisors(std::uint64_t n);

}  // namespace toposweep
