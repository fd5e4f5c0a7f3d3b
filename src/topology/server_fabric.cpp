// The server fabric every family builder installs: one class for all servers, or one per server.
#include "toposweep/topology/families.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::topology {

void apply_server_fabric(NetworkBuilder& b, const ServerSpec& server, std::uint32_t compute_nodes,
                         const std::string& where) {
  b.set_link_classes(server.intra(), server.link_efficiency);
  if (!server.gpus_of_server.empty()) {
    if (server.gpus_of_server.size() != compute_nodes)
      throw BadInput("server.gpus lists " + std::to_string(server.gpus_of_server.size()) +
                         " servers but the topology has " + std::to_string(compute_nodes),
                     "key server.gpus");
    b.set_node_gpus(server.gpus_of_server);
  }
  if (server.intra_of_server.empty()) return;
  if (server.intra_of_server.size() != compute_nodes)
    throw BadInput("the server fabrics list " + std::to_string(server.intra_of_server.size()) +
                       " servers but the topology has " + std::to_string(compute_nodes),
                   where);
  b.set_node_intra(server.intra_of_server);
}

}  // namespace toposweep::topology
