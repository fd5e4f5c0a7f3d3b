#pragma once
// Configuration keys of the point module (name, default, help); see util/config_keys.hpp.
#include <vector>

#include "toposweep/util/config_keys.hpp"

namespace toposweep::point {
std::vector<KeySpec> config_keys();
}  // namespace toposweep::point
