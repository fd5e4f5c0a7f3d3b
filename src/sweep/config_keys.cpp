#include "toposweep/sweep/config_keys.hpp"

namespace toposweep::sweep {

std::vector<KeySpec> config_keys() {
  return {
      {"sweep.*", "", "sweep settings (see docs/sweep.md)"},
      {"space.*", "", "design-space definitions (see docs/sweep.md)"},
  };
}

}  // namespace toposweep::sweep
