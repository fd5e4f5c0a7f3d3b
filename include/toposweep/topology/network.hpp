#pragma once
// The network graph every later module uses: a directed multigraph in CSR form. Vertices
// 0..compute_count()-1 are compute nodes (servers or NPUs, each holding `gpus_per_node` GPUs
// joined by `intra_bandwidth_Bps`); switches (relay-only vertices) follow. Arcs carry bandwidth
// (bytes/s) and latency (s). Built once per design point by NetworkBuilder, then immutable and
// cheap to copy.
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "toposweep/util/link_class.hpp"

namespace toposweep {

using VertexId = std::uint32_t;
using ArcId = std::uint32_t;

struct Arc {
  VertexId src = 0;
  VertexId dst = 0;
  double bandwidth_Bps = 0;
  double latency_s = 0;
};

// The order of a network's arcs: by source, then destination (arc ids follow it).
inline bool arc_before(const Arc& a, const Arc& b) {
  return a.src != b.src ? a.src < b.src : a.dst < b.dst;
}

// One dimension of a multi-dimensional (LIBRA / ASTRA-sim style) network.
enum class DimensionType { Ring, FullyConnected, Switch };
struct Dimension {
  DimensionType type = DimensionType::Ring;
  std::uint32_t size = 0;
  double bandwidth_Bps = 0;  // per-NPU bandwidth of this dimension
  double latency_s = 0;
  bool operator==(const Dimension&) const = default;
};

// What the builder knew about the family, for algorithms that exploit structure
// (multi-ring over strides, hierarchical collectives over dimensions).
struct TopologyInfo {
  std::string kind;               // "switch", "fattree", "topoopt", "multidim", "torus", ...
  std::uint32_t degree = 0;       // ports per compute node where uniform, else 0
  double link_bandwidth_Bps = 0;  // per-port bandwidth where uniform, else 0
  double link_latency_s = 0;
  std::vector<std::uint32_t> strides;  // topoopt: ring strides s (ring i -> i+s mod n), each bidirectional
  std::vector<Dimension> dims;         // multidim: dimension 0 fastest in the mixed-radix address
  std::vector<std::uint32_t> torus_dims;

  // Additions (topology module). Everything below is optional detail; zero/empty = not applicable.
  // Each compute node looks the same (an automorphism maps any compute node to any other), so
  // one BFS gives the hop statistics of all. Set only where the family guarantees it.
  bool vertex_transitive = false;
  std::vector<std::string> dim_levels;  // multidim: cost level of each dimension (chiplet/package/node/pod)
  std::uint32_t ring_group = 0;         // topoopt: TotientPerms group size g (0 = explicit strides)
  std::vector<std::pair<std::uint32_t, std::uint32_t>> extra_links;  // topoopt: explicit extra links
  std::uint32_t fattree_tiers = 0;  // fattree: 2 (leaf-spine) or 3 (k-ary fat-tree)
  std::uint32_t fattree_radix = 0;  // fattree: switch ports k
  double oversubscription = 0;      // fattree: leaf down:up port ratio
  std::string optical;              // direct-connect reconfiguration device: "patch_panel", "ocs", "none"
  // Tree families (fattree), where every compute node hangs from one leaf switch: per level below
  // the top, each compute node's group (level 0: its leaf switch, level 1: its pod). Two compute
  // nodes whose groups first agree at level i are 2(i + 1) hops apart, 2(levels + 1) when none
  // does (collective/tree_paths.hpp). Empty elsewhere.
  std::vector<std::vector<std::uint32_t>> tree_groups;
  // Bisection bandwidth known in closed form by the builder (B/s, one direction); 0 = unknown.
  double bisection_closed_form_Bps = 0;
  // rail: NICs (rails) per server, planes, and whether spines join the rails ("full") or not
  // ("none", rail-only); the switch radix is fattree_radix, the leaves' ratio oversubscription.
  std::uint32_t rails = 0;
  std::uint32_t planes = 0;
  std::string rail_spine;
  // dragonfly: routers per group and servers per router (server s is in group
  // s / (routers x terminals), router compute_count() + r in group r / routers), and
  // topology.routing, "minimal" or "valiant" (collective/routing.hpp); empty elsewhere. The cost model
  // tells intra-group from global links by the routers' groups.
  std::uint32_t dragonfly_routers = 0;
  std::uint32_t dragonfly_terminals = 0;
  std::string routing;
};

class Network {
 public:
  Network() = default;

  std::uint32_t vertex_count() const {
    return static_cast<std::uint32_t>(out_offsets_.empty() ? 0 : out_offsets_.size() - 1);
  }
  std::uint32_t compute_count() const { return compute_count_; }
  std::uint32_t switch_count() const { return vertex_count() - compute_count_; }
  bool is_switch(VertexId v) const { return v >= compute_count_; }
  std::uint32_t arc_count() const { return static_cast<std::uint32_t>(arcs_.size()); }

  const Arc& arc(ArcId a) const { return arcs_[a]; }
  const std::vector<Arc>& arcs() const { return arcs_; }
  // Arc ids leaving / entering v. Out-arcs of v are contiguous: ids out_offsets_[v]..[v+1].
  std::span<const ArcId> out_arcs(VertexId v) const {
    return {out_ids_.data() + out_offsets_[v], out_ids_.data() + out_offsets_[v + 1]};
  }
  std::span<const ArcId> in_arcs(VertexId v) const {
    return {in_ids_.data() + in_offsets_[v], in_ids_.data() + in_offsets_[v + 1]};
  }

  std::uint32_t gpus_per_node() const { return gpus_per_node_; }
  // Line rate of the GPU fabric inside a compute node, per GPU and direction.
  double intra_bandwidth_Bps() const { return intra_link_.bandwidth_Bps; }
  // The fabric inside a compute node as collectives see it: achievable fraction and latencies.
  const LinkClass& intra_link() const { return intra_link_; }
  // Mixed servers: compute node v's fabric (intra_link() when every server has the same).
  const LinkClass& intra_link(VertexId v) const { return node_intra_.empty() ? intra_link_ : node_intra_[v]; }
  bool uniform_servers() const { return node_intra_.empty() && node_gpus_.empty(); }
  // Mixed GPU counts (server.gpus = 8*4,4*4): node v's GPUs and its first GPU rank in rank order
  // (ranks fill servers in order). gpus_per_node() is then the largest count.
  bool uniform_gpus() const { return node_gpus_.empty(); }
  std::uint32_t gpus_on(VertexId v) const { return node_gpus_.empty() ? gpus_per_node_ : node_gpus_[v]; }
  std::uint32_t first_gpu(VertexId v) const {
    return node_gpus_.empty() ? v * gpus_per_node_ : first_gpu_[v];
  }
  std::vector<std::uint32_t> gpus_of_nodes() const {
    return node_gpus_.empty() ? std::vector<std::uint32_t>(compute_count_, gpus_per_node_) : node_gpus_;
  }
  // The achievable fraction of the line rate the arcs' bandwidths already include (arcs carry
  // what collectives reach; prices and reports use bandwidth / link_efficiency).
  double link_efficiency() const { return link_efficiency_; }
  std::uint32_t gpu_count() const {
    return node_gpus_.empty() ? compute_count_ * gpus_per_node_ : first_gpu_.back();
  }
  const TopologyInfo& info() const { return info_; }

 private:
  friend class NetworkBuilder;
  std::uint32_t compute_count_ = 0;
  std::uint32_t gpus_per_node_ = 1;
  LinkClass intra_link_;
  std::vector<LinkClass> node_intra_;                 // per compute node when servers differ; empty otherwise
  std::vector<std::uint32_t> node_gpus_, first_gpu_;  // per compute node (+ total) when counts differ
  double link_efficiency_ = 1;
  std::vector<Arc> arcs_;                   // sorted by (src, dst); arc id = index
  std::vector<std::uint32_t> out_offsets_;  // size vertex_count()+1
  std::vector<ArcId> out_ids_;
  std::vector<std::uint32_t> in_offsets_;
  std::vector<ArcId> in_ids_;
  TopologyInfo info_;
};

class NetworkBuilder {
 public:
  NetworkBuilder(std::uint32_t compute_nodes, std::uint32_t gpus_per_node = 1,
                 double intra_bandwidth_Bps = 0);
  // Adds `count` switch vertices; returns the id of the first.
  VertexId add_switches(std::uint32_t count);
  std::uint32_t vertex_count() const { return vertex_count_; }
  // Room for `n` more arcs (no effect on the network).
  void reserve_arcs(std::size_t n) { arcs_.reserve(arcs_.size() + n); }
  void add_arc(VertexId src, VertexId dst, double bandwidth_Bps, double latency_s = 0);
  void add_link(VertexId a, VertexId b, double bandwidth_Bps, double latency_s = 0);  // both directions
  void set_info(TopologyInfo info) { info_ = std::move(info); }
  // The compute nodes' internal fabric (its bandwidth replaces the constructor's) and the
  // achievable fraction of every arc's line rate: build() scales the arcs by it.
  void set_link_classes(const LinkClass& intra, double link_efficiency) {
    intra_link_ = intra;
    link_efficiency_ = link_efficiency;
  }
  TopologyInfo& info() { return info_; }
  // Per-compute-node fabrics (mixed servers); empty: every node has the class above.
  void set_node_intra(std::vector<LinkClass> per_node) { node_intra_ = std::move(per_node); }
  // Per-compute-node GPU counts (mixed servers); empty: every node has the constructor's count.
  void set_node_gpus(std::vector<std::uint32_t> per_node) { node_gpus_ = std::move(per_node); }
  // Sorts arcs by (src, dst) (stable: parallel arcs keep insertion order) and builds the CSR.
  Network build() &&;

 private:
  std::uint32_t compute_count_;
  std::uint32_t vertex_count_;
  std::uint32_t gpus_per_node_;
  LinkClass intra_link_;
  std::vector<LinkClass> node_intra_;
  std::vector<std::uint32_t> node_gpus_;
  double link_efficiency_ = 1;
  std::vector<Arc> arcs_;
  TopologyInfo info_;
};

}  // namespace toposweep
