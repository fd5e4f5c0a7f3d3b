// The point evaluator end to end: configuration -> network -> iteration plan -> simulation.
#include "toposweep/point/evaluate.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <initializer_list>
#include <string>
#include <utility>

#include "evaluation_helpers.hpp"
#include "point_config.hpp"
#include "toposweep/collective/config_keys.hpp"
#include "toposweep/opt/config_keys.hpp"
#include "toposweep/point/config_keys.hpp"
#include "toposweep/sim/config_keys.hpp"
#include "toposweep/topology/config_keys.hpp"
#include "toposweep/util/error.hpp"
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

void expect_bits(const PointResult& a, const PointResult& b) {
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.message, b.message);
  EXPECT_EQ(std::isnan(a.iteration_time_s), std::isnan(b.iteration_time_s));
  if (!std::isnan(a.iteration_time_s)) {
    EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);
    EXPECT_EQ(a.compute_time_s, b.compute_time_s);
    EXPECT_EQ(a.exposed_comm_time_s, b.exposed_comm_time_s);
    EXPECT_EQ(a.bubble_time_s, b.bubble_time_s);
  }
  EXPECT_EQ(a.memory_per_gpu_bytes, b.memory_per_gpu_bytes);
  EXPECT_EQ(a.cost_usd, b.cost_usd);
  EXPECT_EQ(a.dp, b.dp);
  EXPECT_EQ(a.tp, b.tp);
}

TEST(PointEvaluator, SeveralNetworksAndPlansCachedAtOnceGiveEachPointsOwnAnswer) {
  // Topology varying fastest (as perf-1024.ini enumerates): one cache holds every network and
  // plan; each row must equal the row a fresh cache gives, on the first pass and the second.
  // GPT-3 on 16 x 8 GPUs does not fit with pp 1 and fits with pp 16 (memory-only plans and full
  // plans alternate in the cache).
  testing::RowEvaluator shared;
  std::size_t infeasible = 0, evaluated = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (const char* pp : {"1", "16"})
      for (const char* bw : {"100Gbps", "400Gbps"})
        for (const char* kind : {"switch", "fattree", "topoopt"}) {
          const Config c = make_config({{"topology.kind", kind},
                                        {"topology.servers", "16"},
                                        {"topology.degree", "2"},
                                        {"topology.link_bandwidth", bw},
                                        {"server.gpus", "8"},
                                        {"model.name", "gpt3-175b"},
                                        {"model.batch_per_gpu", "1"},
                                        {"strategy.tp", "8"},
                                        {"strategy.pp", pp},
                                        {"strategy.microbatches", "8"},
                                        {"strategy.recompute", "true"}});
          const PointResult r = shared.evaluate(c);
          testing::RowEvaluator fresh;
          expect_bits(r, fresh.evaluate(c));
          expect_bits(r, testing::full_evaluation(c).row);
          ++(r.status == PointStatus::Infeasible ? infeasible : evaluated);
        }
  EXPECT_EQ(infeasible, 12u);
  EXPECT_EQ(evaluated, 12u);
}

TEST(PointEvaluator, EvictedNetworksAndPlansAreBuiltAgainWithTheSameAnswers) {
  // More networks (and so plans: the GPU count differs) than the cache holds (64 here): the
  // oldest are dropped (and forgotten by the analytical models that memoised them) and built
  // again when they come back, in reverse order.
  auto point = [](std::uint32_t servers) {
    const std::string n = std::to_string(servers);
    return make_config({{"topology.kind", "switch"},
                        {"topology.servers", n.c_str()},
                        {"server.gpus", "2"},
                        {"model.name", "bert-large"},
                        {"strategy.tp", "2"}});
  };
  testing::RowEvaluator shared(PointCacheLimits{.networks = 64});
  std::vector<PointResult> first;
  for (std::uint32_t servers = 2; servers < 72; ++servers) first.push_back(shared.evaluate(point(servers)));
  for (std::uint32_t servers = 71; servers >= 2; --servers) {
    const PointResult again = shared.evaluate(point(servers));
    ASSERT_EQ(again.status, PointStatus::Evaluated) << again.message;
    expect_bits(again, first[servers - 2]);
    testing::RowEvaluator fresh;
    expect_bits(again, fresh.evaluate(point(servers)));
  }
}

TEST(PointEvaluator, EvictedPlansAreForgottenByTheNetworksThatStay) {
  // Two networks stay cached while more plans than the cache holds come and go: a network's
  // analytical model must not answer a new plan from the memo of an evicted one (their task
  // graphs and layouts may reuse the same addresses).
  auto point = [](const char* bw, std::uint32_t batch) {
    const std::string b = std::to_string(batch);
    return make_config({{"topology.kind", "fattree"},
                        {"topology.servers", "8"},
                        {"topology.link_bandwidth", bw},
                        {"server.gpus", "2"},
                        {"model.name", "bert-large"},
                        {"model.batch_per_gpu", b.c_str()}});
  };
  testing::RowEvaluator shared;
  for (int pass = 0; pass < 2; ++pass)
    for (std::uint32_t batch = 1; batch <= 40; ++batch)
      for (const char* bw : {"100Gbps", "400Gbps"}) {
        const std::uint32_t b = pass == 0 ? batch : 41 - batch;
        const PointResult r = shared.evaluate(point(bw, b));
        ASSERT_EQ(r.status, PointStatus::Evaluated) << r.message;
        testing::RowEvaluator fresh;
        expect_bits(r, fresh.evaluate(point(bw, b)));
      }
}

TEST(PointEvaluator, AnImpossibleStrategyFailsAlikeFromTheCache) {
  // 3 microbatches do not divide a replica's batch of 8: the plan fails for every network. The
  // cache remembers the failure; each point still gets the same error, naming the same key.
  auto failure = [](const Config& c, PointCache& cache) {
    try {
      evaluate_config(c, cache, Detail::Row);
    } catch (const InvalidDesign& e) {
      return std::string(e.what()) + " @ " + e.where();
    }
    return std::string("no failure");
  };
  PointCache shared;
  for (int pass = 0; pass < 2; ++pass)
    for (const char* kind : {"switch", "fattree"}) {
      const Config c = make_config({{"topology.kind", kind},
                                    {"topology.servers", "2"},
                                    {"server.gpus", "8"},
                                    {"model.name", "gpt3-175b"},
                                    {"model.batch_per_gpu", "1"},
                                    {"strategy.tp", "8"},
                                    {"strategy.microbatches", "3"}});
      PointCache fresh;
      const std::string expected = failure(c, fresh);
      EXPECT_NE(expected.find("microbatches"), std::string::npos) << expected;
      EXPECT_EQ(failure(c, shared), expected);
    }
}

TEST(PointEvaluator, FullDetailAfterARowOfAnInfeasibleDesignHasItsTaskGraph) {
  // The row of a design that does not fit keeps no task graph; `simulate` of the same design
  // through the same cache still gets the whole plan.
  const Config c = make_config({{"topology.kind", "switch"},
                                {"topology.servers", "2"},
                                {"server.gpus", "1"},
                                {"model.name", "gpt3-175b"},
                                {"model.batch_per_gpu", "1"}});
  PointCache cache;
  const PointResult row = evaluate_config(c, cache, Detail::Row).row;
  const Evaluation full = evaluate_config(c, cache, Detail::Full);
  EXPECT_EQ(row.status, PointStatus::Infeasible);
  expect_bits(row, full.row);
  EXPECT_FALSE(full.plan.graph.tasks.empty());
  EXPECT_EQ(full.plan.graph.gpus, 2u);
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
  for (const char* jobs : {"bert-large", "bert-large:0", ":4", "bert-large:x", "bert-large:9",
                           "bert-large:4:tp0", "bert-large:tp2", "bert-large:4:tpx"}) {
    const Config c =
        make_config({{"topology.kind", "switch"}, {"topology.servers", "8"}, {"simulate.jobs", jobs}});
    EXPECT_THROW(testing::full_evaluation(c), BadInput) << jobs;
  }
}

}  // namespace
}  // namespace toposweep
