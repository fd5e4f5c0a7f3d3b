#include "toposweep/opt/config_keys.hpp"

namespace toposweep::opt {

std::vector<KeySpec> config_keys() {
  return {

  };
}

}  // namespace toposweep::opt
