#include <algorithm>

#include "merged_arcs.hpp"
#include "toposweep/topology/families.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::topology {

Network build_torus(const TorusSpec& spec, const std::string& where) {
  if (spec.dims.empty()) throw BadInput("a torus needs at least one dimension size (e.g. 4,4,4)", where);
  if (!(spec.link_bandwidth_Bps > 0))
    throw BadInput("link bandwidth must be positive", "topology.link_bandwidth");
  std::uint64_t total = 1;
  std::uint32_t degree = 0;
  for (std::uint32_t a : spec.dims) {
    if (a < 2) throw BadInput("torus dimension size " + std::to_string(a) + " must be >= 2", where);
    total *= a;
    if (total > (1u << 26)) throw BadInput("more than 2^26 servers", where);
    degree += a == 2 ? 1 : 2;
  }
  const auto N = static_cast<std::uint32_t>(total);
  NetworkBuilder b(N, spec.server.gpus, spec.server.intra_bandwidth_Bps);
  apply_server_fabric(b, spec.server, b.vertex_count());
  detail::MergedArcs arcs;
  std::uint32_t stride = 1;
  for (std::uint32_t a : spec.dims) {
    for (std::uint32_t v = 0; v < N; ++v) {
      const std::uint32_t c = (v / stride) % a;
      if (a == 2 && c == 1) continue;  // the one link of a size-2 dimension, added once
      arcs.add_link(v, v - c * stride + ((c + 1) % a) * stride, spec.link_bandwidth_Bps, spec.link_latency_s);
    }
    stride *= a;
  }
  arcs.flush_into(b);
  TopologyInfo info;
  info.kind = "torus";
  info.degree = degree;
  info.link_bandwidth_Bps = spec.link_bandwidth_Bps;
  info.link_latency_s = spec.link_latency_s;
  info.torus_dims = spec.dims;
  info.vertex_transitive = true;
  info.optical = spec.optical;
  // Cutting the longest dimension (even size a) in half crosses 2 links per line (1 when
  // a = 2); no balanced cut of a torus does better.
  const std::uint32_t a = *std::max_element(spec.dims.begin(), spec.dims.end());
  if (a % 2 == 0) info.bisection_closed_form_Bps = double(N / a) * (a == 2 ? 1 : 2) * spec.link_bandwidth_Bps;
  b.set_info(std::move(info));
  return std::move(b).build();
}

}  // namespace toposweep::topology
