#pragma once
// The collective operations, shared vocabulary of workloads, collectives and the simulator.
#include <compare>
#include <cstdint>
#include <optional>
#include <string_view>

namespace toposweep {

enum class CollectiveOp { AllReduce, ReduceScatter, AllGather, AllToAll, Broadcast, Reduce };

// "allreduce", "reducescatter", "allgather", "alltoall", "broadcast", "reduce".
std::string_view collective_op_name(CollectiveOp op);
std::optional<CollectiveOp> parse_collective_op(std::string_view name);

// nccl-tests bus-bandwidth factor: 2(n-1)/n for AllReduce, (n-1)/n for the others.
double busbw_factor(CollectiveOp op, int ranks);

// An AllToAll of MoE tokens through a dispatcher that sends each token once per destination node
// (DeepEP's and HybridEP's normal kernels: strategy.ep_dispatcher = deepep), each token routed to
// top_k of `experts` experts spread evenly over the group's nodes. Zero: a plain AllToAll, one copy
// per (token, expert). util/alltoall_dedup.hpp gives the network bytes it saves.
struct TokenDedup {
  std::uint16_t top_k = 0;
  std::uint16_t experts = 0;
  // Group-limited routing (MoeShape::router_groups, router_group_topk): 0 when unlimited.
  std::uint16_t groups = 0;
  std::uint16_t group_topk = 0;
  bool active() const { return top_k > 0 && experts > 0; }
  auto operator<=>(const TokenDedup&) const = default;
};

}  // namespace toposweep
