#include "toposweep/topology/build.hpp"

#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "toposweep/topology/edge_list.hpp"
#include "toposweep/topology/families.hpp"
#include "toposweep/topology/metrics.hpp"
#include "toposweep/topology/spec.hpp"
#include "toposweep/topology/totient_perms.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"
#include "toposweep/util/units.hpp"

namespace toposweep {
namespace {

using namespace topology;

Network build_family(const SwitchSpec& s) {
  return build_switch(s);
}
Network build_family(const FatTreeSpec& s) {
  return build_fattree(s);
}
Network build_family(const MultiDimSpec& s) {
  return build_multidim(s, "key topology.dims");
}
Network build_family(const TorusSpec& s) {
  return build_torus(s, "key topology.dims");
}
Network build_family(const ExpanderSpec& s) {
  return build_expander(s);
}
Network build_family(const RailSpec& s) {
  return build_rail(s);
}
Network build_family(const DragonflySpec& s) {
  return build_dragonfly(s);
}

Network build_family(const TopoOptSpec& given) {
  if (!given.strides.empty()) return build_topoopt(given, "key topology.strides");
  // No strides: TotientPerms picks `rings` rings (degree/2 by default) over groups of ring_group.
  TopoOptSpec spec = given;
  const std::uint32_t n = spec.servers;
  spec.ring_group = spec.ring_group == 0 ? n : spec.ring_group;
  const std::uint32_t rings = spec.rings == 0 ? spec.degree / 2 : spec.rings;
  spec.strides = totient_perms(n, spec.ring_group, rings, "key topology.ring_group");
  return build_topoopt(spec, "key topology.rings");
}

Network build_family(const FileTopologySpec& s) {
  EdgeListOptions o;
  o.default_latency_s = s.default_latency_s;
  o.server = s.server;
  o.optical = s.optical;
  o.gpus_given = s.gpus_given;
  return read_edge_list_file(s.path, o);
}

}  // namespace

std::vector<std::pair<std::uint32_t, std::uint32_t>> parse_extra_links(const std::string& text,
                                                                       const std::string& where) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> links;
  if (trim(text).empty()) return links;
  for (const std::string& item : split_list(text)) {
    const auto dash = item.find('-');
    const auto a = dash == std::string::npos ? std::nullopt : parse_plain_number(trim(item.substr(0, dash)));
    const auto b = dash == std::string::npos ? std::nullopt : parse_plain_number(trim(item.substr(dash + 1)));
    if (!a || !b || *a < 0 || *b < 0 || *a != std::floor(*a) || *b != std::floor(*b) || *a > 4e9 || *b > 4e9)
      throw BadInput("extra link '" + item + "' is not A-B with server ids", where);
    links.emplace_back(static_cast<std::uint32_t>(*a), static_cast<std::uint32_t>(*b));
  }
  return links;
}

Network build_network(const TopologySpec& spec) {
  Network net = std::visit([](const auto& family) { return build_family(family); }, spec.family);
  if (!spec.allow_disconnected)
    require_connected(
        net, "topology.kind = " + net.info().kind + "; set topology.allow_disconnected = true to accept it");
  return net;
}

Network network_from_config(const Config& config) {
  return build_network(topology_spec_from_config(config));
}

}  // namespace toposweep
