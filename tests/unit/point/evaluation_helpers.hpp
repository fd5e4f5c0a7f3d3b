#pragma once
// Test helpers: a point evaluated from a configuration, as a sweep row (one cache for every
// call, like a sweep rank) or in full (as `simulate` prints it).
#include "toposweep/point/evaluate.hpp"

namespace toposweep::testing {

class RowEvaluator {
 public:
  RowEvaluator() = default;
  explicit RowEvaluator(PointCacheLimits limits) : cache_(limits) {}
  PointResult evaluate(const Config& point) { return evaluate_config(point, cache_, Detail::Row).row; }

 private:
  PointCache cache_;
};

inline Evaluation full_evaluation(const Config& point, bool record_link_loads = false) {
  DesignPoint p = design_point_from_config(point);
  p.sim.record_link_loads = record_link_loads;
  PointCache cache;
  return key_origins(point).run([&] { return evaluate(p, cache, Detail::Full); });
}

}  // namespace toposweep::testing
