#pragma once
// Builds the network a configuration describes (topology.* and server.* keys). The one entry
// point every command and the point evaluator use. Throws BadInput naming the key on an
// inconsistent design (degree >= servers, bad strides, dims product mismatch, ...).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "toposweep/topology/network.hpp"
#include "toposweep/util/config.hpp"

namespace toposweep {

Network build_network(const Config& config);

// topology.extra_links: "A-B,C-D" with server ids -> pairs; BadInput naming `where`.
std::vector<std::pair<std::uint32_t, std::uint32_t>> parse_extra_links(const std::string& text,
                                                                       const std::string& where);

}  // namespace toposweep
