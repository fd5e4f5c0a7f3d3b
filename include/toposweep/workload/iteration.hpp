#pragma once
// From a configuration (model.*, server.device, strategy.*) to one training iteration's task
// graph: the entry point the simulator and the point evaluator use. Owned by the workload
// module, which defines Model, Device and Strategy in their own headers.
//
// Graph shape (docs/models.md): per pipeline stage one representative compute stream; per
// (stage, microbatch, forward/backward) one compute task (folded over the stage's layers) plus
// the stage's tensor-parallel AllReduces folded into one collective task with `repeat`, both on
// the compute stream; pipeline sends on per-stage send streams; in each stage's final backward
// the compute is cut at gradient-bucket boundaries and every bucket's data-parallel AllReduce
// runs on the stage's DP stream as soon as its gradients exist; then the optimizer step.
#include <cstdint>
#include <string>
#include <vector>

#include "toposweep/util/config.hpp"
#include "toposweep/workload/layer_cost.hpp"
#include "toposweep/workload/memory.hpp"
#include "toposweep/workload/strategy.hpp"
#include "toposweep/workload/task_graph.hpp"
#include "toposweep/workload/workload.hpp"

namespace toposweep {

struct IterationPlan {
  TaskGraph graph;
  bool feasible = true;  // false: does not fit in memory (a result, not an error)
  std::string infeasible_reason;
  double memory_per_gpu_bytes = 0;
  double global_batch = 0;  // samples per iteration over all GPUs
  std::uint32_t dp = 1, tp = 1, pp = 1, cp = 1, ep = 1, microbatches = 1;
  // Added by the workload module:
  Strategy strategy;       // the full strategy the graph was built from
  MemoryBreakdown memory;  // of the worst stage
  double total_flops = 0;  // all GPUs, one iteration (including recomputation)
  // Samples per microbatch of each DP replica when they differ (mixed devices or a
  // proportional split; workload/hetero.hpp); empty: global_batch / (dp x microbatches) each.
  std::vector<double> replica_samples;
};

// `gpus` is the number of GPUs the topology offers: workload_from_config, strategy_from_config,
// then plan_iteration. Throws BadInput for an inconsistent strategy (degrees that do not divide
// gpus, tp > heads, pp > layers, ...), naming the key and where it was set.
IterationPlan plan_iteration_from_config(const Config& config, std::uint32_t gpus);

// The same from an already-built workload and strategy (what optimizers call in a loop).
// Validates the strategy (BadInput) against s.gpus() GPUs. A transformer's per-layer costs come
// from `cache` when given (callers that plan many strategies keep one), else are computed here.
IterationPlan plan_iteration(const Workload& workload, const Strategy& strategy,
                             LayerCostCache* cache = nullptr);

// The same plan without its task graph (graph.gpus set, no tasks, total_flops 0): the memory
// check and everything a row of a design that does not fit needs, in closed form, microseconds.
IterationPlan plan_memory(const Workload& workload, const Strategy& strategy);

}  // namespace toposweep
