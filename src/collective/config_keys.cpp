#include "toposweep/collective/config_keys.hpp"

namespace toposweep::collective {

std::vector<KeySpec> config_keys() {
  return {
      {"collective.algorithm", "auto", "auto, ring, multiring, hierarchical, tree, halving_doubling, direct, forest"},
  };
}

}  // namespace toposweep::collective
