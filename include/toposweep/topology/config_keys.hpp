#pragma once
// Configuration keys of the topology module (name, default, help); see util/config_keys.hpp.
#include <vector>

#include "toposweep/util/config_keys.hpp"

namespace toposweep::topology {
std::vector<KeySpec> config_keys();
}  // namespace toposweep::topology
