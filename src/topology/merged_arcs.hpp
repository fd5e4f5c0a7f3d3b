#pragma once
// Private helper of the family builders: collects arcs, merges parallel ones (same ordered
// pair: bandwidths add, the larger latency is kept) and hands them to a NetworkBuilder.
#include <algorithm>
#include <vector>

#include "toposweep/topology/network.hpp"

namespace toposweep::topology::detail {

class MergedArcs {
 public:
  void reserve(std::size_t arcs) { arcs_.reserve(arcs); }
  void add_arc(VertexId src, VertexId dst, double bandwidth_Bps, double latency_s) {
    arcs_.push_back(Arc{src, dst, bandwidth_Bps, latency_s});
  }
  void add_link(VertexId a, VertexId b, double bandwidth_Bps, double latency_s) {
    add_arc(a, b, bandwidth_Bps, latency_s);
    add_arc(b, a, bandwidth_Bps, latency_s);
  }
  void flush_into(NetworkBuilder& builder) {
    builder.reserve_arcs(arcs_.size());
    // A family that adds its arcs in the network's order (the fat-tree) leaves nothing to sort.
    if (!std::is_sorted(arcs_.begin(), arcs_.end(), arc_before))
      std::sort(arcs_.begin(), arcs_.end(), arc_before);
    for (std::size_t i = 0; i < arcs_.size();) {
      Arc merged = arcs_[i];
      std::size_t j = i + 1;
      for (; j < arcs_.size() && arcs_[j].src == merged.src && arcs_[j].dst == merged.dst; ++j) {
        merged.bandwidth_Bps += arcs_[j].bandwidth_Bps;
        merged.latency_s = std::max(merged.latency_s, arcs_[j].latency_s);
      }
      builder.add_arc(merged.src, merged.dst, merged.bandwidth_Bps, merged.latency_s);
      i = j;
    }
    arcs_.clear();
  }

 private:
  std::vector<Arc> arcs_;
};

}  // namespace toposweep::topology::detail
