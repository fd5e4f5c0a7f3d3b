#include "toposweep/topology/families.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::topology {

Network build_switch(const SwitchSpec& spec) {
  // One server is a valid network: its GPUs talk over the server's fabric, the switch carries nothing.
  if (spec.servers < 1) throw BadInput("a switch network needs at least 1 server", "topology.servers");
  if (spec.degree < 1) throw BadInput("degree must be at least 1", "topology.degree");
  if (!(spec.link_bandwidth_Bps > 0))
    throw BadInput("link bandwidth must be positive", "topology.link_bandwidth");
  NetworkBuilder b(spec.servers, spec.server.gpus, spec.server.intra_bandwidth_Bps);
  apply_server_fabric(b, spec.server, b.vertex_count());
  const VertexId sw = b.add_switches(1);
  const double uplink = spec.degree * spec.link_bandwidth_Bps;
  for (VertexId i = 0; i < spec.servers; ++i) b.add_link(i, sw, uplink, spec.link_latency_s);
  TopologyInfo info;
  info.kind = "switch";
  info.degree = spec.degree;
  info.link_bandwidth_Bps = spec.link_bandwidth_Bps;
  info.link_latency_s = spec.link_latency_s;
  info.vertex_transitive = true;
  info.optical = "none";
  // Non-blocking: any half of the servers can send its full uplink to the other half.
  info.bisection_closed_form_Bps = (spec.servers / 2) * uplink;
  b.set_info(std::move(info));
  return std::move(b).build();
}

}  // namespace toposweep::topology
