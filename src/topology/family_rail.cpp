// Rail-optimized, multi-plane and rail-only Clos (families.hpp, RailSpec; docs/topology.md).
#include <algorithm>
#include <cmath>
#include <string>

#include "toposweep/topology/families.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::topology {
namespace {

std::uint32_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return static_cast<std::uint32_t>((a + b - 1) / b);
}

// The shape of one spine group (a plane, or one rail of a plane on rail-only) with radix k: its
// leaves per rail, each leaf's ports down and up, and above them either `up` spines (2 tiers) or
// pods of aggregation switches under `up` core groups (3 tiers).
struct RailShape {
  std::uint32_t leaves_per_rail = 0;
  LeafPorts ports;
  bool spines = false;                // false: each rail is one switch (rail-only)
  std::uint32_t group_rails = 0;      // rails one spine group joins: all (full) or one (rail-only)
  std::uint32_t blocks_per_pod = 0;   // 3 tiers: server blocks (leaf indices) per pod
  std::uint32_t pods = 0;             // 3 tiers: pods per group
  std::uint32_t cores_per_group = 0;  // 3 tiers: cores per core group (C)
  bool fits = false;
};

RailShape rail_shape(const RailSpec& s, std::uint32_t rails, std::uint32_t k) {
  RailShape r;
  if (!s.spine && s.servers <= k) {
    // Rail-only, one switch per rail: every port faces a server.
    r.leaves_per_rail = 1;
    r.ports = {k, 0};
    r.fits = true;
    return r;
  }
  r.spines = true;
  r.ports = leaf_ports(k, s.oversubscription);
  r.leaves_per_rail = ceil_div(s.servers, r.ports.down);
  r.group_rails = s.spine ? rails : 1;
  if (s.tiers != 3) {
    // One link from each leaf of a spine group to each of its spines: at most k leaves per group.
    r.fits = std::uint64_t{r.group_rails} * r.leaves_per_rail <= k;
    return r;
  }
  // A pod: whole server blocks, every rail of the group, at most k/2 leaves (an aggregation
  // switch has k/2 ports down and k/2 up, as the fat-tree's); at most k pods (a core's ports).
  const std::uint32_t half = k / 2;
  r.blocks_per_pod = half / r.group_rails;
  if (r.blocks_per_pod == 0) return r;
  r.pods = ceil_div(r.leaves_per_rail, r.blocks_per_pod);
  if (r.pods > k) return r;
  // The fewest cores per group whose k ports hold every pod's k/2 / C links to each.
  for (std::uint32_t c = 1; c <= half; ++c)
    if (half % c == 0 && std::uint64_t{r.pods} * (half / c) <= k) {
      r.cores_per_group = c;
      break;
    }
  r.fits = true;
  return r;
}

std::uint32_t resolved_rails(const RailSpec& s) {
  return s.rails == 0 ? s.server.gpus : s.rails;
}

std::string fabric_name(const RailSpec& s) {
  return s.tiers == 3 ? "3-tier rail fabric" : "leaf-spine rail fabric";
}

}  // namespace

std::uint32_t rail_auto_radix(const RailSpec& spec) {
  const std::uint32_t rails = resolved_rails(spec);
  // Rail-only: one switch per rail (Wang et al.'s rail switch), the smallest even one that holds
  // every server; rail-local spines only where topology.rail_radix asks for a smaller one.
  if (!spec.spine && spec.servers <= 4096) return std::max<std::uint32_t>(4, spec.servers + spec.servers % 2);
  for (std::uint32_t k = 4; k <= 4096; k += 2)
    if (rail_shape(spec, rails, k).fits) return k;
  throw InvalidDesign("no switch radix up to 4096 fits " + std::to_string(spec.servers) + " servers x " +
                          std::to_string(rails) + " rails in a " + fabric_name(spec),
                      "topology.rail_radix");
}

Network build_rail(const RailSpec& spec) {
  if (spec.servers < 1) throw BadInput("a rail fabric needs at least 1 server", "topology.servers");
  if (spec.planes < 1) throw BadInput("planes must be at least 1", "topology.planes");
  if (!(spec.oversubscription > 0) || !std::isfinite(spec.oversubscription))
    throw BadInput("oversubscription must be a positive number", "topology.oversubscription");
  if (!(spec.link_bandwidth_Bps > 0))
    throw BadInput("link bandwidth must be positive", "topology.link_bandwidth");
  const std::uint32_t R = resolved_rails(spec), P = spec.planes, S = spec.servers;
  if (R < 1) throw BadInput("rails must be at least 1", "topology.rails");
  if (spec.tiers != 2 && spec.tiers != 3)
    throw BadInput("rail tiers must be 2 or 3, got " + std::to_string(spec.tiers), "topology.rail_tiers");
  const std::uint32_t k = spec.radix == 0 ? rail_auto_radix(spec) : spec.radix;
  if (k < 4 || k % 2 != 0)
    throw BadInput("rail switch radix must be an even number >= 4, got " + std::to_string(k),
                   "topology.rail_radix");
  const RailShape shape = rail_shape(spec, R, k);
  if (!shape.fits)
    throw InvalidDesign(std::to_string(S) + " servers x " + std::to_string(R) + " rails do not fit a " +
                            fabric_name(spec) + " of radix " + std::to_string(k) + " (radix " +
                            std::to_string(rail_auto_radix(spec)) + " would)",
                        "topology.rail_radix");

  const std::uint32_t L = shape.leaves_per_rail, down = shape.ports.down, up = shape.ports.up;
  const bool spines = shape.spines, three = spines && spec.tiers == 3;
  // Spine groups: one per plane (spine = full) or one per (plane, rail) (rail-only, large rails).
  const std::uint32_t groups = !spines ? 0 : spec.spine ? P : P * R;
  const std::uint32_t pods = shape.pods, C = shape.cores_per_group, half = k / 2;
  const double bw = spec.link_bandwidth_Bps / P, lat = spec.link_latency_s;
  NetworkBuilder b(S, spec.server.gpus, spec.server.intra_bandwidth_Bps);
  apply_server_fabric(b, spec.server, S);
  const VertexId leaf0 = b.add_switches(P * R * L);
  // Two tiers: `up` spines per group. Three: `up` aggregation switches per pod, then `up` core
  // groups of C cores per group.
  const VertexId spine0 = b.add_switches(groups * (three ? pods * up : up));
  const VertexId core0 = three ? b.add_switches(groups * up * C) : spine0;
  b.reserve_arcs(2 * (std::size_t{S} * R * P + std::size_t{P} * R * L * (spines ? up : 0) +
                      (three ? std::size_t{groups} * pods * up * C : 0)));
  auto leaf = [&](std::uint32_t p, std::uint32_t r, std::uint32_t l) { return leaf0 + (p * R + r) * L + l; };
  // The switch leaf l of a group links to as its j-th uplink: spine j, or aggregation switch j
  // of the leaf's pod.
  auto above = [&](std::uint32_t group, std::uint32_t l, std::uint32_t j) {
    return three ? spine0 + (group * pods + l / shape.blocks_per_pod) * up + j : spine0 + group * up + j;
  };
  for (std::uint32_t p = 0; p < P; ++p)
    for (std::uint32_t r = 0; r < R; ++r) {
      for (std::uint32_t s = 0; s < S; ++s) b.add_link(s, leaf(p, r, s / down), bw, lat);
      if (!spines) continue;
      const std::uint32_t group = spec.spine ? p : p * R + r;
      for (std::uint32_t l = 0; l < L; ++l)
        for (std::uint32_t j = 0; j < up; ++j) b.add_link(leaf(p, r, l), above(group, l, j), bw, lat);
    }
  // Aggregation switch j of each pod to the C cores of core group j, k/2 / C links to each.
  if (three)
    for (std::uint32_t g = 0; g < groups; ++g)
      for (std::uint32_t pod = 0; pod < pods; ++pod)
        for (std::uint32_t j = 0; j < up; ++j)
          for (std::uint32_t c = 0; c < C; ++c)
            b.add_link(spine0 + (g * pods + pod) * up + j, core0 + (g * up + j) * C + c, bw * (half / C),
                       lat);
  TopologyInfo info;
  info.kind = "rail";
  info.degree = R * P;
  info.link_bandwidth_Bps = bw;
  info.link_latency_s = lat;
  info.fattree_radix = k;
  info.oversubscription = spines ? spec.oversubscription : 0;
  info.optical = "none";
  info.rails = R;
  info.planes = P;
  info.rail_spine = spec.spine ? "full" : "none";
  // Bisection, where it is known in closed form (tests/unit/topology/test_rail.cpp checks it
  // against an exhaustive search): one leaf per rail: every balanced split leaves floor(S/2)
  // servers' NIC ports to cross (all switches on the larger side); full leaves, an even number per
  // rail: half the servers' ports, or the uplinks of half the leaves, whichever is smaller (a
  // third tier adds no narrower cut: a pod's aggregation switches have as many ports up as down).
  const double nic_Bps = spec.link_bandwidth_Bps * R;  // one server, all planes
  if (L == 1)
    info.bisection_closed_form_Bps = (S / 2) * nic_Bps;
  else if (S % down == 0 && L % 2 == 0)
    info.bisection_closed_form_Bps = (S / 2.0) * nic_Bps * std::min(1.0, double(up) / down);
  b.set_info(std::move(info));
  return std::move(b).build();
}

}  // namespace toposweep::topology
