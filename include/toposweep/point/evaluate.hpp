#pragma once
// One DesignPoint -> PointResult function: the unit the sweep, the optimizers' drivers and the
// CLI all call. A design point is a validated, defaulted Config. The evaluator caches what does
// not change between points (parsed model files, device and price tables), holds no global
// state, and is cheap to create, so each MPI rank owns one.
#include <memory>

#include "toposweep/point/point_result.hpp"
#include "toposweep/util/config.hpp"

namespace toposweep {

class PointEvaluator {
 public:
  PointEvaluator();
  ~PointEvaluator();
  PointEvaluator(PointEvaluator&&) noexcept;
  PointEvaluator& operator=(PointEvaluator&&) noexcept;

  // Bad input (an inconsistent design) throws BadInput; a memory-infeasible strategy returns
  // status Infeasible; the sweep turns other exceptions into status Failed.
  PointResult evaluate(const Config& point);

 private:
  struct Cache;
  std::unique_ptr<Cache> cache_;
};

}  // namespace toposweep
