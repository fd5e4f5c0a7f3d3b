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
#include <vector>

#include "toposweep/workload/layer_cost.hpp"
#include "toposweep/workload/strategy.hpp"
#include "toposweep/workload/workload.hpp"

namespace toposweep {

// Per model chunk, seconds one microbatch's pass holds the chunk's device: its compute, or
// more when a caller adds what the pass cannot avoid (opt/strategy_bound.hpp: exposed TP
// collectives), and the pipeline sends after it (empty: none counted; send_forward[c] from
// chunk c to c + 1, send_backward[c] from chunk c to c - 1). With blocking sends the device's
// next pass waits for each send.
struct ChunkTimes {
  std::vector<double> forward, backward;
  std::vector<double> send_forward, send_backward;
  bool blocking_sends = false;
};

// The per-pass compute times plan_iteration gives the chunks (no sends). `cache` may be null.
ChunkTimes chunk_compute_times(const Workload& w, const Strategy& s, LayerCostCache* cache);

// The bound above for any chunk pass times that lie on every pass's dependency chain, with the
// sends: the first pass of device p waits for microbatch 0 through the chunks (and sends)
// before it, every pass (and blocking send) of the device runs in turn, and the last backward is
// followed by the sends and backward passes back to chunk 0. Not scaled down.
double pipeline_lower_bound(const Strategy& s, const ChunkTimes& t);

// Seconds; 0 for per-layer degrees (no bound). `cache` may be null.
double compute_lower_bound(const Workload& w, const Strategy& s, LayerCostCache* cache);

}  // namespace toposweep
