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

// The values each knob takes (optimize.* keys, docs/optimizers.md). Only canonical strategies
// are enumerated: a knob that changes nothing for a shape takes its default there (schedule and
// chunks with pp = 1, sequence parallelism and TP overlap with tp = 1, ZeRO and DP overlap with
// dp = 1), so no strategy is visited twice.
struct StrategySpace {
  std::vector<PipelineSchedule> schedules{PipelineSchedule::OneFOneB, PipelineSchedule::GPipe,
                                          PipelineSchedule::Interleaved};
  // Model chunks per device tried with the interleaved schedule; empty: every count >= 2 with
  // pp x chunks <= layers and the microbatch count a multiple of pp (what Megatron-LM accepts).
  std::vector<std::uint32_t> virtual_stages;
  std::vector<Recompute> recompute{Recompute::None, Recompute::Selective, Recompute::Full};
  std::vector<std::uint8_t> zero{0, 1, 2, 3};
  std::vector<bool> sequence_parallel{false, true};  // true only with tp > 1
  std::vector<TpOverlap> tp_overlap{TpOverlap::None, TpOverlap::Backward, TpOverlap::Full};
  std::vector<bool> dp_overlap{true, false};
  // Mixed servers and compression (optimize.batch_splits, stage_splits, compressions): the
  // configured strategy's value unless listed. A split is searched only on mixed devices.
  std::vector<BatchSplit> batch_split{BatchSplit::Even};
  std::vector<StageSplit> stage_split{StageSplit::Even};
  std::vector<Compression> compression{Compression::None};
  std::vector<std::uint32_t> tp, pp;           // degrees tried; empty: every divisor
  std::vector<std::uint32_t> microbatch_size;  // samples per microbatch tried; empty: every divisor
  std::uint32_t max_microbatches = 0;          // 0: every divisor of the per-replica batch
  std::uint32_t max_tp = 0;                    // 0: up to the head count (transformers), 1 otherwise
  // GPUs per server: tp is at most this unless tp_across_servers (0: no limit).
  std::uint32_t gpus_per_server = 0;
  bool tp_across_servers = false;
  double bucket_bytes = 25.0 * 1024 * 1024;
  bool operator==(const StrategySpace&) const = default;
};

struct StrategyCount {
  std::uint64_t checked = 0;  // valid strategies whose memory was checked
  std::uint64_t feasible = 0;
  std::uint64_t infeasible = 0;  // do not fit in device memory
};

// Calls `visit(strategy, memory_per_gpu_bytes, feasible)` for every valid canonical strategy, in
// a fixed order (tp, pp ascending; then microbatches, schedule and chunks, recompute, ZeRO
// stage, sequence parallelism, TP overlap, DP overlap). `visit` may be empty.
using StrategyVisitor = std::function<void(const Strategy&, double, bool)>;
StrategyCount for_each_strategy(const Workload& w, std::uint32_t gpus, const StrategySpace& space,
                                const StrategyVisitor& visit);

// The feasible strategies (and the counts, when `counts` is given).
std::vector<Strategy> feasible_strategies(const Workload& w, std::uint32_t gpus,
                                          const StrategySpace& space = {}, StrategyCount* counts = nullptr);

// Divisors of n, ascending.
std::vector<std::uint64_t> divisors(std::uint64_t n);

}  // namespace toposweep
