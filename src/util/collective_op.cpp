#include "toposweep/util/collective_op.hpp"

#include "toposweep/util/strings.hpp"

namespace toposweep {

std::string_view collective_op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce:
      return "allreduce";
    case CollectiveOp::ReduceScatter:
      return "reducescatter";
    case CollectiveOp::AllGather:
      return "allgather";
    case CollectiveOp::AllToAll:
      return "alltoall";
    case CollectiveOp::Broadcast:
      return "broadcast";
    case CollectiveOp::Reduce:
      return "reduce";
  }
  return "unknown";
}

std::optional<CollectiveOp> parse_collective_op(std::string_view name) {
  std::string n = to_lower(name);
  std::erase(n, '_');
  std::erase(n, '-');
  for (CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::ReduceScatter, CollectiveOp::AllGather,
                          CollectiveOp::AllToAll, CollectiveOp::Broadcast, CollectiveOp::Reduce})
    if (n == collective_op_name(op)) return op;
  return std::nullopt;
}

double busbw_factor(CollectiveOp op, int ranks) {
  if (ranks <= 1) return 0.0;
  const double n = ranks;
  switch (op) {
    case CollectiveOp::AllReduce:
      return 2.0 * (n - 1) / n;
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllGather:
    case CollectiveOp::AllToAll:
      return (n - 1) / n;
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce:
      return 1.0;
  }
  return 1.0;
}

}  // namespace toposweep
