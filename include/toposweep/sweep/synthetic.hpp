#pragma once
// A synthetic point evaluator: a deterministic closed-form function of a point's configuration,
// with known infeasible and failing points. It lets the engine, the MPI tests and the benchmarks
// run without the simulator (`sweep.evaluator = synthetic`), and measure the engine's own overhead.
#include "toposweep/point/point_result.hpp"
#include "toposweep/util/config.hpp"

namespace toposweep::sweep {

// The values depend only on the point's key/value pairs (sweep.* keys excluded). A point whose
// hash is 0 mod 13 is infeasible, 0 mod 97 (and not infeasible) throws. `cost_s` > 0 busy-waits
// that long to emulate an expensive point; `fail_all` makes every point throw (to test what a
// sweep whose points all fail reports).
PointResult synthetic_point(const Config& point, double cost_s = 0, bool fail_all = false);

}  // namespace toposweep::sweep
