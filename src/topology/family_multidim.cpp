#include <cmath>

#include "merged_arcs.hpp"
#include "toposweep/topology/families.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"
#include "toposweep/util/units.hpp"

namespace toposweep::topology {

const char* dimension_type_name(DimensionType t) {
  switch (t) {
    case DimensionType::Ring:
      return "ring";
    case DimensionType::FullyConnected:
      return "fc";
    case DimensionType::Switch:
      return "switch";
  }
  return "?";
}

std::vector<std::string> default_dim_levels(std::size_t dims) {
  static constexpr const char* kLevels[] = {"chiplet", "package", "node", "pod"};
  std::vector<std::string> out;
  for (std::size_t k = 0; k < dims; ++k) {
    const std::ptrdiff_t level = 4 - static_cast<std::ptrdiff_t>(dims) + static_cast<std::ptrdiff_t>(k);
    out.push_back(level < 0 ? "chiplet" : kLevels[level]);
  }
  return out;
}

std::vector<Dimension> parse_dims(const std::vector<std::string>& items, const std::string& where) {
  if (items.empty()) throw BadInput("no dimensions given (e.g. ring:4,fc:8,switch:32)", where);
  std::vector<Dimension> dims;
  for (const std::string& item : items) {
    const auto colon = item.find(':');
    if (colon == std::string::npos)
      throw BadInput("dimension '" + item + "' is not type:size (ring, fc or switch)", where);
    const std::string type = to_lower(trim(std::string_view(item).substr(0, colon)));
    const std::string size_text(trim(std::string_view(item).substr(colon + 1)));
    Dimension d;
    if (type == "ring")
      d.type = DimensionType::Ring;
    else if (type == "fc" || type == "fullyconnected" || type == "fully_connected")
      d.type = DimensionType::FullyConnected;
    else if (type == "switch" || type == "sw")
      d.type = DimensionType::Switch;
    else
      throw BadInput("dimension type '" + type + "' is not ring, fc or switch", where);
    const auto size = parse_plain_number(size_text);
    if (!size || *size != std::floor(*size) || *size < 2 || *size > 1e7)
      throw BadInput("dimension size '" + size_text + "' must be an integer >= 2", where);
    d.size = static_cast<std::uint32_t>(*size);
    dims.push_back(d);
  }
  return dims;
}

Network build_multidim(const MultiDimSpec& spec, const std::string& where) {
  if (spec.dims.empty()) throw BadInput("no dimensions given", where);
  std::uint64_t total = 1;
  for (const Dimension& d : spec.dims) {
    if (d.size < 2) throw BadInput("dimension size " + std::to_string(d.size) + " must be >= 2", where);
    if (!(d.bandwidth_Bps > 0))
      throw BadInput("dimension bandwidth must be positive", "topology.dim_bandwidth");
    total *= d.size;
    if (total > (1u << 26)) throw BadInput("more than 2^26 NPUs", where);
  }
  // Arc ids are 32-bit; refuse early rather than exhaust memory.
  std::uint64_t arcs_estimate = 0;
  for (const Dimension& d : spec.dims)
    arcs_estimate += total * (d.type == DimensionType::FullyConnected ? d.size - 1 : 2);
  if (arcs_estimate > (1ull << 30))
    throw BadInput("about " + std::to_string(arcs_estimate) + " arcs: more than this tool builds (2^30)",
                   where);
  const std::vector<std::string> levels =
      spec.levels.empty() ? default_dim_levels(spec.dims.size()) : spec.levels;
  if (levels.size() != spec.dims.size())
    throw InvalidDesign("need one level per dimension (" + std::to_string(spec.dims.size()) + ")",
                        "topology.dim_levels");
  const auto N = static_cast<std::uint32_t>(total);
  NetworkBuilder b(N, 1, 0);
  detail::MergedArcs arcs;
  std::uint32_t stride = 1;  // mixed-radix weight of dimension k
  for (const Dimension& d : spec.dims) {
    const std::uint32_t n = d.size;
    const double lat = d.latency_s;
    if (d.type == DimensionType::Switch) {
      // One switch per line: NPUs that differ only in coordinate k. Line index = address
      // with coordinate k removed.
      const VertexId sw0 = b.add_switches(N / n);
      for (std::uint32_t v = 0; v < N; ++v) {
        const std::uint32_t low = v % stride, high = v / (stride * n);
        arcs.add_link(v, sw0 + high * stride + low, d.bandwidth_Bps, lat / 2);
      }
    } else {
      for (std::uint32_t v = 0; v < N; ++v) {
        const std::uint32_t c = (v / stride) % n;
        const std::uint32_t base = v - c * stride;
        if (d.type == DimensionType::Ring) {
          if (n == 2) {
            arcs.add_arc(v, base + (1 - c) * stride, d.bandwidth_Bps, lat);
          } else {
            arcs.add_arc(v, base + ((c + 1) % n) * stride, d.bandwidth_Bps / 2, lat);
            arcs.add_arc(v, base + ((c + n - 1) % n) * stride, d.bandwidth_Bps / 2, lat);
          }
        } else {
          for (std::uint32_t o = 0; o < n; ++o)
            if (o != c) arcs.add_arc(v, base + o * stride, d.bandwidth_Bps / (n - 1), lat);
        }
      }
    }
    stride *= n;
  }
  arcs.flush_into(b);
  TopologyInfo info;
  info.kind = "multidim";
  info.dims = spec.dims;
  info.dim_levels = levels;
  info.vertex_transitive = true;  // translations of the mixed-radix address are automorphisms
  info.optical = "none";
  b.set_info(std::move(info));
  return std::move(b).build();
}

}  // namespace toposweep::topology
