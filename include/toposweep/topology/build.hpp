#pragma once
// Building the network a topology spec describes (spec.hpp). Errors name the key they concern.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "toposweep/topology/network.hpp"
#include "toposweep/util/config.hpp"

namespace toposweep {

// build_network(topology_spec_from_config(config)) (spec.hpp).
Network network_from_config(const Config& config);

// topology.extra_links: "A-B,C-D" with server ids -> pairs; BadInput naming `where`.
std::vector<std::pair<std::uint32_t, std::uint32_t>> parse_extra_links(const std::string& text,
                                                                       const std::string& where);

}  // namespace toposweep
