#pragma once
// Builds the network a configuration describes (topology.* and server.* keys). The one entry
// point every command and the point evaluator use. Throws BadInput naming the key on an
// inconsistent design (degree >= servers, bad strides, dims product mismatch, ...).
#include "toposweep/topology/network.hpp"
#include "toposweep/util/config.hpp"

namespace toposweep {

Network build_network(const Config& config);

}  // namespace toposweep
