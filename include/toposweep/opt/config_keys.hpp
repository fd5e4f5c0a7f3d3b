#pragma once
// Configuration keys of the opt module (name, default, help); see util/config_keys.hpp.
#include <vector>

#include "toposweep/util/config_keys.hpp"

namespace toposweep::opt {
std::vector<KeySpec> config_keys();
}  // namespace toposweep::opt
