#include "toposweep/frontier/config_keys.hpp"

namespace toposweep::frontier {

std::vector<KeySpec> config_keys() {
  return {

  };
}

}  // namespace toposweep::frontier
