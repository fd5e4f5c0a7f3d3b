#include "toposweep/point/check.hpp"

#include <optional>

#include "toposweep/opt/design_point.hpp"
#include "toposweep/opt/strategy_placement.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/topology/cost.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"
#include "toposweep/workload/iteration.hpp"

namespace toposweep {
namespace {

// Runs one reading step; an impossible design stops that step only, so the later steps still
// read (and check) their keys.
template <class F>
void step(F&& f) {
  try {
    f();
  } catch (const InvalidDesign&) {
  }
}

}  // namespace

void check_point_config(const Config& point) {
  const std::string optimize = point.has("point.optimize") ? to_lower(trim(point.get_string("point.optimize"))) : "none";
  if (optimize != "none")
    opt::check_optimize_config(point, opt::parse_optimize_target(optimize, point.where("point.optimize")));
  std::optional<Network> net;
  step([&] { net.emplace(build_network(point)); });
  step([&] { topology::price_table_from_config(point); });
  step([&] { sim::sim_options_from_config(point); });
  if (point.has("optimize.placement"))
    opt::parse_placement_kind(point.get_string("optimize.placement"), point.where("optimize.placement"));
  if (net) step([&] { plan_iteration(point, net->gpu_count()); });
}

}  // namespace toposweep
