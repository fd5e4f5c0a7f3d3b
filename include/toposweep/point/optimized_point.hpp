#pragma once
// A sweep point that asks for optimization (point.optimize != none): run the optimizer on the
// point's configuration, then simulate the design it chose, so the row holds the optimized
// network's cost and the chosen strategy's iteration time with its breakdown.
#include "toposweep/point/point_result.hpp"
#include "toposweep/util/config.hpp"

namespace toposweep {

// Throws BadInput for an unknown optimizer name or an inconsistent design.
PointResult evaluate_optimized_point(const Config& point);

}  // namespace toposweep
