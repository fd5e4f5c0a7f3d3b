// Chrome trace output: one complete event per task on its stream's track, thread names from
// the graph's streams, and link-load counters whose values follow the flow model.
#include "toposweep/sim/trace.hpp"

#include <gtest/gtest.h>

#include <map>

namespace toposweep::sim {
namespace {

TEST(ChromeTrace, TasksStreamsAndLinkCounters) {
  // Two servers on a 10 GB/s link pair; a 1 s compute, then a 2e9 B transfer 0 -> 1 (0.2 s).
  NetworkBuilder b(2);
  b.add_link(0, 1, 10e9, 0);
  const Network net = std::move(b).build();
  TaskGraph g;
  g.gpus = 2;
  g.add_stream("compute");
  g.add_stream("send");
  Task c;
  c.duration_s = 1.0;
  const TaskId first = g.add(c);
  Task t;
  t.kind = TaskKind::Transfer;
  t.stream = 1;
  t.bytes = 2e9;
  t.purpose = CommPurpose::PipelineParallel;
  t.group_set = g.add_group_set(GroupSet{{{0, 1}}});
  const TaskId deps[] = {first};
  g.add(t, deps);
  SimOptions o;
  o.model = NetworkModelKind::Flow;
  o.record_link_loads = true;
  const SimResult r = simulate_iteration(net, g, o);
  EXPECT_NEAR(r.engine.makespan_s, 1.2, 1e-12);
  const Job job{"j", &g, rank_order_placement(2, 1)};
  const nlohmann::json trace = chrome_trace(net, std::span<const Job>(&job, 1), r);
  std::map<std::string, int> phases;
  std::vector<double> loads_gbps;
  for (const auto& e : trace.at("traceEvents")) {
    ++phases[e.at("ph").get<std::string>()];
    if (e.at("ph") == "X" && e.at("tid") == 1) {
      EXPECT_NEAR(e.at("ts").get<double>(), 1e6, 1e-6);
      EXPECT_NEAR(e.at("dur").get<double>(), 0.2e6, 1e-6);
      EXPECT_EQ(e.at("args").at("purpose"), "pipeline_parallel");
    }
    if (e.at("ph") == "C") loads_gbps.push_back(e.at("args").at("Gbps").get<double>());
  }
  EXPECT_EQ(phases["X"], 2);
  EXPECT_EQ(phases["M"], 1 + 2 + 1);  // job process, two stream names, links process
  // Arc 0 -> 1 goes to 80 Gb/s when the transfer starts and back to 0 when it ends.
  ASSERT_EQ(loads_gbps.size(), 2u);
  EXPECT_NEAR(loads_gbps[0], 80.0, 1e-9);
  EXPECT_NEAR(loads_gbps[1], 0.0, 1e-9);
}

}  // namespace
}  // namespace toposweep::sim
