#pragma once
// The network-independent half of playing a task graph analytically with rank-order placement.
// Which instances of each communication task are timed, the node-level shape of each (nodes,
// GPUs per node, ranks, sharing), and each set of concurrent transfers' per-node counts depend
// only on the graph and the GPUs per node; only the time of a shape depends on the network. A
// sweep plays one plan on many networks (perf-1024.ini: 18 per plan), so this is worked out once
// per plan: each task points at one of the graph's few distinct operations, and a network's
// AnalyticalModel times each distinct operation once and fills the durations in one pass.
#include <cstdint>
#include <vector>

#include "toposweep/sim/comm_groups.hpp"
#include "toposweep/sim/prepared_graph.hpp"
#include "toposweep/workload/task_graph.hpp"

namespace toposweep::sim {

class CommLayout {
 public:
  // `all_instances`: time every instance of a task (CommSettings::analytical_all_instances).
  CommLayout(const TaskGraph& graph, std::uint32_t gpus_per_node, bool all_instances);
  CommLayout(const CommLayout&) = delete;
  CommLayout& operator=(const CommLayout&) = delete;

  enum class Mode : std::uint8_t {
    Idle,         // no instance: 0 s
    Slowest,      // the slowest of the listed shapes
    TransferSet,  // the slowest of the sampled shapes, at least the busiest node's injection
  };
  struct Op {
    Mode mode = Mode::Idle;
    TaskKind kind = TaskKind::Collective;
    CollectiveOp op = CollectiveOp::AllReduce;
    double bytes = 0;
    TokenDedup dedup;                    // Task::dedup
    std::uint32_t first = 0, count = 0;  // shapes: shape_refs()[first, first + count)
    std::uint32_t injection = 0;         // TransferSet: index into injections()
  };
  // Per node that sends or receives network transfers of a transfer set: how many.
  struct NodeCount {
    VertexId node;
    std::uint32_t out, in;
  };

  const TaskGraph& graph() const { return *graph_; }
  std::uint32_t gpus_per_node() const { return gpus_per_node_; }
  bool all_instances() const { return all_instances_; }
  // Distinct shapes: their signature (nodes, GPUs per node, ranks, sharing) and nodes.
  const std::vector<std::vector<std::uint32_t>>& signatures() const { return signatures_; }
  const std::vector<GroupNodes>& shapes() const { return shapes_; }
  const std::vector<std::uint32_t>& shape_refs() const { return shape_refs_; }
  const std::vector<Op>& ops() const { return ops_; }
  const std::vector<std::vector<NodeCount>>& injections() const { return injections_; }
  // Per task: a compute task's duration (duration_s x repeat, as run_engine forms it), 0 for
  // communication; and the communication tasks with their operation and repeat, in task order.
  // A network's durations are these with each communication task's op time x repeat.
  struct CommTaskRef {
    TaskId task;
    std::uint32_t op, repeat;
  };
  const std::vector<double>& compute_durations() const { return compute_durations_; }
  const std::vector<CommTaskRef>& comm_tasks() const { return comm_tasks_; }
  // The graph's playback structure (its scratch changes while it plays).
  PreparedGraph& prepared() const { return prepared_; }

 private:
  const TaskGraph* graph_;
  std::uint32_t gpus_per_node_;
  bool all_instances_;
  std::vector<std::vector<std::uint32_t>> signatures_;
  std::vector<GroupNodes> shapes_;
  std::vector<std::uint32_t> shape_refs_;
  std::vector<Op> ops_;
  std::vector<std::vector<NodeCount>> injections_;
  std::vector<double> compute_durations_;
  std::vector<CommTaskRef> comm_tasks_;
  mutable PreparedGraph prepared_;
};

}  // namespace toposweep::sim
