#include "toposweep/sim/config_keys.hpp"

namespace toposweep::sim {

std::vector<KeySpec> config_keys() {
  return {
      {"simulate.network_model", "analytical", "analytical (alpha-beta, uncontended) or flow (max-min fair flows)"},
      {"simulate.hierarchical_model", "pipelined",
       "multidim collectives: pipelined (max over dimensions) or sequential (sum over dimensions)"},
      {"simulate.analytical_instances", "first",
       "analytical model: time the first instance of each communication (first) or every one, slowest wins (all)"},
      {"simulate.jobs", "",
       "multi-job mode: comma list of MODEL:SERVERS jobs placed on consecutive servers, each pure data parallel "
       "(e.g. dlrm:16,bert-large:16); empty = one job from model.* and strategy.*"},
  };
}

}  // namespace toposweep::sim
