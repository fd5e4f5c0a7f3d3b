// strategy.dp_sms: the data-parallel collectives take that many SMs while they overlap the stage's
// compute. Against the schedule it stands for, derived from the run without it: with C_end and
// A_end the ends of the stage's last compute and last DP collective, and ov the time the DP
// collectives overlap the compute (summed here pair by pair from the spans of the run with
// dp_sms = 0), the stage's compute ends share x ov later, so the iteration grows by
// max(0, C_end + share x ov - max(C_end, A_end)), share = dp_sms / 132 on the H100.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "sim_test_helpers.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/workload/iteration.hpp"

namespace toposweep::sim {
namespace {

// GPT-3 350M on one server of 8 H100 (NVLink), pure data parallelism, two microbatches of 16,
// 4 MB gradient buckets: many reductions run under the last backward, and the last one ends soon
// after it, so 32 or more SMs taken outlast that tail.
Config gpt(std::uint32_t dp_sms, std::vector<std::pair<std::string, std::string>> more = {}) {
  std::vector<std::pair<std::string, std::string>> s = {{"topology.kind", "switch"},
                                                        {"topology.servers", "1"},
                                                        {"server.gpus", "8"},
                                                        {"server.device", "h100"},
                                                        {"topology.link_bandwidth", "800Gbps"},
                                                        {"model.name", "gpt3-350m"},
                                                        {"model.datatype", "bf16"},
                                                        {"model.global_batch", "256"},
                                                        {"strategy.dp", "8"},
                                                        {"strategy.microbatches", "2"},
                                                        {"strategy.bucket_size", "4MB"},
                                                        {"strategy.dp_sms", std::to_string(dp_sms)},
                                                        {"simulate.network_model", "analytical"}};
  for (auto& kv : more) s.push_back(std::move(kv));
  return test::sim_config(s);
}

struct Overlap {
  double compute_end = 0, comm_end = 0, overlap = 0;
};
// GPU 0's compute and DP collectives: their ends and their overlap, pair by pair.
Overlap overlap_of(const test::SimRun& r) {
  const auto& tasks = r.plan.graph.tasks;
  const auto& spans = r.result.engine.spans.at(0);
  std::vector<std::size_t> compute, comm;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].phase == TaskPhase::WeightUpdate) continue;  // the optimizer step and what follows it
    if (tasks[i].kind == TaskKind::Compute) compute.push_back(i);
    if (tasks[i].kind != TaskKind::Compute && tasks[i].purpose == CommPurpose::DataParallel)
      comm.push_back(i);
  }
  Overlap o;
  for (std::size_t c : compute) o.compute_end = std::max(o.compute_end, spans[c].end_s);
  for (std::size_t a : comm) o.comm_end = std::max(o.comm_end, spans[a].end_s);
  for (std::size_t c : compute)
    for (std::size_t a : comm)
      o.overlap += std::max(
          0.0, std::min(spans[c].end_s, spans[a].end_s) - std::max(spans[c].start_s, spans[a].start_s));
  return o;
}

void expect_slowed_by_the_overlap(const std::vector<std::pair<std::string, std::string>>& more) {
  const test::SimRun free = test::simulate_config(gpt(0, more));
  const Overlap o = overlap_of(free);
  ASSERT_GT(o.overlap, 0);
  for (const std::uint32_t sms : {32u, 64u, 100u}) {
    const test::SimRun slowed = test::simulate_config(gpt(sms, more));
    const double share = sms / 132.0;
    const double expected =
        std::max(0.0, o.compute_end + share * o.overlap - std::max(o.compute_end, o.comm_end));
    ASSERT_GT(expected, 0) << sms << " SMs: the slowdown must outlast the last collective";
    EXPECT_NEAR(slowed.result.job().iteration_time_s - free.result.job().iteration_time_s, expected, 1e-12)
        << sms << " SMs";
    // The event engine agrees with the fast path bit for bit.
    const Network net = network_from_config(gpt(sms, more));
    EXPECT_EQ(test::engine_result(net, slowed.plan.graph, sim_options_from_config(gpt(sms, more)))
                  .job()
                  .iteration_time_s,
              slowed.result.job().iteration_time_s);
  }
}

TEST(DpContention, GradientBucketsSlowTheBackwardTheyOverlap) {
  expect_slowed_by_the_overlap({});
}

TEST(DpContention, WeightGathersSlowTheForwardTheyOverlap) {
  // ZeRO-1 with the updated weights gathered under the first forward (Megatron-Core's
  // --overlap-param-gather): the gathers overlap too.
  expect_slowed_by_the_overlap({{"strategy.zero", "1"}, {"strategy.param_gather_overlap", "true"}});
}

TEST(DpContention, NothingOverlappedNothingTaken) {
  // One reduction after the backward: no overlap, the same time to the bit; and dp_sms = 0 adds no task.
  const std::vector<std::pair<std::string, std::string>> after = {{"strategy.dp_overlap", "false"}};
  const test::SimRun free = test::simulate_config(gpt(0, after));
  const test::SimRun slowed = test::simulate_config(gpt(32, after));
  EXPECT_EQ(overlap_of(free).overlap, 0.0);
  EXPECT_EQ(slowed.result.job().iteration_time_s, free.result.job().iteration_time_s);
  for (const std::string& l : free.plan.graph.labels) EXPECT_NE(l, "dp_sm_contention");
  EXPECT_NE(std::find(slowed.plan.graph.labels.begin(), slowed.plan.graph.labels.end(), "dp_sm_contention"),
            slowed.plan.graph.labels.end());
}

}  // namespace
}  // namespace toposweep::sim
