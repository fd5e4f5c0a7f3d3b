#pragma once
// Configuration keys of the workload module (name, default, help); see util/config_keys.hpp.
#include <vector>

#include "toposweep/util/config_keys.hpp"

namespace toposweep::workload {
std::vector<KeySpec> config_keys();
}  // namespace toposweep::workload
