#include "toposweep/collective/config_keys.hpp"

#include "toposweep/collective/plan.hpp"
#include "toposweep/util/config_checks.hpp"

namespace toposweep::collective {

std::vector<KeySpec> config_keys() {
  return {
      {"collective.algorithm", "auto", collective_algorithm_help(),
       checks::one_of(collective_algorithm_names())},
      {"collective.model", "pipelined",
       "hierarchical and two-level collectives: pipelined (max over dimensions) or sequential (sum)",
       checks::one_of({"pipelined", "sequential"})},
      {"collective.routing", "auto",
       "networks with switches: ecmp (equal-cost paths as a Clos fabric hashes them: even split per "
       "hop in the time, one hashed path per flow in the flow model), spread (adaptive: least busy "
       "equal-cost arc first), shortest (first shortest path per transfer) or auto (ecmp on fattree, "
       "switch, rail and dragonfly, shortest on other networks, e.g. edge-list files)",
       checks::one_of({"auto", "ecmp", "spread", "shortest"})},
      {"collective.chunks", "1",
       "ASTRA-sim's preferred-dataset-splits: run each collective in this many chunks, one chunk per "
       "dimension "
       "at a time, each paying every step's latency (1: off)",
       checks::integer(1, 1 << 20)},
      {"collective.endpoint_delay", "0s",
       "ASTRA-sim's endpoint-delay: processing time per message (time; 0s: off)",
       checks::quantity(Quantity::Time, false)},
      {"collective.reduction_bandwidth", "0",
       "ASTRA-sim's local-mem-bw: a reduce step moves 3x its message through local memory at this bandwidth "
       "(0: reductions are free)",
       [](const std::string& v, const std::string& w) {
         if (v != "0") checks::quantity(Quantity::Bandwidth, true)(v, w);
       }},
      {"collective.forest", "exact",
       "forest packing: exact (attains the cut bound; greedy first, then splitting off and Edmonds' "
       "branchings) or greedy (fast, may fall short of the bound: built vs optimal time reported)",
       checks::one_of({"exact", "greedy"})},
  };
}

}  // namespace toposweep::collective
