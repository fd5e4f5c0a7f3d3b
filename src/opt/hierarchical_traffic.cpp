#include "toposweep/opt/hierarchical_traffic.hpp"

#include <string>

#include "toposweep/util/error.hpp"

namespace toposweep::opt {

std::vector<double> per_dimension_bytes(const HierarchicalComm& comm, std::size_t dim_count) {
  std::vector<double> size(dim_count, 0.0);
  for (const auto& span : comm.dims) {
    if (span.dim >= dim_count)
      throw BadInput("collective spans dimension " + std::to_string(span.dim) + " but the network has " +
                         std::to_string(dim_count),
                     "optimize workload");
    if (span.group == 0) throw BadInput("collective has a group of 0 along a dimension", "optimize workload");
  }
  if (comm.point_to_point) {
    for (const auto& span : comm.dims) size[span.dim] += comm.bytes;
    return size;
  }
  double m = comm.bytes;
  for (const auto& span : comm.dims) {
    const double g = span.group;
    const double frac = (g - 1.0) / g;
    switch (comm.op) {
      case CollectiveOp::AllReduce:
      case CollectiveOp::Broadcast:
      case CollectiveOp::Reduce:
        size[span.dim] += 2.0 * m * frac;
        m /= g;
        break;
      case CollectiveOp::ReduceScatter:
      case CollectiveOp::AllGather:
        // AllGather runs the dimensions in descending order starting from the shard M/prod(g)
        // and growing; the bytes per dimension come out identical to ReduceScatter's.
        size[span.dim] += m * frac;
        m /= g;
        break;
      case CollectiveOp::AllToAll:
        size[span.dim] += comm.bytes * frac;
        break;
    }
  }
  return size;
}

}  // namespace toposweep::opt
