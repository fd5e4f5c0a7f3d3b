// The shared-layout playback (one CommLayout per plan, played by each network's AnalyticalModel)
// against the event-driven engine playing the same graph with the same model: equal bit for bit,
// for collectives, pipeline transfers, all-to-all transfer sets and every-instance timing, and
// when one layout is played on several networks and again.
#include "toposweep/sim/comm_layout.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>
#include <vector>

#include "point_config.hpp"
#include "toposweep/sim/analytical_model.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/workload/iteration.hpp"

namespace toposweep {
namespace {

using Settings = std::initializer_list<std::pair<const char*, const char*>>;

// The event-driven engine (not the prepared playback) with the analytical model.
sim::JobTimes engine_times(const Network& net, const TaskGraph& graph, const sim::SimOptions& o) {
  const sim::Job job{"job", &graph, rank_order_placement(graph.gpus, net.gpus_per_node())};
  return sim::simulate_jobs(net, std::span<const sim::Job>(&job, 1), o).job(0);
}

void expect_bits(const sim::JobTimes& a, const sim::JobTimes& b) {
  EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);
  EXPECT_EQ(a.compute_time_s, b.compute_time_s);
  EXPECT_EQ(a.exposed_comm_time_s, b.exposed_comm_time_s);
  EXPECT_EQ(a.bubble_time_s, b.bubble_time_s);
  EXPECT_EQ(a.critical_stage, b.critical_stage);
}

// Plays `plan_settings`' plan on each of the networks the bandwidths give, through one layout.
// `transfer_sets`: the plan must hold sets of concurrent transfers that cross the network.
void check(Settings plan_settings, std::vector<const char*> bandwidths, std::size_t min_ops,
           bool transfer_sets = false) {
  Config base = testing::make_point_config(plan_settings);
  const Network first = network_from_config(base);
  const IterationPlan plan = plan_iteration_from_config(base, first.gpu_count());
  const sim::SimOptions o = sim::sim_options_from_config(base);
  const sim::CommLayout layout(plan.graph, first.gpus_per_node(), o.comm.analytical_all_instances);
  EXPECT_GE(layout.ops().size(), min_ops);
  if (transfer_sets) {
    std::size_t crossing = 0;
    for (const auto& op : layout.ops())
      crossing += op.mode == sim::CommLayout::Mode::TransferSet && !layout.injections()[op.injection].empty();
    EXPECT_GT(crossing, 0u);
  }
  for (const char* bw : bandwidths) {
    Config c = base;
    c.set("topology.link_bandwidth", bw, "test");
    const Network net = network_from_config(c);
    sim::AnalyticalModel model(net, o.comm);
    const sim::JobTimes once = model.play_times(layout);
    expect_bits(once, engine_times(net, plan.graph, o));
    expect_bits(model.play_times(layout), once);
    for (double busy : once.comm_busy_s) EXPECT_EQ(busy, 0.0);
  }
}

TEST(CommLayout, TransformerOnTopoOptEqualsTheEngine) {
  // dp all-reduces across servers, tp inside them, pipeline transfers between stages.
  check({{"topology.kind", "topoopt"},
         {"topology.servers", "16"},
         {"topology.degree", "4"},
         {"server.gpus", "4"},
         {"model.name", "bert-large"},
         {"strategy.tp", "2"},
         {"strategy.pp", "2"},
         {"strategy.microbatches", "4"}},
        {"100Gbps", "25Gbps"}, 3);
}

TEST(CommLayout, TransferSetsEqualTheEngine) {
  // Pipeline sends between stages on different servers: sets of concurrent transfers, four per
  // server into two links, so the busiest server's injection bounds them (sampled shapes too).
  check({{"topology.kind", "topoopt"},
         {"topology.servers", "16"},
         {"topology.degree", "2"},
         {"server.gpus", "4"},
         {"model.name", "bert-large"},
         {"strategy.tp", "1"},
         {"strategy.pp", "2"},
         {"strategy.microbatches", "4"}},
        {"100Gbps", "40Gbps"}, 1, true);
  // DLRM's embedding exchange.
  check({{"topology.kind", "topoopt"},
         {"topology.servers", "16"},
         {"topology.degree", "4"},
         {"server.gpus", "4"},
         {"model.name", "dlrm"}},
        {"100Gbps", "40Gbps"}, 1);
}

TEST(CommLayout, EveryInstanceTimedEqualsTheEngine) {
  check({{"topology.kind", "fattree"},
         {"topology.servers", "16"},
         {"server.gpus", "8"},
         {"model.name", "bert-large"},
         {"strategy.tp", "8"},
         {"strategy.pp", "2"},
         {"strategy.microbatches", "4"},
         {"simulate.analytical_instances", "all"}},
        {"200Gbps", "50Gbps"}, 2);
}

TEST(CommLayout, RefusesAModelWithOtherInstanceSettings) {
  const Config c = testing::make_point_config({{"topology.kind", "switch"},
                                               {"topology.servers", "4"},
                                               {"server.gpus", "4"},
                                               {"model.name", "bert-large"}});
  const Network net = network_from_config(c);
  const IterationPlan plan = plan_iteration_from_config(c, net.gpu_count());
  const sim::CommLayout layout(plan.graph, net.gpus_per_node(), true);
  sim::AnalyticalModel model(net, sim::sim_options_from_config(c).comm);
  EXPECT_ANY_THROW(model.play_times(layout));
}

}  // namespace
}  // namespace toposweep
