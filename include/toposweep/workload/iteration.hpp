#pragma once
// From a configuration (model.*, server.device, strategy.*) to one training iteration's task
// graph: the entry point the simulator and the point evaluator use. Owned by the workload
// module, which defines Model, Device and Strategy in their own headers.
#include <cstdint>
#include <string>

#include "toposweep/workload/task_graph.hpp"
#include "toposweep/util/config.hpp"

namespace toposweep {

struct IterationPlan {
  TaskGraph graph;
  bool feasible = true;             // false: does not fit in memory (a result, not an error)
  std::string infeasible_reason;
  double memory_per_gpu_bytes = 0;
  double global_batch = 0;          // samples per iteration over all GPUs
  std::uint32_t dp = 1, tp = 1, pp = 1, microbatches = 1;
};

// `gpus` is the number of GPUs the topology offers. Throws BadInput for an inconsistent
// strategy (degrees that do not divide gpus, tp > heads, pp > layers, ...).
IterationPlan plan_iteration(const Config& config, std::uint32_t gpus);

}  // namespace toposweep
