#pragma once
// The event-driven task-graph engine: plays one training iteration of one or more jobs. Tasks
// on a stream run in order (like CUDA streams) and also wait for their explicit dependencies;
// compute tasks take duration_s x repeat, communication tasks take what the network model
// says. The engine holds no state between runs, so many can run in one process.
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "toposweep/sim/network_model.hpp"
#include "toposweep/workload/task_graph.hpp"

namespace toposweep::sim {

// One job: its iteration's task graph and where its GPU ranks run on the shared network.
struct Job {
  std::string name;
  const TaskGraph* graph = nullptr;
  Placement placement;
};

struct TaskSpan {
  double start_s = 0;
  double end_s = 0;
};

// One per CommPurpose value (Other is its last).
inline constexpr std::size_t kPurposeCount = static_cast<std::size_t>(CommPurpose::Other) + 1;

// Where one job's iteration time went. The breakdown is that of the critical pipeline stage
// (the one whose GPUs are busy longest): compute + exposed communication + bubble (idle
// time, the pipeline bubble and waits on other stages) = iteration time.
struct JobTimes {
  double iteration_time_s = 0;
  double compute_time_s = 0;
  double exposed_comm_time_s = 0;
  double bubble_time_s = 0;
  std::uint32_t critical_stage = 0;
  // Wall-clock time during which at least one communication of each purpose was in flight
  // (indexed by CommPurpose), and the bytes per rank those tasks moved (bytes x repeat).
  std::array<double, kPurposeCount> comm_busy_s{};
  std::array<double, kPurposeCount> comm_bytes{};
};

struct EngineResult {
  std::vector<JobTimes> jobs;
  double makespan_s = 0;                     // the slowest job's iteration time
  std::vector<std::vector<TaskSpan>> spans;  // spans[job][task]
};

// Throws RuntimeFailure when the graph cannot finish (a dependency cycle through streams, or
// a flow that never gets bandwidth).
EngineResult run_engine(std::span<const Job> jobs, NetworkModel& model);

// Measure of a union of intervals (sorts its argument).
double union_length(std::vector<TaskSpan>& spans);

// Fills the critical-stage breakdown of `out` (whose iteration_time_s is set): the stage whose
// busy union (`busy_union(p)`, compute and communication) is longest (the first such), its
// compute union (`compute_union(p)`, asked for that stage only), the exposed communication
// between them and the rest as bubble. Both the event-driven engine and the prepared playback
// use it, so their breakdowns agree bit for bit.
template <class ComputeUnion, class BusyUnion>
void set_critical_stage(JobTimes& out, std::uint32_t stages, ComputeUnion compute_union,
                        BusyUnion busy_union) {
  double best_busy = -1;
  for (std::uint32_t p = 0; p < stages; ++p) {
    const double busy = busy_union(p);
    if (busy > best_busy) {
      best_busy = busy;
      out.critical_stage = p;
    }
  }
  if (best_busy >= 0) {  // the compute union of the critical stage only
    out.compute_time_s = compute_union(out.critical_stage);
    out.exposed_comm_time_s = best_busy - out.compute_time_s;
  }
  out.bubble_time_s = std::max(0.0, out.iteration_time_s - out.compute_time_s - out.exposed_comm_time_s);
}

std::string_view comm_purpose_name(CommPurpose p);

}  // namespace toposweep::sim
