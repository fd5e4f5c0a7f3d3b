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

// The shape one (plane, rail) takes with radix k: its leaves, each leaf's ports down and up, and
// how many leaves share one set of `up` spines (0: no spines).
struct RailShape {
  std::uint32_t leaves_per_rail = 0;
  LeafPorts ports;
  std::uint32_t leaves_per_spine_group = 0;  // 0: no spine tier
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
  r.ports = leaf_ports(k, s.oversubscription);
  r.leaves_per_rail = ceil_div(s.servers, r.ports.down);
  // One link from each leaf of a spine group to each of its spines: at most k leaves per group.
  r.leaves_per_spine_group = s.spine ? rails * r.leaves_per_rail : r.leaves_per_rail;
  r.fits = r.leaves_per_spine_group <= k;
  return r;
}

std::uint32_t resolved_rails(const RailSpec& s) {
  return s.rails == 0 ? s.server.gpus : s.rails;
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
                          std::to_string(rails) + " rails in a leaf-spine rail fabric",
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
  const std::uint32_t k = spec.radix == 0 ? rail_auto_radix(spec) : spec.radix;
  if (k < 4 || k % 2 != 0)
    throw BadInput("rail switch radix must be an even number >= 4, got " + std::to_string(k),
                   "topology.rail_radix");
  const RailShape shape = rail_shape(spec, R, k);
  if (!shape.fits)
    throw InvalidDesign(std::to_string(S) + " servers x " + std::to_string(R) +
                            " rails do not fit a leaf-spine rail fabric of radix " + std::to_string(k) +
                            " (radix " + std::to_string(rail_auto_radix(spec)) + " would)",
                        "topology.rail_radix");

  const std::uint32_t L = shape.leaves_per_rail, down = shape.ports.down, up = shape.ports.up;
  const bool spines = shape.leaves_per_spine_group > 0;
  // Spine groups: one per plane (spine = full) or one per (plane, rail) (rail-only, large rails).
  const std::uint32_t groups = !spines ? 0 : spec.spine ? P : P * R;
  const double bw = spec.link_bandwidth_Bps / P, lat = spec.link_latency_s;
  NetworkBuilder b(S, spec.server.gpus, spec.server.intra_bandwidth_Bps);
  apply_server_fabric(b, spec.server, S);
  const VertexId leaf0 = b.add_switches(P * R * L);
  const VertexId spine0 = b.add_switches(groups * up);
  b.reserve_arcs(2 * (std::size_t{S} * R * P + std::size_t{P} * R * L * (spines ? up : 0)));
  auto leaf = [&](std::uint32_t p, std::uint32_t r, std::uint32_t l) { return leaf0 + (p * R + r) * L + l; };
  for (std::uint32_t p = 0; p < P; ++p)
    for (std::uint32_t r = 0; r < R; ++r) {
      for (std::uint32_t s = 0; s < S; ++s) b.add_link(s, leaf(p, r, s / down), bw, lat);
      if (!spines) continue;
      const std::uint32_t group = spec.spine ? p : p * R + r;
      for (std::uint32_t l = 0; l < L; ++l)
        for (std::uint32_t j = 0; j < up; ++j) b.add_link(leaf(p, r, l), spine0 + group * up + j, bw, lat);
    }
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
  // rail: half the servers' ports, or the uplinks of half the leaves, whichever is smaller.
  const double nic_Bps = spec.link_bandwidth_Bps * R;  // one server, all planes
  if (L == 1)
    info.bisection_closed_form_Bps = (S / 2) * nic_Bps;
  else if (S % down == 0 && L % 2 == 0)
    info.bisection_closed_form_Bps = (S / 2.0) * nic_Bps * std::min(1.0, double(up) / down);
  b.set_info(std::move(info));
  return std::move(b).build();
}

}  // namespace toposweep::topology
