#include "toposweep/collective/config_keys.hpp"

namespace toposweep::collective {

std::vector<KeySpec> config_keys() {
  return {
      {"collective.algorithm", "auto",
       "auto, ring, multiring, hierarchical, tree, halving_doubling, direct, pairwise, forest "
       "(auto: multiring on topoopt, hierarchical on multidim, ring otherwise)"},
      {"collective.model", "pipelined",
       "hierarchical and two-level collectives: pipelined (max over dimensions) or sequential (sum)"},
      {"collective.routing", "shortest",
       "networks with switches: shortest (first shortest path per transfer) or spread (equal-cost "
       "paths, least busy arc first, like ECMP over a fat-tree's cores)"},
      {"collective.forest", "exact",
       "forest packing: exact (attains the cut bound; greedy first, then splitting off and Edmonds' "
       "branchings) or greedy (fast, may fall short of the bound: built vs optimal time reported)"},
  };
}

}  // namespace toposweep::collective
