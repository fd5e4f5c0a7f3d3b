#include "toposweep/point/config_keys.hpp"

namespace toposweep::point {

std::vector<KeySpec> config_keys() {
  return {
      {"point.optimize", "none",
       "none (evaluate the design as given) or the optimizer the point runs first: alternating, bandwidth, "
       "topology, strategy (optimize.* keys apply)"},
  };
}

}  // namespace toposweep::point
