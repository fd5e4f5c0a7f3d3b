#pragma once
// Flow network model: every concurrent instance of a communication task becomes flows on
// the network (plan_collective with flows for collectives, shortest-path routing for
// transfers: each GPU-to-GPU connection hashed onto one of the equal-cost shortest paths, as
// ECMP switches do), and all flows in flight share arc capacities max-min fairly. Instances
// whose members sit on the same nodes in the same order (the TP-rank replicas of a DP group,
// the GPU pairs of a pipeline send between two servers) are merged: w identical flows become
// one flow of weight w carrying w times the bytes (same rates, far fewer flows). A collective's flows run
// stage by stage; what flows cannot express (the plan's latency and its intra-node part) is charged evenly
// after each stage. A task standing for `repeat` operations moves repeat x the bytes and pays repeat x the
// latency (its operations are folded, so their order is not modelled).
#include <cstdint>
#include <map>
#include <memory>
#include <queue>
#include <vector>

#include "toposweep/collective/routing.hpp"
#include "toposweep/sim/comm_groups.hpp"
#include "toposweep/sim/flow_network.hpp"
#include "toposweep/sim/network_model.hpp"

namespace toposweep::sim {

class FlowModel final : public NetworkModel {
 public:
  FlowModel(const Network& net, CommSettings settings);

  std::optional<double> begin(const CommTask& comm, double now, std::uint64_t token) override;
  double next_event_time() override;
  void advance_to(double t, std::vector<std::uint64_t>& completed) override;
  const std::vector<double>* arc_bytes() const override { return &flows_.arc_bytes(); }
  std::string name() const override { return "flow"; }
  void report(const Network& net, SimResult& result) const override;

  const FlowNetwork& flows() const { return flows_; }
  void record_link_loads(bool on) { flows_.record_link_loads(on); }
  std::uint64_t flows_started() const { return flows_started_; }
  // Flows the merged ones stand for (sum of weights).
  std::uint64_t flows_represented() const { return flows_represented_; }

 private:
  // One instance (group) of a communication task, ready to play: flows grouped by stage.
  struct InstancePlan {
    std::vector<std::vector<ArcId>> paths;
    std::vector<double> bytes;               // per flow, for all the instances it stands for
    std::vector<double> weight;              // per flow: how many identical flows it stands for
    std::vector<std::uint32_t> stage_begin;  // flows of stage k: [stage_begin[k], stage_begin[k+1])
    double stage_latency_s = 0;              // charged after each stage
    double fixed_s = 0;                      // intra-node only: no flows, just this time
  };
  struct TaskPlan {
    std::vector<InstancePlan> instances;
  };
  struct PlanKey {
    const TaskGraph* graph;
    std::uint32_t group_set;
    std::uint8_t kind, op;
    double bytes;
    auto operator<=>(const PlanKey&) const = default;
  };
  struct Instance {
    std::uint32_t stage = 0;
    std::uint32_t outstanding = 0;
  };
  struct Active {
    std::uint64_t token = 0;
    const TaskPlan* plan = nullptr;
    double repeat = 1;
    std::vector<Instance> instances;
    std::uint32_t unfinished = 0;
    bool in_use = false;
  };
  struct Timer {
    double time;
    std::uint32_t active, instance;
    bool operator>(const Timer& o) const {
      return time > o.time ||
             (time == o.time && (active > o.active || (active == o.active && instance > o.instance)));
    }
  };

  const TaskPlan& plan_for(const CommTask& comm);
  // `copies`: how many identical instances (same nodes, same order) this one stands for.
  // `relays`: a transfer some of whose connections cross rails of a rail-only fabric (PXN).
  InstancePlan plan_instance(const Task& t, const GroupNodes& g, std::uint32_t copies, bool relays = false);
  // Starts the current stage of an instance, skipping empty stages; finishes it when done.
  void run_stage(std::uint32_t a, std::uint32_t i, std::vector<std::uint64_t>& completed);
  void stage_done(std::uint32_t a, std::uint32_t i, std::vector<std::uint64_t>& completed);

  const Network* net_;
  CommSettings settings_;
  RouteCache routes_;
  FlowNetwork flows_;
  std::map<PlanKey, std::unique_ptr<TaskPlan>> plans_;
  std::vector<Active> active_;
  std::vector<std::uint32_t> free_active_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::vector<std::uint64_t> completed_at_begin_;  // tasks that finished inside begin()
  std::vector<FinishedFlow> finished_scratch_;
  std::uint64_t flows_started_ = 0, flows_represented_ = 0;
};

}  // namespace toposweep::sim
