#include "toposweep/sim/config_keys.hpp"

namespace toposweep::sim {

std::vector<KeySpec> config_keys() {
  return {
      {"simulate.network_model", "analytical", "analytical (alpha-beta, uncontended) or flow (max-min fair flows)"},
  };
}

}  // namespace toposweep::sim
