// Dragonfly (families.hpp, DragonflySpec; docs/topology.md).
#include <string>

#include "merged_arcs.hpp"
#include "toposweep/topology/families.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::topology {

Network build_dragonfly(const DragonflySpec& spec) {
  const std::uint32_t a = spec.routers, p = spec.terminals, h = spec.global_links;
  if (a < 1 || p < 1) throw BadInput("a dragonfly needs routers and terminals", "topology.routers_per_group");
  if (!(spec.link_bandwidth_Bps > 0))
    throw BadInput("link bandwidth must be positive", "topology.link_bandwidth");
  const std::uint64_t g64 = spec.groups != 0 ? spec.groups : std::uint64_t{a} * h + 1;
  const std::uint64_t global_ports = std::uint64_t{a} * h;
  if (g64 > 1 && (global_ports == 0 || global_ports % (g64 - 1) != 0))
    throw InvalidDesign(std::to_string(g64) + " groups: the " + std::to_string(global_ports) +
                            " global ports of a group (routers x global_links) must split evenly over the " +
                            std::to_string(g64 - 1) + " other groups",
                        "topology.groups");
  if (g64 * a * p >= (1u << 26)) throw InvalidDesign("too many servers", "topology.groups");
  const std::uint32_t g = static_cast<std::uint32_t>(g64), S = g * a * p;
  const double bw = spec.link_bandwidth_Bps, lat = spec.link_latency_s;
  NetworkBuilder b(S, spec.server.gpus, spec.server.intra_bandwidth_Bps);
  apply_server_fabric(b, spec.server, S);
  const VertexId router0 = b.add_switches(g * a);
  detail::MergedArcs arcs;
  arcs.reserve(2 * (std::size_t{S} + std::size_t{g} * a * (a - 1) / 2 + std::size_t{g} * a * h / 2));
  for (std::uint32_t s = 0; s < S; ++s) arcs.add_link(s, router0 + s / p, bw, lat);
  for (std::uint32_t i = 0; i < g; ++i) {
    for (std::uint32_t r = 0; r < a; ++r)
      for (std::uint32_t q = r + 1; q < a; ++q)
        arcs.add_link(router0 + i * a + r, router0 + i * a + q, bw, lat);
    if (g < 2) continue;
    // Port k of group i reaches group i + (k mod (g-1)) + 1; each end adds its own direction.
    for (std::uint32_t k = 0; k < a * h; ++k) {
      const std::uint32_t m = k / (g - 1), o = k % (g - 1), j = (i + o + 1) % g;
      const std::uint32_t k_back = m * (g - 1) + (g - 2 - o);
      arcs.add_arc(router0 + i * a + k / h, router0 + j * a + k_back / h, bw, lat);
    }
  }
  arcs.flush_into(b);
  TopologyInfo info;
  info.kind = "dragonfly";
  info.degree = 1;
  info.link_bandwidth_Bps = bw;
  info.link_latency_s = lat;
  info.optical = "none";
  info.dragonfly_routers = a;
  info.dragonfly_terminals = p;
  info.routing = spec.valiant ? "valiant" : "minimal";
  b.set_info(std::move(info));
  return std::move(b).build();
}

}  // namespace toposweep::topology
