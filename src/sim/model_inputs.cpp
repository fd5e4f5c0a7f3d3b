#include "toposweep/sim/model_inputs.hpp"

namespace toposweep::sim {

bool same_model_inputs(const Network& a, const Network& b) {
  if (a.vertex_count() != b.vertex_count() || a.compute_count() != b.compute_count() ||
      a.arc_count() != b.arc_count() || a.gpus_per_node() != b.gpus_per_node() ||
      a.uniform_servers() != b.uniform_servers() || a.uniform_gpus() != b.uniform_gpus() ||
      a.link_efficiency() != b.link_efficiency() || !(a.intra_link() == b.intra_link()))
    return false;
  const TopologyInfo &x = a.info(), &y = b.info();
  if (x.kind != y.kind || x.strides != y.strides || x.dims != y.dims || x.tree_groups != y.tree_groups)
    return false;
  for (VertexId v = 0; v < a.compute_count(); ++v)
    if (a.gpus_on(v) != b.gpus_on(v) || !(a.intra_link(v) == b.intra_link(v))) return false;
  for (ArcId i = 0; i < a.arc_count(); ++i) {
    const Arc &p = a.arc(i), &q = b.arc(i);
    if (p.src != q.src || p.dst != q.dst || p.bandwidth_Bps != q.bandwidth_Bps || p.latency_s != q.latency_s)
      return false;
  }
  return true;
}

}  // namespace toposweep::sim
