#include "toposweep/sim/model_inputs.hpp"

#include "toposweep/collective/memo.hpp"

namespace toposweep::sim {

bool same_model_inputs(const Network& a, const Network& b) {
  // The same arcs, strides and values: twins whose factors are both 1 (collective/memo.hpp).
  const auto twins = power_of_two_twin_factors(a, b);
  if (!twins || twins->bandwidth != 1 || twins->latency != 1) return false;
  if (a.gpus_per_node() != b.gpus_per_node() || a.uniform_servers() != b.uniform_servers() ||
      a.uniform_gpus() != b.uniform_gpus() || a.link_efficiency() != b.link_efficiency() ||
      !(a.intra_link() == b.intra_link()))
    return false;
  const TopologyInfo &x = a.info(), &y = b.info();
  if (x.kind != y.kind || x.dims != y.dims || x.tree_groups != y.tree_groups) return false;
  for (VertexId v = 0; v < a.compute_count(); ++v)
    if (a.gpus_on(v) != b.gpus_on(v) || !(a.intra_link(v) == b.intra_link(v))) return false;
  return true;
}

}  // namespace toposweep::sim
