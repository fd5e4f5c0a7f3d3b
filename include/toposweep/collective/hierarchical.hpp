#pragma once
// Hierarchical collectives on multi-dimensional networks (docs/collectives.md, "hierarchical"): one phase per
// dimension the group spans, the message shrinking (Reduce-Scatter, AllReduce, dims ascending) or
// growing (All-Gather, dims descending) from phase to phase, each dimension with its own
// algorithm (ring on Ring, direct on FullyConnected, halving-doubling latency on Switch).
#include <cstdint>
#include <string>
#include <vector>

#include "toposweep/topology/network.hpp"
#include "toposweep/util/collective_op.hpp"

namespace toposweep {

struct DimensionPhase {
  std::uint32_t dim = 0;         // index into the network's dims
  std::uint32_t group_size = 1;  // members along this dimension
  double bytes = 0;              // size_k: bytes each member moves in this dimension
  double time_s = 0;             // bytes / bw_k + steps * latency_k
  double latency_s = 0;          // steps * latency_k
};

struct HierarchicalTime {
  std::vector<DimensionPhase> phases;  // in execution order; dimensions of group size 1 omitted
  double pipelined_s = 0;              // max over phases (chunks pipeline across dimensions)
  double sequential_s = 0;             // sum over phases
  double pipelined_latency_s = 0;      // the latency part of the slowest phase
  double sequential_latency_s = 0;
};

// Closed form for a group that spans group_sizes[k] members along dimension k (1 = not spanned).
HierarchicalTime hierarchical_time(CollectiveOp op, const std::vector<Dimension>& dims,
                                   const std::vector<std::uint32_t>& group_sizes, double bytes);

// ASTRA-sim's system costs (CollectiveOptions::system_costs) on a hierarchical collective: the
// buffer in `chunks` chunks, each through the phases in ASTRA-sim's localBWAware order (AllReduce:
// reduce-scatter over the dimensions ascending, an all-reduce on the last, all-gather descending),
// a dimension serving one chunk at a time, first come first served. A pass over dimension k
// costs bytes/bw_k + steps_k (latency_k + endpoint_delay), plus 3 R / reduction_Bps when it
// reduces, R the bytes ASTRA-sim's implementation of the dimension reduces (ring: bytes; direct:
// one message, bytes/(n-1); halving-doubling: all rounds but the first). Returns the time of the
// last chunk's last phase and its latency part.
struct ChunkedTime {
  double time_s = 0;
  double latency_s = 0;
};
ChunkedTime hierarchical_chunked_time(CollectiveOp op, const std::vector<Dimension>& dims,
                                      const std::vector<std::uint32_t>& group_sizes, double bytes,
                                      std::uint32_t chunks, double endpoint_delay_s, double reduction_Bps);

// Mixed-radix address of compute node v (dimension 0 fastest).
std::vector<std::uint32_t> dimension_coordinates(const std::vector<Dimension>& dims, VertexId v);

// Members along each dimension for a group that is a sub-grid (the Cartesian product of one
// coordinate set per dimension). Throws BadInput when the network has no dims, when their product
// is not the compute node count, or when the members are not a sub-grid.
std::vector<std::uint32_t> hierarchical_group_shape(const Network& net, const std::vector<VertexId>& members);
// The same without throwing (the automatic algorithm choice asks whether hierarchical applies):
// an empty shape with the reason when the members are not a sub-grid.
struct GroupShape {
  std::vector<std::uint32_t> shape;
  std::string why_not, where;
};
GroupShape group_shape(const Network& net, const std::vector<VertexId>& members);

// Members grouped into lines along dimension k (members that differ only in coordinate k),
// each line sorted by that coordinate.
std::vector<std::vector<VertexId>> dimension_lines(const Network& net, const std::vector<VertexId>& members,
                                                   std::uint32_t k);

}  // namespace toposweep
