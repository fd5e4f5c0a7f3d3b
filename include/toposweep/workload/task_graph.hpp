#pragma once
// One training iteration as a task graph: compute tasks and communication tasks with their
// dependencies. This is the contract between workloads (which build it) and the simulator
// (which plays it). Owned by the workload module; fields may be added, not renamed or removed.
//
// Symmetry: tasks describe one *representative* of each set of replicas that run in lockstep
// (e.g. one stage's compute, standing for all its TP x DP GPUs). A communication task lists
// every concurrent instance in its group set, so a contention-aware network model can play
// all of them while an analytical one times one instance (or the slowest).
//
// Streams: tasks on the same stream run in order (like CUDA streams); a task also waits for
// its explicit dependencies. Stream ids and names are chosen by the builder.
//
// GPU ranks: 0..gpus-1, in the order of the strategy's axis grid (workload/ranks.hpp, Megatron's
// order). Placement (below) maps ranks to compute nodes of the network.
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "toposweep/util/collective_op.hpp"
#include "toposweep/workload/axis.hpp"

namespace toposweep {

enum class TaskKind : std::uint8_t { Compute, Collective, Transfer };
enum class TaskPhase : std::uint8_t { Forward, Backward, WeightUpdate, Other };
// What a communication task is for, so results can break communication time down. Other stays
// last: sim's kPurposeCount counts up to it, and comm_purpose_name's switch names every value.
enum class CommPurpose : std::uint8_t {
  None,
  DataParallel,
  TensorParallel,
  PipelineParallel,
  Embedding,
  ContextParallel,
  ExpertParallel,
  Other
};

using TaskId = std::uint32_t;
inline constexpr std::uint32_t kNoLayer = std::numeric_limits<std::uint32_t>::max();

struct Task {
  TaskKind kind = TaskKind::Compute;
  TaskPhase phase = TaskPhase::Other;
  CommPurpose purpose = CommPurpose::None;
  std::uint32_t stream = 0;
  // Compute: time on the device (FLOPs / achievable FLOP/s, already includes efficiency).
  double duration_s = 0;
  double flops = 0;
  // Communication: `bytes` is the per-rank buffer in nccl-tests convention for collectives
  // (AllReduce input, AllGather output, ReduceScatter input, AllToAll per-rank send), and the
  // payload for a point-to-point transfer. `group_set` indexes TaskGraph::group_sets.
  CollectiveOp op = CollectiveOp::AllReduce;
  bool is_mutable = false;  // may run over any permutation of its members (AllReduce for DP)
  double bytes = 0;
  std::uint32_t group_set = 0;
  std::uint32_t stage = 0;  // pipeline stage this task belongs to
  std::uint32_t layer = kNoLayer;
  std::uint32_t microbatch = 0;
  std::uint32_t label = 0;  // index into TaskGraph::labels
  // The task stands for `repeat` identical back-to-back operations (e.g. the 2 TP AllReduces
  // of each of a stage's layers folded into one task): duration_s/flops/bytes are per
  // operation, and a network model charges per-operation latency `repeat` times.
  std::uint32_t repeat = 1;
  // Compute, > 0: the SM contention of a pass (sim/contention.hpp). Its dependencies are the
  // pass's compute and the overlapped communication whose kernels took this share of the stage's
  // SMs; its duration is what that took from the compute, worked out from their spans when it
  // starts (duration_s is unused).
  double sm_share = 0;
  // An expert-parallel AllToAll sent once per destination node (strategy.ep_dispatcher = deepep;
  // CollectiveRequest::dedup); inactive otherwise.
  TokenDedup dedup;
};

// Concurrent instances of one communication task. For collectives, each group is the member
// GPU ranks; for transfers, each group is {src_rank, dst_rank}.
struct GroupSet {
  std::vector<std::vector<std::uint32_t>> groups;
  // The parallel axis the groups run along, when they come from the rank grid (its groups or
  // pairs): what a communication task on this set is split along. Unset for other sets.
  std::optional<Axis> axis = std::nullopt;
};

struct TaskGraph {
  std::uint32_t gpus = 0;
  std::vector<Task> tasks;
  std::vector<std::uint32_t> dep_offsets{0};  // CSR: deps of task i are deps[dep_offsets[i]..[i+1])
  std::vector<TaskId> deps;
  std::vector<GroupSet> group_sets;
  std::vector<std::string> stream_names;
  std::vector<std::string> labels{""};

  // Appends a task with its dependencies (which must already exist); returns its id.
  TaskId add(const Task& t, std::span<const TaskId> dependencies = {});
  std::span<const TaskId> deps_of(TaskId id) const {
    return {deps.data() + dep_offsets[id], deps.data() + dep_offsets[id + 1]};
  }
  std::uint32_t add_group_set(GroupSet gs);
  std::uint32_t add_stream(std::string name);
  std::uint32_t add_label(std::string label);
  std::uint32_t stream_count() const { return static_cast<std::uint32_t>(stream_names.size()); }
};

// Where each GPU rank runs: node_of_gpu[rank] is a compute vertex of the network.
struct Placement {
  std::uint32_t gpus_per_node = 1;
  std::vector<std::uint32_t> node_of_gpu;
};
// Rank r on node r / gpus_per_node.
Placement rank_order_placement(std::uint32_t gpus, std::uint32_t gpus_per_node);
// Servers with different GPU counts: ranks fill node 0's gpus_of_node[0] GPUs, then node 1's, ...
// (gpus_per_node: the largest count).
Placement rank_order_placement(std::uint32_t gpus, std::span<const std::uint32_t> gpus_of_node);

}  // namespace toposweep
