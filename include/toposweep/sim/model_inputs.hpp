#pragma once
// Whether two networks are the same to the analytical model and the collective planner, so one
// set of analytical models (their collective timings and playbacks) serves both: a sweep's
// switch at 4 ports of 200 Gb/s and at 8 ports of 100 Gb/s are one 800 Gb/s link per server.
#include "toposweep/topology/network.hpp"

namespace toposweep::sim {

// Every arc (ends, bandwidth, latency), the compute nodes' GPUs and fabrics, the link efficiency
// and the structure the planner reads (kind, ring strides, dimensions, tree groups) equal. What
// only prices and reports read (ports per server, per-port bandwidth, bisection) may differ.
bool same_model_inputs(const Network& a, const Network& b);

}  // namespace toposweep::sim
