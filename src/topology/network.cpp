#include "toposweep/topology/network.hpp"

#include <algorithm>

#include "toposweep/util/error.hpp"

namespace toposweep {

NetworkBuilder::NetworkBuilder(std::uint32_t compute_nodes, std::uint32_t gpus_per_node,
                               double intra_bandwidth_Bps)
    : compute_count_(compute_nodes), vertex_count_(compute_nodes), gpus_per_node_(gpus_per_node) {
  intra_link_.bandwidth_Bps = intra_bandwidth_Bps;
}

VertexId NetworkBuilder::add_switches(std::uint32_t count) {
  VertexId first = vertex_count_;
  vertex_count_ += count;
  return first;
}

void NetworkBuilder::add_arc(VertexId src, VertexId dst, double bandwidth_Bps, double latency_s) {
  if (src >= vertex_count_ || dst >= vertex_count_)
    throw RuntimeFailure("NetworkBuilder: arc " + std::to_string(src) + "->" + std::to_string(dst) +
                         " outside " + std::to_string(vertex_count_) + " vertices");
  arcs_.push_back(Arc{src, dst, bandwidth_Bps, latency_s});
}

void NetworkBuilder::add_link(VertexId a, VertexId b, double bandwidth_Bps, double latency_s) {
  add_arc(a, b, bandwidth_Bps, latency_s);
  add_arc(b, a, bandwidth_Bps, latency_s);
}

Network NetworkBuilder::build() && {
  Network n;
  n.compute_count_ = compute_count_;
  n.gpus_per_node_ = gpus_per_node_;
  n.intra_link_ = intra_link_;
  n.node_intra_ = std::move(node_intra_);
  if (!node_gpus_.empty()) {
    n.first_gpu_.assign(node_gpus_.size() + 1, 0);
    for (std::size_t v = 0; v < node_gpus_.size(); ++v) n.first_gpu_[v + 1] = n.first_gpu_[v] + node_gpus_[v];
    n.node_gpus_ = std::move(node_gpus_);
  }
  n.link_efficiency_ = link_efficiency_;
  if (link_efficiency_ != 1)
    for (Arc& a : arcs_) a.bandwidth_Bps *= link_efficiency_;
  // Families that merge parallel arcs hand them over sorted already.
  if (!std::is_sorted(arcs_.begin(), arcs_.end(), arc_before))
    std::stable_sort(arcs_.begin(), arcs_.end(), arc_before);
  n.arcs_ = std::move(arcs_);
  const std::uint32_t V = vertex_count_;
  const std::uint32_t E = static_cast<std::uint32_t>(n.arcs_.size());
  n.out_offsets_.assign(V + 1, 0);
  n.in_offsets_.assign(V + 1, 0);
  for (const Arc& a : n.arcs_) {
    ++n.out_offsets_[a.src + 1];
    ++n.in_offsets_[a.dst + 1];
  }
  for (std::uint32_t v = 0; v < V; ++v) {
    n.out_offsets_[v + 1] += n.out_offsets_[v];
    n.in_offsets_[v + 1] += n.in_offsets_[v];
  }
  n.out_ids_.resize(E);
  n.in_ids_.resize(E);
  std::vector<std::uint32_t> in_fill(n.in_offsets_.begin(), n.in_offsets_.end() - 1);
  for (ArcId id = 0; id < E; ++id) {
    n.out_ids_[id] = id;  // arcs are sorted by src, so out-arcs are contiguous
    n.in_ids_[in_fill[n.arcs_[id].dst]++] = id;
  }
  n.info_ = std::move(info_);
  return n;
}

}  // namespace toposweep
