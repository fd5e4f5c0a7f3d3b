#pragma once
// Configuration keys of the collective module (name, default, help); see util/config_keys.hpp.
#include <vector>

#include "toposweep/util/config_keys.hpp"

namespace toposweep::collective {
std::vector<KeySpec> config_keys();
}  // namespace toposweep::collective
