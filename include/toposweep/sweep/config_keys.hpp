#pragma once
// Configuration keys of the sweep module (name, default, help); see util/config_keys.hpp.
#include <vector>

#include "toposweep/util/config_keys.hpp"

namespace toposweep::sweep {
std::vector<KeySpec> config_keys();
}  // namespace toposweep::sweep
