#include "toposweep/sim/config_keys.hpp"

#include "toposweep/sim/simulate.hpp"
#include "toposweep/util/config_checks.hpp"

namespace toposweep::sim {

std::vector<KeySpec> config_keys() {
  return {
      {"simulate.network_model", "analytical",
       "analytical (alpha-beta, uncontended) or flow (max-min fair flows)",
       checks::one_of(toposweep::sim::network_model_names())},
      {"simulate.hierarchical_model", "pipelined",
       "multidim collectives: pipelined (max over dimensions) or sequential (sum over dimensions)",
       checks::one_of({"pipelined", "sequential"})},
      {"simulate.analytical_instances", "first",
       "analytical model: time the first instance of each communication (first) or every one, slowest wins "
       "(all)",
       checks::one_of({"first", "all"})},
      {"simulate.jobs", "",
       "multi-job mode: comma list of MODEL:SERVERS[:tpT][:ppP][:mbM] jobs placed on consecutive servers, "
       "data "
       "parallel over what tp x pp leaves (e.g. dlrm:16,gpt3-13b:16:tp4:pp2:mb8); empty = one job from "
       "model.* "
       "and strategy.*"},
  };
}

}  // namespace toposweep::sim
