#pragma once
// Configuration keys of the sim module (name, default, help); see util/config_keys.hpp.
#include <vector>

#include "toposweep/util/config_keys.hpp"

namespace toposweep::sim {
std::vector<KeySpec> config_keys();
}  // namespace toposweep::sim
