#pragma once
// Topology families as typed specifications, built without a Config. build_network() parses
// the topology.* keys into one of these; the optimizers call the builders directly (e.g. to
// rebuild a topoopt network after a new degree split). Every builder validates its spec and
// throws BadInput naming `where` (a key, or the caller's label) on an inconsistent design.
//
// Conventions shared by all families (docs/topology.md has the full text):
//  - compute nodes are vertices 0..n-1, switches follow;
//  - a physical link is two arcs, one per direction, each with the full port bandwidth;
//  - parallel links between the same ordered pair are merged into one arc whose bandwidth is
//    their sum (so shortest-path routing sees the whole capacity); ports are counted apart.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "toposweep/topology/network.hpp"

namespace toposweep::topology {

// A server: its GPUs, the fabric joining them (line rate per GPU and direction, the fraction of
// it collectives reach, NCCL's latencies) and the fraction of its network links' line rate
// collectives reach (applied to every arc of the network).
struct ServerSpec {
  std::uint32_t gpus = 1;
  double intra_bandwidth_Bps = 0;
  double intra_efficiency = 1;
  double intra_latency_s = 0;
  double intra_step_latency_s = 0;
  double link_efficiency = 1;
  // Mixed servers (server.intra_bandwidth = 300GB/s*4,16GB/s*4, or a mixed server.device list
  // whose devices bring different fabrics): each server's fabric, server 0 first. Empty: every
  // server has intra(); a list of equal classes is stored empty.
  std::vector<LinkClass> intra_of_server;
  // GPUs of each server (server.gpus = 8*4,4*4); empty: every server has `gpus` (which is the
  // largest count when they differ).
  std::vector<std::uint32_t> gpus_of_server;
  LinkClass intra() const {
    return {intra_bandwidth_Bps, intra_efficiency, intra_latency_s, intra_step_latency_s};
  }
  bool operator==(const ServerSpec&) const = default;
};

// Sets the builder's server fabric and link efficiency from `server` (every family builder calls
// it): per-server fabrics must list one class per compute node (BadInput naming `where`).
void apply_server_fabric(NetworkBuilder& b, const ServerSpec& server, std::uint32_t compute_nodes,
                         const std::string& where = "key server.intra_bandwidth");

// One ideal non-blocking switch; each server has `degree` ports of `link_bandwidth_Bps`,
// modelled as one uplink and one downlink of degree x link_bandwidth.
struct SwitchSpec {
  std::uint32_t servers = 0;
  std::uint32_t degree = 1;
  double link_bandwidth_Bps = 0;
  double link_latency_s = 0;
  ServerSpec server;
  bool operator==(const SwitchSpec&) const = default;
};
Network build_switch(const SwitchSpec& spec);

// Folded Clos. tiers = 2: leaf-spine; tiers = 3: k-ary fat-tree (pods of edge + aggregation
// switches, core on top). Leaves split their k ports into down:up = oversubscription:1.
// Servers attach with `degree` ports each (port p of server i is leaf port i*degree+p).
// Only the switches the servers need are built (a partial tree keeps the full core).
// radix = 0 picks the smallest even radix that fits.
struct FatTreeSpec {
  std::uint32_t servers = 0;
  std::uint32_t degree = 1;
  std::uint32_t tiers = 3;
  std::uint32_t radix = 0;
  double oversubscription = 1;
  double link_bandwidth_Bps = 0;
  double link_latency_s = 0;
  ServerSpec server;
  bool operator==(const FatTreeSpec&) const = default;
};
Network build_fattree(const FatTreeSpec& spec);
// The smallest even radix whose fat-tree of `tiers` holds `server_ports` ports.
std::uint32_t fattree_auto_radix(std::uint32_t server_ports, std::uint32_t tiers, double oversubscription);
// The radix build_fattree uses when spec.radix == 0: the smallest that fits, raised (up to twice
// it) to one whose leaves hold whole servers, so no server's ports straddle two leaves.
std::uint32_t fattree_auto_radix(std::uint32_t servers, std::uint32_t degree, std::uint32_t tiers,
                                 double oversubscription);

// Rail-optimized Clos (NVIDIA DGX SuperPOD, Meta's RoCE clusters), its multi-plane form (Alibaba
// HPN) and rail-only (Wang et al., 2024). Every server has `rails` NICs (0: server.gpus, one per
// GPU), each of link_bandwidth_Bps split over `planes` ports of link_bandwidth_Bps / planes; port
// (plane p, rail r) of server s goes to leaf s / down of rail r in plane p, so each (plane, rail)
// has ceil(servers / down) leaf switches of `radix` ports. spine = true: each plane's leaves, all
// rails together, share `up` spine switches (one link from every leaf to each; the leaves split
// down:up = oversubscription:1 as the fat-tree's). spine = false (rail-only): nothing joins two
// rails; a rail that fits one switch is that switch (all its ports down), a larger rail gets its
// own spines. The server is one vertex holding its GPUs and NICs: a route that leaves a server on
// rail j towards a GPU of another rail is NCCL's PXN relay (GPU i -> NVLink -> GPU j -> NIC j),
// whose NVLink hop is inside the server vertex. radix = 0 picks the smallest even radix that fits
// (rail-only: that fits every server on one switch per rail). tiers = 3 puts the spine tier of a
// group (a plane, or one rail of a plane on rail-only) in pods as the fat-tree's: a pod holds the
// leaves of ⌊(k/2) / rails in the group⌋ server blocks, all rails of the group (at most k/2
// leaves), each linked to the pod's `up` aggregation switches; aggregation switch j of every pod
// links to the C cores of core group j, the fewest C dividing k/2 whose ports hold every pod's
// k/2 uplinks (k/2 / C parallel links per pair, one arc). A rail-only rail that fits one switch
// stays that switch whatever `tiers` says.
struct RailSpec {
  std::uint32_t servers = 0;
  std::uint32_t rails = 0;
  std::uint32_t planes = 1;
  std::uint32_t radix = 0;
  std::uint32_t tiers = 2;
  bool spine = true;
  double oversubscription = 1;
  double link_bandwidth_Bps = 0;
  double link_latency_s = 0;
  ServerSpec server;
  bool operator==(const RailSpec&) const = default;
};
Network build_rail(const RailSpec& spec);
// The radix build_rail uses when spec.radix == 0 (rails already resolved, > 0).
std::uint32_t rail_auto_radix(const RailSpec& spec);

// Dragonfly (Kim, Dally, Scott and Abts, ISCA 2008; Slingshot systems): `groups` groups of
// `routers` routers, all-to-all inside a group, `terminals` servers (one port each) per router and
// `global_links` global ports per router. Global port k of group i (router k / global_links) goes
// to group i + (k mod (groups-1)) + 1 (mod groups), so every pair of groups gets
// routers x global_links / (groups - 1) links (which must divide); groups = 0 is the balanced
// maximum, routers x global_links + 1, one link per pair of groups. `valiant`: topology.routing =
// valiant (Kim et al. Sec. 4: traffic between groups goes minimally to a random intermediate group,
// then minimally on), carried on the network as TopologyInfo::routing; false: minimal.
struct DragonflySpec {
  std::uint32_t groups = 0;
  std::uint32_t routers = 4;
  std::uint32_t terminals = 2;
  std::uint32_t global_links = 2;
  double link_bandwidth_Bps = 0;
  double link_latency_s = 0;
  bool valiant = false;
  ServerSpec server;
  bool operator==(const DragonflySpec&) const = default;
};
Network build_dragonfly(const DragonflySpec& spec);

// A leaf switch's k ports split down:up = oversubscription:1, rounded to whole ports, at least
// one each way (the fat-tree's and the rail's leaves).
struct LeafPorts {
  std::uint32_t down = 0;  // towards servers
  std::uint32_t up = 0;    // towards the next tier
};
LeafPorts leaf_ports(std::uint32_t k, double oversubscription);

// Direct-connect circulant of TopoOpt: every stride s is a bidirectional ring (arcs i -> i+s
// and i -> i-s mod n) using 2 ports per server; extra links use one port at each end. At most
// `degree` ports per server are used.
struct TopoOptSpec {
  std::uint32_t servers = 0;
  std::uint32_t degree = 0;
  double link_bandwidth_Bps = 0;
  double link_latency_s = 0;
  std::vector<std::uint32_t> strides;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> extra_links;
  std::uint32_t ring_group = 0;  // recorded in info(); with no strides, TotientPerms' group (0: servers)
  // With no strides, build_network(TopologySpec) picks `rings` bidirectional rings (0: degree/2)
  // by TotientPerms; build_topoopt itself needs the strides.
  std::uint32_t rings = 0;
  std::string optical = "patch_panel";
  ServerSpec server;
  bool operator==(const TopoOptSpec&) const = default;
};
Network build_topoopt(const TopoOptSpec& spec, const std::string& strides_where = "topology.strides");

// LIBRA / ASTRA-sim multi-dimensional network; compute nodes are NPUs (gpus_per_node = 1).
// NPU address is mixed radix, dimension 0 fastest. Per-NPU bandwidth bw_k of dimension k
// becomes arcs so that each NPU's egress in dimension k is exactly bw_k:
//   ring   (n_k >= 3): arcs to both neighbours, bw_k/2 each; n_k = 2: one arc of bw_k;
//   fc:     an arc to each of the n_k-1 peers, bw_k/(n_k-1) each;
//   switch: one switch vertex per line of dimension k; NPU->switch and switch->NPU arcs of
//           bw_k, each with half the dimension latency (one NPU-to-NPU crossing = latency_k).
// Ring and fc arcs carry latency_k. Dimension levels name the cost row (chiplet/package/node/pod).
struct MultiDimSpec {
  std::vector<Dimension> dims;
  std::vector<std::string> levels;  // empty: the last D of chiplet, package, node, pod
  bool operator==(const MultiDimSpec&) const = default;
};
Network build_multidim(const MultiDimSpec& spec, const std::string& where = "topology.dims");
// Default cost levels for D dimensions: the top dimension is always "pod".
std::vector<std::string> default_dim_levels(std::size_t dims);
// "ring:4,fc:8,switch:32" -> dimensions with sizes and types (bandwidth/latency left 0).
std::vector<Dimension> parse_dims(const std::vector<std::string>& items, const std::string& where);
const char* dimension_type_name(DimensionType t);

// k-dimensional wrap-around torus of servers; a dimension of size 2 has one link (not two).
struct TorusSpec {
  std::vector<std::uint32_t> dims;
  double link_bandwidth_Bps = 0;
  double link_latency_s = 0;
  std::string optical = "none";
  ServerSpec server;
  bool operator==(const TorusSpec&) const = default;
};
Network build_torus(const TorusSpec& spec, const std::string& where = "topology.dims");

// Random simple d-regular graph (Steger-Wormald pairing with restarts), reproducible from
// the seed; redrawn (deterministically) until connected.
struct ExpanderSpec {
  std::uint32_t servers = 0;
  std::uint32_t degree = 0;
  double link_bandwidth_Bps = 0;
  double link_latency_s = 0;
  std::uint64_t seed = 1;
  std::string optical = "patch_panel";
  ServerSpec server;
  bool operator==(const ExpanderSpec&) const = default;
};
Network build_expander(const ExpanderSpec& spec);

}  // namespace toposweep::topology
