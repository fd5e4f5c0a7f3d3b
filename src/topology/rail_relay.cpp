// Which GPU pairs of a rail-only fabric relay through the server (rail_relay.hpp).
#include "toposweep/topology/rail_relay.hpp"

#include <algorithm>

namespace toposweep {

bool rail_only(const Network& net) {
  return net.info().kind == "rail" && net.info().rail_spine == "none" && net.info().rails > 0;
}

RailRange gpu_rails(const Network& net, VertexId v, std::uint32_t local) {
  const std::uint64_t R = net.info().rails, g = std::max<std::uint32_t>(1, net.gpus_on(v));
  const auto first = static_cast<std::uint32_t>(local * R / g);
  const auto last = static_cast<std::uint32_t>((std::uint64_t{local} + 1) * R / g);
  return {first, std::max(first + 1, last)};
}

bool needs_rail_relay(const Network& net, VertexId a, std::uint32_t la, VertexId b, std::uint32_t lb) {
  if (a == b || !rail_only(net)) return false;
  const RailRange x = gpu_rails(net, a, la), y = gpu_rails(net, b, lb);
  return x.last <= y.first || y.last <= x.first;
}

}  // namespace toposweep
