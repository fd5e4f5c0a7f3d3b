#include "toposweep/collective/config_keys.hpp"

#include "toposweep/collective/plan.hpp"
#include "toposweep/util/config_checks.hpp"

namespace toposweep::collective {

std::vector<KeySpec> config_keys() {
  return {
      {"collective.algorithm", "auto", collective_algorithm_help(), checks::one_of(collective_algorithm_names())},
      {"collective.model", "pipelined",
       "hierarchical and two-level collectives: pipelined (max over dimensions) or sequential (sum)", checks::one_of({"pipelined", "sequential"})},
      {"collective.routing", "shortest",
       "networks with switches: shortest (first shortest path per transfer) or spread (equal-cost "
       "paths, least busy arc first, like ECMP over a fat-tree's cores)", checks::one_of({"shortest", "spread"})},
      {"collective.forest", "exact",
       "forest packing: exact (attains the cut bound; greedy first, then splitting off and Edmonds' "
       "branchings) or greedy (fast, may fall short of the bound: built vs optimal time reported)",
       checks::one_of({"exact", "greedy"})},
  };
}

}  // namespace toposweep::collective
