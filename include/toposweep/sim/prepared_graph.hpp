#pragma once
// Fast playback of a task graph whose every task has a duration known before the run (the
// analytical model). With fixed durations the event-driven engine reduces to a longest-path
// pass: a task starts when the last of its dependencies and its stream predecessor ends, and
// task ids are already a topological order (TaskGraph::add requires existing dependencies and
// streams run in id order). The result equals run_engine's bit for bit: the same maxima and
// the same sums in the same order.
//
// Everything that depends only on the graph (stream predecessors, the interval groups the
// breakdown measures) is computed once here, so a sweep replaying one plan at many points
// pays one linear pass and no allocation per point.
#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "toposweep/sim/engine.hpp"
#include "toposweep/workload/task_graph.hpp"

namespace toposweep::sim {

class PreparedGraph {
 public:
  explicit PreparedGraph(const TaskGraph& graph);

  // Plays `graph` (the one this was prepared from) with per-task durations in seconds
  // (repeat included), writes every task's span into `spans` (resized to the task count) and
  // returns the breakdown run_engine would. Without `comm_busy` the per-purpose busy times
  // (the unions that merge every stage's streams, most of a pass's work) are left 0.
  JobTimes run(const TaskGraph& graph, std::span<const double> durations, std::vector<TaskSpan>& spans,
               bool comm_busy = true);

  std::size_t task_count() const { return comm_purpose_.size(); }

  // Scratch owned by the graph, for callers that need the times only (a sweep row): fill
  // durations() (one per task, as for run) and call run_scratch. One buffer per plan instead of
  // one per caller: a sweep rank's analytical models (one per network) share them.
  std::vector<double>& durations() { return durations_; }
  JobTimes run_scratch(const TaskGraph& graph, bool comm_busy = false) {
    return run(graph, durations_, spans_, comm_busy);
  }

 private:
  // Adds a span of positive length to chain c's folded intervals (items_), merging it into the
  // last one when they touch; run() calls it as each task is timed.
  void append_to_chain(std::uint32_t c, const TaskSpan& s);
  // Union length of one interval group, merging its chains' folded intervals (each chain is in
  // start order because a stream runs its tasks one after another).
  double group_union(std::uint32_t group);
  // Restores the min-heap order of merge_heap_[0, n) after its top changed.
  void sift_down(std::size_t n);

  static constexpr std::uint32_t kNone = 0xffffffffu;
  // Per task, so the playback need not read the tasks: the purpose of a communication task
  // (kComputeTask for compute, kContentionTask for a pass's SM contention, timed from its
  // dependencies' spans: sim/contention.hpp); and the communication tasks in order with the
  // bytes per rank each moves (bytes x repeat), and their sums per purpose in that order.
  static constexpr std::uint8_t kComputeTask = 0xff;
  static constexpr std::uint8_t kContentionTask = 0xfe;
  std::vector<std::uint8_t> comm_purpose_;
  struct CommTask {
    TaskId task;
    double bytes;
  };
  std::vector<CommTask> comm_;
  std::array<double, kPurposeCount> all_comm_bytes_{};
  // Per task, what it waits for (dependencies, then the stream predecessor) as one CSR list.
  std::vector<std::uint32_t> input_offsets_;
  std::vector<std::uint32_t> inputs_;
  std::uint32_t stages_ = 1;
  // Interval groups: compute of stage p (p), everything of stage p (stages + p), communication
  // of purpose q (2 stages + q). Group g owns chains group_chains_[g] .. group_chains_[g+1];
  // a chain is one stream's tasks in one group, and chain c has room for its folded intervals
  // at items_[chain_offsets_[c] .. chain_offsets_[c+1]).
  std::vector<std::uint32_t> group_chains_;
  std::vector<std::uint32_t> chain_offsets_;
  std::vector<std::uint32_t> task_chains_;  // task i's two chains at 2i (stage-wide) and 2i+1
  std::vector<TaskSpan> items_;             // scratch: chain c's folded intervals from chain_offsets_[c]
  std::vector<std::uint32_t> item_ends_;    // scratch: end of chain c's folded intervals in items_
  std::vector<std::uint32_t> heads_;        // scratch for group_union, one per chain
  static constexpr std::uint32_t kLinearMergeChains = 4;      // above this, merge with a heap
  std::vector<std::pair<double, std::uint32_t>> merge_heap_;  // scratch: (head start, chain)
  std::vector<double> durations_;                             // scratch for run_scratch
  std::vector<TaskSpan> spans_;                               // scratch for run_scratch
};

}  // namespace toposweep::sim
