#include "toposweep/collective/options.hpp"

#include <algorithm>

#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"

namespace toposweep {

void system_costs_from_config(const Config& config, std::uint32_t& chunks, double& endpoint_delay_s,
                              double& reduction_Bps) {
  if (config.has("collective.chunks"))
    chunks = static_cast<std::uint32_t>(config.get_int("collective.chunks", 1, 1 << 20));
  if (config.has("collective.endpoint_delay"))
    endpoint_delay_s = config.get_time("collective.endpoint_delay");
  if (config.has("collective.reduction_bandwidth") &&
      config.get_string("collective.reduction_bandwidth") != "0")
    reduction_Bps = config.get_bandwidth("collective.reduction_bandwidth");
}

std::string collective_algorithm_from_config(const Config& config) {
  const std::string name = to_lower(trim(config.get_string("collective.algorithm")));
  const auto& names = collective_algorithm_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw BadInput("unknown collective algorithm '" + name + "' (" + join(names, ", ") + ")",
                   config.where("collective.algorithm"));
  return name;
}

CollectiveOptions collective_options_from_config(const Config& config) {
  CollectiveOptions o;
  const std::string model = to_lower(trim(config.get_string("collective.model")));
  if (model == "pipelined")
    o.hierarchical_pipelined = true;
  else if (model == "sequential")
    o.hierarchical_pipelined = false;
  else
    throw BadInput("collective.model must be pipelined or sequential, not '" + model + "'",
                   config.where("collective.model"));
  o.switch_routing = switch_routing_from_config(config);
  o.greedy_forest = greedy_forest_from_config(config);
  system_costs_from_config(config, o.chunks, o.endpoint_delay_s, o.reduction_Bps);
  return o;
}

Routing switch_routing_from_config(const Config& config) {
  if (!config.has("collective.routing")) return Routing::Auto;
  const std::string routing = to_lower(trim(config.get_string("collective.routing")));
  if (routing == "auto") return Routing::Auto;
  if (routing == "ecmp") return Routing::Ecmp;
  if (routing == "spread") return Routing::Spread;
  if (routing != "shortest")
    throw BadInput("collective.routing must be auto, ecmp, spread or shortest, not '" + routing + "'",
                   config.where("collective.routing"));
  return Routing::Shortest;
}

bool greedy_forest_from_config(const Config& config) {
  if (!config.has("collective.forest")) return false;
  const std::string forest = to_lower(trim(config.get_string("collective.forest")));
  if (forest == "greedy") return true;
  if (forest != "exact")
    throw BadInput("collective.forest must be exact or greedy, not '" + forest + "'",
                   config.where("collective.forest"));
  return false;
}

}  // namespace toposweep
