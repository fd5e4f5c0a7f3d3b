#pragma once
// Reading the collective.* configuration keys into the values plan_collective takes, with
// errors that name the key.
#include <string>

#include "toposweep/collective/plan.hpp"
#include "toposweep/util/config.hpp"

namespace toposweep {

// collective.algorithm, checked against collective_algorithm_names().
std::string collective_algorithm_from_config(const Config& config);
// collective.model (pipelined | sequential) into CollectiveOptions (with_flows left false).
CollectiveOptions collective_options_from_config(const Config& config);
// collective.routing: `auto` (also when the key is absent), `ecmp`, `spread` or `shortest`;
// BadInput for anything else.
Routing switch_routing_from_config(const Config& config);
// collective.forest: true for `greedy`, false for `exact` or when the key is absent.
bool greedy_forest_from_config(const Config& config);
// collective.chunks, collective.endpoint_delay, collective.reduction_bandwidth (0: free).
void system_costs_from_config(const Config& config, std::uint32_t& chunks, double& endpoint_delay_s,
                              double& reduction_Bps);

}  // namespace toposweep
