#pragma once
// A lower bound on a strategy's iteration time from its compute alone, for the exact strategy
// search's branch and bound (docs/optimizers.md, "Exact strategy search"). Communication,
// optimizer steps and launch effects only add time, so the bound never exceeds the simulated
// time. For device p of a pipeline with chunk forward/backward times F_c, B_c per microbatch
// (chunk c on device c mod pp):
//   T >= sum_{c<p} F_c  +  m * sum_{c on p} (F_c + B_c)  +  sum_{c<p} B_c
// (its first task waits for one microbatch's forward through the chunks before it; its compute
// stream runs every pass of its chunks; its last backward is followed by that microbatch's
// backward through the chunks before it). The largest over p is the bound; with equal stages
// and one chunk per device it is (m + pp - 1)(F + B), the pipeline's compute plus its bubble.
#include "toposweep/workload/layer_cost.hpp"
#include "toposweep/workload/strategy.hpp"
#include "toposweep/workload/workload.hpp"

namespace toposweep {

// Seconds; 0 for per-layer degrees (no bound). `cache` may be null.
double compute_lower_bound(const Workload& w, const Strategy& s, LayerCostCache* cache);

}  // namespace toposweep
