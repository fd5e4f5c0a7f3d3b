#pragma once
// The collective operations, shared vocabulary of workloads, collectives and the simulator.
#include <optional>
#include <string_view>

namespace toposweep {

enum class CollectiveOp { AllReduce, ReduceScatter, AllGather, AllToAll, Broadcast, Reduce };

// "allreduce", "reducescatter", "allgather", "alltoall", "broadcast", "reduce".
std::string_view collective_op_name(CollectiveOp op);
std::optional<CollectiveOp> parse_collective_op(std::string_view name);

// nccl-tests bus-bandwidth factor: 2(n-1)/n for AllReduce, (n-1)/n for the others.
double busbw_factor(CollectiveOp op, int ranks);

}  // namespace toposweep
