#pragma once
// Rail-only fabrics (topology.kind = rail, topology.spine = none): nothing joins two rails, so a
// byte between GPUs of two servers that share no rail relays through a GPU of its server on the
// other rail over the server's fabric (NCCL's PXN). The network graph has one vertex per server,
// so that relay is not an arc: the collective and simulation models charge it to the server's
// fabric (docs/topology.md).
#include <cstdint>

#include "toposweep/topology/network.hpp"

namespace toposweep {

// Whether `net` is a rail-only fabric, where cross-rail traffic relays through the server.
bool rail_only(const Network& net);

// The rails GPU `local` (its index on compute node v, 0 .. gpus_on(v) - 1) reaches through its
// own NICs: [first, last). With as many rails as GPUs, rail `local`; with fewer, neighbouring GPUs
// share a NIC (GPU l on rail l R / g); with more, GPU l owns R / g of them.
struct RailRange {
  std::uint32_t first = 0, last = 0;
};
RailRange gpu_rails(const Network& net, VertexId v, std::uint32_t local);

// Whether traffic from GPU `la` of node a to GPU `lb` of node b (a != b) must relay through a
// server's fabric on `net`: rail-only and the two GPUs share no rail.
bool needs_rail_relay(const Network& net, VertexId a, std::uint32_t la, VertexId b, std::uint32_t lb);

}  // namespace toposweep
