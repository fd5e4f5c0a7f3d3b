#pragma once
// The edge-list topology format (docs/topology.md): one directed link a line,
// `SRC DST BANDWIDTH [LATENCY]` with units; `switch ID [ID ...]` declares relay-only vertices;
// `#` starts a comment; `gpus_per_node N` says what every compute node is (N GPUs; a GPU-level
// graph such as ForestColl's says 1), in place of server.gpus. write_edge_list() output read back by
// read_edge_list() gives the same vertices and arcs (bandwidths and latencies are printed in exact round-trip
// form).
#include <iosfwd>
#include <string>

#include "toposweep/topology/families.hpp"

namespace toposweep::topology {

struct EdgeListOptions {
  double default_latency_s = 0;  // for lines without a latency
  std::string optical = "none";  // recorded in info() for the cost model
  ServerSpec server;
  // server.gpus was set by the user: a file declaring another gpus_per_node is an error.
  bool gpus_given = false;
};

// Compute nodes keep their relative order and become 0..C-1; declared switches follow in
// increasing id order (a file with switches after its servers, as written here, keeps its
// ids). Parallel lines stay parallel arcs. Syntax errors, ids out of range, a switch declared
// twice and non-positive bandwidths throw BadInput naming `name:line`.
Network read_edge_list(std::istream& in, const std::string& name, const EdgeListOptions& options);
Network read_edge_list_file(const std::string& path, const EdgeListOptions& options);

void write_edge_list(std::ostream& out, const Network& network);

}  // namespace toposweep::topology
