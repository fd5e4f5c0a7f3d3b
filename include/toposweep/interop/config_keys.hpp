#pragma once
#include <vector>

#include "toposweep/util/config_keys.hpp"

namespace toposweep::interop {

// model.chakra: a directory of Chakra traces to play instead of a planned model.
std::vector<KeySpec> config_keys();

}  // namespace toposweep::interop
