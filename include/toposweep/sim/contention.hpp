#pragma once
// SM contention between a pass's compute and the communication overlapped with it whose kernels
// run on the same GPU's SMs (strategy.ep_sms: the expert-parallel dispatch/combine kernels;
// strategy.dp_sms: the data-parallel collectives, charged once per stage before its optimizer
// step over the whole iteration's compute). The task graph closes such a pass (or stage) with a
// compute task whose sm_share is the SMs' share and whose dependencies are the pass's compute
// tasks and the overlapped communication tasks; both
// the event engine and the prepared playback time it here, from their dependencies' spans, so
// the two agree bit for bit.
//
// While both run, the compute goes at 1 - share of its rate: with the communication busy for
// `ov` of the compute's time, the compute ends share x ov later. The pass ends at
//   max(A_end, C_end + share x ov),
// A_end and C_end the communication's and the compute's ends on the unslowed schedule; the task
// takes what of that lies past max(A_end, C_end), where it starts. When the communication starts
// with the compute and outlasts it (A >= C) the pass takes A (compute finishing under it, its
// slowdown hidden) while A >= C (1 + share); when the compute outlasts it, C + share x A.
// `ov` is measured on the unslowed spans, so a compute that the slowdown pushes further under
// the communication is charged only for the overlap it had (an underestimate of share x the
// extra overlap, at most share^2 x A).
#include <span>

#include "toposweep/sim/engine.hpp"
#include "toposweep/workload/task_graph.hpp"

namespace toposweep::sim {

// The duration of contention task `i` of `g` (Task::sm_share > 0), from the spans of its
// dependencies (all finished: dependencies come before a task in the graph).
double contention_seconds(const TaskGraph& g, TaskId i, std::span<const TaskSpan> spans);

}  // namespace toposweep::sim
