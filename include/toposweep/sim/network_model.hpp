#pragma once
// The engine's pluggable part: how long communication takes. An uncontended model knows a
// task's duration when it starts; a contention-aware one reports completions as simulated
// time advances, because what else is in flight changes them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "toposweep/collective/plan.hpp"
#include "toposweep/topology/network.hpp"
#include "toposweep/workload/task_graph.hpp"

namespace toposweep::sim {

struct SimResult;

// One communication task of one job, as the engine hands it to a network model.
struct CommTask {
  std::uint32_t job = 0;
  const TaskGraph* graph = nullptr;
  TaskId id = 0;
  const Placement* placement = nullptr;
  const Task& task() const { return graph->tasks[id]; }
};

// How collectives are planned, shared by both models.
struct CommSettings {
  std::string algorithm = "auto";          // collective.algorithm, passed to plan_collective
  bool hierarchical_pipelined = true;      // multidim: max over dimensions (true) or sum (false)
  bool analytical_all_instances = false;   // analytical: time every instance (slowest wins), not the first
  Routing switch_routing = Routing::Auto;  // collective.routing (networks with switches)
  bool greedy_forest = false;              // collective.forest = greedy
  std::uint32_t chunks = 1;                // collective.chunks
  double endpoint_delay_s = 0;             // collective.endpoint_delay
  double reduction_Bps = 0;                // collective.reduction_bandwidth (0: free)
  bool operator==(const CommSettings&) const = default;
};

class NetworkModel {
 public:
  virtual ~NetworkModel() = default;
  // Starts `comm` at `now`. Returns its duration when it is fixed at start; std::nullopt when
  // its completion will come out of advance_to(), tagged with `token`.
  virtual std::optional<double> begin(const CommTask& comm, double now, std::uint64_t token) = 0;
  // Earliest time something in flight completes (infinity when nothing is).
  virtual double next_event_time() = 0;
  // Moves to t (never past next_event_time()) and appends the tokens of tasks completed by t.
  virtual void advance_to(double t, std::vector<std::uint64_t>& completed) = 0;
  // Bytes carried per arc so far (flow models); nullptr when the model does not track links.
  virtual const std::vector<double>* arc_bytes() const { return nullptr; }
  virtual std::string name() const = 0;
  // After a run: adds what the model measured beyond the engine's times (a flow model's link
  // loads and counters) to `result`; nothing by default.
  virtual void report(const Network&, SimResult&) const {}
};

}  // namespace toposweep::sim
