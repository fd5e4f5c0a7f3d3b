#include <algorithm>
#include <vector>

#include "merged_arcs.hpp"
#include "toposweep/topology/families.hpp"
#include "toposweep/topology/perm_sets.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::topology {

Network build_topoopt(const TopoOptSpec& spec, const std::string& strides_where) {
  const std::uint32_t n = spec.servers;
  if (n < 3) throw BadInput("topoopt needs at least 3 servers, got " + std::to_string(n), "topology.servers");
  if (spec.degree < 1 || spec.degree >= n)
    throw BadInput("degree " + std::to_string(spec.degree) +
                       " must be between 1 and servers-1 = " + std::to_string(n - 1),
                   "topology.degree");
  if (!(spec.link_bandwidth_Bps > 0))
    throw BadInput("link bandwidth must be positive", "topology.link_bandwidth");
  const std::vector<std::uint32_t> strides = normalize_strides(n, spec.strides, strides_where);
  if (2 * strides.size() > spec.degree)
    throw BadInput(std::to_string(strides.size()) + " bidirectional rings need " +
                       std::to_string(2 * strides.size()) + " ports but degree is " +
                       std::to_string(spec.degree),
                   strides_where);

  std::vector<std::uint32_t> ports(n, static_cast<std::uint32_t>(2 * strides.size()));
  detail::MergedArcs arcs;
  for (std::uint32_t s : strides)
    for (std::uint32_t i = 0; i < n; ++i)
      arcs.add_link(i, (i + s) % n, spec.link_bandwidth_Bps, spec.link_latency_s);
  for (const auto& [a, b] : spec.extra_links) {
    if (a >= n || b >= n || a == b)
      throw BadInput("extra link " + std::to_string(a) + "-" + std::to_string(b) +
                         " must join two different servers below " + std::to_string(n),
                     "topology.extra_links");
    if (++ports[a] > spec.degree || ++ports[b] > spec.degree)
      throw BadInput("extra link " + std::to_string(a) + "-" + std::to_string(b) + " exceeds degree " +
                         std::to_string(spec.degree) + " at a server",
                     "topology.extra_links");
    arcs.add_link(a, b, spec.link_bandwidth_Bps, spec.link_latency_s);
  }
  NetworkBuilder b(n, spec.server.gpus, spec.server.intra_bandwidth_Bps);
  apply_server_fabric(b, spec.server, b.vertex_count());
  arcs.flush_into(b);
  TopologyInfo info;
  info.kind = "topoopt";
  info.degree = spec.degree;
  info.link_bandwidth_Bps = spec.link_bandwidth_Bps;
  info.link_latency_s = spec.link_latency_s;
  info.strides = strides;
  info.extra_links = spec.extra_links;
  info.ring_group = spec.ring_group;
  info.optical = spec.optical;
  // Rotations i -> i+1 are automorphisms of a circulant; extra links break the symmetry.
  info.vertex_transitive = spec.extra_links.empty();
  if (strides.size() == 1 && strides[0] == 1 && spec.extra_links.empty() && n % 2 == 0)
    info.bisection_closed_form_Bps = 2 * spec.link_bandwidth_Bps;  // a ring is cut in two places
  b.set_info(std::move(info));
  return std::move(b).build();
}

}  // namespace toposweep::topology
