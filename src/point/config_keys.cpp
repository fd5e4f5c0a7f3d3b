#include "toposweep/point/config_keys.hpp"

namespace toposweep::point {

std::vector<KeySpec> config_keys() {
  return {

  };
}

}  // namespace toposweep::point
