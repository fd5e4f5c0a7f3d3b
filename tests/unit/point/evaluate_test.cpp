// The point evaluator end to end: configuration -> network -> iteration plan -> simulation.
#include "toposweep/point/evaluate.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <initializer_list>
#include <utility>

#include "toposweep/collective/config_keys.hpp"
#include "toposweep/opt/config_keys.hpp"
#include "toposweep/point/config_keys.hpp"
#include "evaluation_helpers.hpp"
#include "toposweep/sim/config_keys.hpp"
#include "toposweep/topology/config_keys.hpp"
#include "toposweep/util/error.hpp"
#include "point_config.hpp"
#include "toposweep/workload/config_keys.hpp"

namespace toposweep {
namespace {

using testing::make_point_config;
Config make_config(std::initializer_list<std::pair<const char*, const char*>> settings) {
  return make_point_config(settings);
}

Config small_bert(const char* model = "analytical") {
  return make_config({{"topology.kind", "switch"},
                      {"topology.servers", "4"},
                      {"server.gpus", "4"},
                      {"model.name", "bert-large"},
                      {"simulate.network_model", model}});
}

void expect_same(const PointResult& a, const PointResult& b) {
  EXPECT_EQ(a.status, b.status);
  EXPECT_DOUBLE_EQ(a.iteration_time_s, b.iteration_time_s);
  EXPECT_DOUBLE_EQ(a.compute_time_s, b.compute_time_s);
  EXPECT_DOUBLE_EQ(a.exposed_comm_time_s, b.exposed_comm_time_s);
  EXPECT_DOUBLE_EQ(a.memory_per_gpu_bytes, b.memory_per_gpu_bytes);
  EXPECT_EQ(a.dp, b.dp);
}

TEST(PointEvaluator, MatchesTheFullSimulationAndItsBreakdownAddsUp) {
  const Config c = small_bert();
  testing::RowEvaluator ev;
  const PointResult r = ev.evaluate(c);
  ASSERT_EQ(r.status, PointStatus::Evaluated) << r.message;
  const Evaluation full = testing::full_evaluation(c);
  expect_same(r, full.row);
  EXPECT_NEAR(r.compute_time_s + r.exposed_comm_time_s + r.bubble_time_s, r.iteration_time_s,
              1e-12 * r.iteration_time_s);
  EXPECT_NEAR(r.samples_per_s, full.plan.global_batch / r.iteration_time_s, 1e-9 * r.samples_per_s);
  EXPECT_EQ(r.dp * r.tp * r.pp, 16u);
}

TEST(PointEvaluator, CachedNetworkAndPlanGiveTheSameAnswers) {
  const Config a = small_bert("analytical"), b = small_bert("flow");
  Config c = small_bert();
  c.set("topology.link_bandwidth", "25Gbps", "test");
  testing::RowEvaluator ev;
  const PointResult ra = ev.evaluate(a), rb = ev.evaluate(b), rc = ev.evaluate(c), ra2 = ev.evaluate(a);
  expect_same(ra, ra2);
  testing::RowEvaluator fresh_b, fresh_c;
  expect_same(rb, fresh_b.evaluate(b));
  expect_same(rc, fresh_c.evaluate(c));
  // A slower network cannot make the iteration faster.
  EXPECT_GE(rc.iteration_time_s, ra.iteration_time_s);
}

TEST(PointEvaluator, OneGpuIsComputeOnly) {
  // One GPU (one server hanging off a switch): no communication at all, so the iteration is
  // the sum of the compute tasks.
  const std::string file = ::testing::TempDir() + "one_server.topo";
  {
    std::ofstream f(file);
    f << "switch 1\n0 1 100Gbps\n1 0 100Gbps\n";
  }
  const Config c = make_config({{"topology.kind", "file"},
                                {"topology.file", file.c_str()},
                                {"server.gpus", "1"},
                                {"model.name", "resnet50"}});
  const Evaluation p = testing::full_evaluation(c);
  ASSERT_TRUE(p.simulated) << p.row.message;
  double sum = 0;
  for (const Task& t : p.plan.graph.tasks) {
    EXPECT_EQ(t.kind, TaskKind::Compute);
    sum += t.duration_s * t.repeat;
  }
  EXPECT_NEAR(p.row.iteration_time_s, sum, 1e-12 * sum);
  EXPECT_NEAR(p.row.compute_time_s, sum, 1e-12 * sum);
  EXPECT_DOUBLE_EQ(p.row.exposed_comm_time_s, 0.0);
}

TEST(PointEvaluator, MemoryInfeasibleIsAResultNotAnError) {
  // GPT-3 175B weights alone (350 GB in fp16) cannot fit one 80 GB GPU.
  const Config c = make_config({{"topology.kind", "switch"},
                                {"topology.servers", "2"},
                                {"server.gpus", "1"},
                                {"model.name", "gpt3-175b"},
                                {"model.batch_per_gpu", "1"}});
  testing::RowEvaluator ev;
  const PointResult r = ev.evaluate(c);
  EXPECT_EQ(r.status, PointStatus::Infeasible);
  EXPECT_FALSE(r.message.empty());
  EXPECT_GT(r.memory_per_gpu_bytes, 350e9);
  EXPECT_TRUE(std::isnan(r.iteration_time_s));
}

TEST(PointEvaluator, InconsistentStrategyIsBadInput) {
  const Config c = make_config({{"topology.kind", "switch"},
                                {"topology.servers", "4"},
                                {"server.gpus", "4"},
                                {"model.name", "bert-large"},
                                {"strategy.tp", "3"}});
  testing::RowEvaluator ev;
  EXPECT_THROW(ev.evaluate(c), BadInput);
}

TEST(PointEvaluator, BadNetworkModelNamesTheKey) {
  testing::RowEvaluator ev;
  try {
    // Rejected as the configuration is read, before any evaluation.
    ev.evaluate(small_bert("packet"));
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(e.where().find("simulate.network_model"), std::string::npos);
  }
}

TEST(MultiJob, JobsOnDisjointServersOfAFullBisectionSwitchDoNotSlowEachOtherDown) {
  // Two identical jobs on a switch: disjoint servers, disjoint links, same time as alone.
  Config two = make_config({{"topology.kind", "switch"},
                            {"topology.servers", "8"},
                            {"server.gpus", "2"},
                            {"simulate.network_model", "flow"},
                            {"simulate.jobs", "bert-large:4,bert-large:4"}});
  const Evaluation m = testing::full_evaluation(two);
  ASSERT_EQ(m.sim.engine.jobs.size(), 2u);
  Config one = two;
  one.set("simulate.jobs", "bert-large:4", "test");
  const Evaluation alone = testing::full_evaluation(one);
  const double t = alone.sim.engine.jobs[0].iteration_time_s;
  EXPECT_NEAR(m.sim.engine.jobs[0].iteration_time_s, t, 1e-9 * t);
  EXPECT_NEAR(m.sim.engine.jobs[1].iteration_time_s, t, 1e-9 * t);
  EXPECT_EQ(m.jobs[1].first_server, 4u);
}

TEST(MultiJob, JobStrategiesParse) {
  const Config c = make_config({{"simulate.jobs", "gpt3-1.3b:4:tp2:pp2:mb4,dlrm:8,models/m:v1.json:2:mb2"}});
  const auto jobs = parse_job_list(c.get_string("simulate.jobs"), c.where("simulate.jobs"));
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].model, "gpt3-1.3b");
  EXPECT_EQ(jobs[0].servers, 4u);
  EXPECT_EQ(jobs[0].tp, 2u);
  EXPECT_EQ(jobs[0].pp, 2u);
  EXPECT_EQ(jobs[0].microbatches, 4u);
  EXPECT_EQ(jobs[1].tp * jobs[1].pp * jobs[1].microbatches, 1u);
  EXPECT_EQ(jobs[2].model, "models/m:v1.json");  // a path may hold colons
  EXPECT_EQ(jobs[2].servers, 2u);
  EXPECT_EQ(jobs[2].microbatches, 2u);
}

// A job with its own 3-D strategy takes exactly the time `simulate` gives that strategy alone on a
// switch of the job's size: on a full-bisection switch each server has its own link, so the second
// job on other servers changes nothing under the analytical model.
TEST(MultiJob, AJobsStrategyIsSimulatedAsAlone) {
  const Config multi = make_config({{"topology.kind", "switch"},
                                    {"topology.servers", "8"},
                                    {"server.gpus", "2"},
                                    {"simulate.jobs", "gpt3-1.3b:4:tp2:pp2:mb4,bert-large:4"}});
  const Evaluation m = testing::full_evaluation(multi);
  ASSERT_EQ(m.jobs.size(), 2u);
  EXPECT_EQ(m.jobs[0].plan.tp, 2u);
  EXPECT_EQ(m.jobs[0].plan.pp, 2u);
  EXPECT_EQ(m.jobs[0].plan.dp, 2u);
  EXPECT_EQ(m.jobs[0].plan.microbatches, 4u);
  const Config single = make_config({{"topology.kind", "switch"},
                                     {"topology.servers", "4"},
                                     {"server.gpus", "2"},
                                     {"model.name", "gpt3-1.3b"},
                                     {"model.batch_per_gpu", "0"},
                                     {"strategy.dp", "2"},
                                     {"strategy.tp", "2"},
                                     {"strategy.pp", "2"},
                                     {"strategy.microbatches", "4"}});
  Config alone = single;
  const Evaluation p = testing::full_evaluation(alone, false);
  ASSERT_TRUE(p.simulated);
  EXPECT_DOUBLE_EQ(m.sim.engine.jobs[0].iteration_time_s, p.row.iteration_time_s);
  // tp x pp must divide the job's GPUs.
  Config bad = multi;
  bad.set("simulate.jobs", "gpt3-1.3b:1:tp4", "test");
  EXPECT_THROW(testing::full_evaluation(bad), InvalidDesign);
}

TEST(MultiJob, BadJobListsAreBadInput) {
  for (const char* jobs : {"bert-large", "bert-large:0", ":4", "bert-large:x", "bert-large:9", "bert-large:4:tp0",
                           "bert-large:tp2", "bert-large:4:tpx"}) {
    const Config c = make_config({{"topology.kind", "switch"}, {"topology.servers", "8"}, {"simulate.jobs", jobs}});
    EXPECT_THROW(testing::full_evaluation(c), BadInput) << jobs;
  }
}

}  // namespace
}  // namespace toposweep
