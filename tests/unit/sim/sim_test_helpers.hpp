#pragma once
// Helpers shared by the simulator tests.
#include <string>
#include <utility>
#include <vector>

#include "toposweep/collective/config_keys.hpp"
#include "toposweep/sim/config_keys.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/topology/config_keys.hpp"
#include "toposweep/util/config.hpp"
#include "toposweep/workload/config_keys.hpp"
#include "toposweep/workload/iteration.hpp"

namespace toposweep::test {

// `settings` (origin "test") over the defaults of every module the simulator reads.
inline Config sim_config(const std::vector<std::pair<std::string, std::string>>& settings) {
  Config c;
  for (const auto& [k, v] : settings) c.set(k, v, "test");
  for (const auto& keys :
       {workload::config_keys(), topology::config_keys(), collective::config_keys(), sim::config_keys()})
    for (const KeySpec& k : keys)
      if (!k.default_value.empty() && !k.name.ends_with(".*") && !c.has(k.name))
        c.set(k.name, k.default_value, "default");
  return c;
}

// A configuration's plan and its simulation (the fast path), kept together so that a test can read
// the tasks beside their spans.
struct SimRun {
  IterationPlan plan;
  sim::SimResult result;
};
inline SimRun simulate_config(const Config& c) {
  const Network net = network_from_config(c);
  IterationPlan plan = plan_iteration_from_config(c, net.gpu_count());
  sim::SimResult r = sim::simulate_iteration(net, plan.graph, sim::sim_options_from_config(c));
  return {std::move(plan), std::move(r)};
}

// f(task, seconds, label) for every task of a run, with the length of its span on `gpu`.
template <class F>
void for_each_span(const SimRun& r, std::uint32_t gpu, F&& f) {
  const auto& tasks = r.plan.graph.tasks;
  const auto& spans = r.result.engine.spans.at(gpu);
  for (std::size_t i = 0; i < tasks.size(); ++i)
    f(tasks[i], spans[i].end_s - spans[i].start_s, r.plan.graph.labels[tasks[i].label]);
}

// One job on rank order through the event-driven engine (simulate_jobs always runs it, while
// simulate_iteration takes the analytical fast path): the reference the fast path must equal.
inline sim::SimResult engine_result(const Network& net, const TaskGraph& graph,
                                    const sim::SimOptions& options) {
  const sim::Job job{"job0", &graph, rank_order_placement(graph.gpus, net.gpus_per_node())};
  return sim::simulate_jobs(net, std::span<const sim::Job>(&job, 1), options);
}

// One communication task with every group of `groups` as a concurrent instance.
inline TaskGraph one_comm(TaskKind kind, CollectiveOp op, double bytes,
                          std::vector<std::vector<std::uint32_t>> groups, std::uint32_t gpus,
                          std::uint32_t repeat = 1) {
  TaskGraph g;
  g.gpus = gpus;
  g.add_stream("comm");
  Task t;
  t.kind = kind;
  t.op = op;
  t.bytes = bytes;
  t.repeat = repeat;
  t.purpose = CommPurpose::DataParallel;
  t.group_set = g.add_group_set(GroupSet{std::move(groups)});
  g.add(t);
  return g;
}

}  // namespace toposweep::test
