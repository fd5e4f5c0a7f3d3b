#include "toposweep/point/config_keys.hpp"

#include "toposweep/opt/design_point.hpp"
#include "toposweep/util/config.hpp"
#include "toposweep/util/strings.hpp"

namespace toposweep::point {
namespace {

void check_optimize(const std::string& value, const std::string& where) {
  const std::string v = to_lower(trim(value));
  if (v != "none") opt::parse_optimize_target(v, where);
}

}  // namespace

std::vector<KeySpec> config_keys() {
  return {
      {"point.optimize", "none",
       "none (evaluate the design as given) or the optimizer the point runs first: alternating, bandwidth, "
       "topology, strategy (optimize.* keys apply)",
       check_optimize},
  };
}

}  // namespace toposweep::point
