#include "toposweep/point/check.hpp"

#include "toposweep/point/evaluate.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep {

void check_point_config(const Config& point) {
  PointCache cache;
  check_point_config(point, cache);
}

void check_point_config(const Config& point, PointCache& cache) {
  try {
    evaluate_config(point, cache, Detail::Check);
  } catch (const InvalidDesign&) {
    // A design that cannot exist is a sweep point's status, not an input error.
  }
}

}  // namespace toposweep
