#pragma once
// Configuration keys of the frontier module (name, default, help); see util/config_keys.hpp.
#include <vector>

#include "toposweep/util/config_keys.hpp"

namespace toposweep::frontier {
std::vector<KeySpec> config_keys();
}  // namespace toposweep::frontier
