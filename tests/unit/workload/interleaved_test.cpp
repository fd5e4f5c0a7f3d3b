// The interleaved 1F1B schedule (Megatron-LM virtual pipeline stages, Narayanan et al. SC'21):
// iteration time against the paper's closed form with free communication, one PP transfer per
// chunk boundary (including the wrap from the last device to the first), gradients reduced once,
// validation and the strategy JSON.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/config_keys.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/model_library.hpp"
#include "workload_test_helpers.hpp"

namespace toposweep {
namespace {

Strategy interleaved(std::uint32_t dp, std::uint32_t pp, std::uint32_t v, std::uint32_t mu) {
  Strategy s;
  s.dp = dp;
  s.pp = pp;
  s.microbatches = mu;
  s.schedule = PipelineSchedule::Interleaved;
  s.virtual_stages = v;
  return s;
}

TEST(Interleaved, IterationTimeIsMuPlusBubbleOverV) {
  // Narayanan et al. SC'21 §2.2.2: with v chunks per device the bubble shrinks to
  // (pp - 1)(t_f + t_b)/v, t_f and t_b one microbatch on a whole device's layers, so the
  // iteration takes (mu + (pp - 1)/v)(t_f + t_b).
  for (std::uint32_t v : {2u, 4u})
    for (std::uint32_t pp : {2u, 4u})
      for (std::uint32_t mu : {pp, 2 * pp, 4 * pp}) {
        const int per_chunk = 2;  // two layers per chunk
        const Workload w = make_workload(test::uniform_chain(static_cast<int>(pp * v) * per_chunk),
                                         builtin_device("a100"), "fp16", mu);
        const auto plan = plan_iteration(w, interleaved(1, pp, v, mu));
        const double layers_per_device = per_chunk * v;
        const double tf = layers_per_device * 1e12 / w.flops_per_s, tb = 2 * tf;
        const double expected = (mu + (pp - 1.0) / v) * (tf + tb);
        EXPECT_NEAR(test::makespan_without_comm(plan.graph), expected, 1e-9 * expected)
            << "pp=" << pp << " v=" << v << " mu=" << mu;
        // Each device runs every microbatch through each of its chunks once each way.
        std::size_t passes = 0;
        for (const auto& t : plan.graph.tasks)
          if (t.kind == TaskKind::Compute && t.phase != TaskPhase::WeightUpdate) ++passes;
        EXPECT_EQ(passes, 2u * pp * v * mu);
      }
}

TEST(Interleaved, OneChunkPerDeviceIsPlainOneFOneB) {
  // Reference point of the closed form: v = 1 is 1F1B, (mu + pp - 1)(t_f + t_b).
  for (std::uint32_t pp : {2u, 4u})
    for (std::uint32_t mu : {pp, 4 * pp}) {
      const Workload w =
          make_workload(test::uniform_chain(static_cast<int>(pp)), builtin_device("a100"), "fp16", mu);
      Strategy s = interleaved(1, pp, 2, mu);
      s.schedule = PipelineSchedule::OneFOneB;
      s.virtual_stages = 1;
      const double tf = 1e12 / w.flops_per_s, tb = 2 * tf;
      EXPECT_NEAR(test::makespan_without_comm(plan_iteration(w, s).graph), (mu + pp - 1.0) * (tf + tb), 1e-9);
    }
}

TEST(Interleaved, OneTransferPerChunkBoundaryEachWayIncludingTheWrap) {
  // GPT-3 1.3B (24 blocks), dp 2, pp 4, v 2: 8 chunks, 7 boundaries each way per microbatch
  // (1F1B: 3), each carrying b*s*h fp16 values from every (t, d) rank pair.
  const Workload w = make_workload(builtin_model("gpt3-1.3b"), builtin_device("a100"), "fp16", 16);
  const std::uint32_t pp = 4, v = 2, mu = 8;
  const double b = 16.0 / 2 / mu, bsh_bytes = b * 2048 * 2048 * 2;
  const auto plan = plan_iteration(w, interleaved(2, pp, v, mu));
  std::size_t fwd = 0, bwd = 0, wraps = 0;
  double bytes = 0;
  for (const auto& t : plan.graph.tasks) {
    if (t.purpose != CommPurpose::PipelineParallel) continue;
    EXPECT_EQ(t.kind, TaskKind::Transfer);
    EXPECT_DOUBLE_EQ(t.bytes, bsh_bytes);
    bytes += t.bytes * t.repeat;
    (t.phase == TaskPhase::Forward ? fwd : bwd)++;
    const auto& groups = plan.graph.group_sets[t.group_set].groups;
    // rank = d + 2p: device 3 holds ranks 6, 7; device 0 ranks 0, 1.
    if (t.phase == TaskPhase::Forward && t.stage == pp - 1) {
      EXPECT_EQ(groups, (std::vector<std::vector<std::uint32_t>>{{6, 0}, {7, 1}}));
      ++wraps;
    }
    if (t.phase == TaskPhase::Backward && t.stage == 0) {
      EXPECT_EQ(groups, (std::vector<std::vector<std::uint32_t>>{{0, 6}, {1, 7}}));
      ++wraps;
    }
  }
  EXPECT_EQ(fwd, (pp * v - 1) * mu);
  EXPECT_EQ(bwd, (pp * v - 1) * mu);
  EXPECT_EQ(wraps, 2u * (v - 1) * mu);  // one wrap per chunk round change, each way
  EXPECT_DOUBLE_EQ(bytes, 2.0 * (pp * v - 1) * mu * bsh_bytes);
}

TEST(Interleaved, GradientsAreReducedOnceAndEachDeviceStepsOnce) {
  // Every parameter's gradient is AllReduced exactly once over DP whatever the chunking; the
  // total is the model's parameters plus the tied embedding copy on the last device, in fp16.
  const Workload w = make_workload(builtin_model("gpt3-1.3b"), builtin_device("a100"), "fp16", 16);
  const auto plan = plan_iteration(w, interleaved(2, 4, 3, 8));
  double reduced = 0;
  std::size_t steps = 0;
  for (const auto& t : plan.graph.tasks) {
    if (plan.graph.labels[t.label] == "dp_allreduce") reduced += t.bytes * t.repeat;
    if (t.phase == TaskPhase::WeightUpdate) ++steps;
  }
  const double params = w.model.parameters() + 50257.0 * 2048;  // + the head's tied copy
  EXPECT_NEAR(reduced, params * 2, 1e-9 * params);
  EXPECT_EQ(steps, 4u);
}

// The error class thrown for a strategy given directly: 'd' InvalidDesign, 'b' other BadInput.
char error_class(const Strategy& s) {
  const Workload w = make_workload(builtin_model("gpt3-1.3b"), builtin_device("a100"), "fp16", 16);
  try {
    plan_iteration(w, s);
  } catch (const InvalidDesign&) {
    return 'd';
  } catch (const BadInput&) {
    return 'b';
  }
  return '-';
}

TEST(Interleaved, ValidationNamesTheKey) {
  const std::vector<std::string> base = {"model.name=gpt3-1.3b", "strategy.pp=4", "model.global_batch=16",
                                         "strategy.schedule=interleaved"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), base.begin(), base.end());
    return extra;
  };
  // Microbatches must be a multiple of pp (Megatron's requirement).
  EXPECT_EQ(test::plan_error_where(with({"strategy.virtual_stages=2", "strategy.microbatches=2"}), 8),
            "key strategy.microbatches at --set");
  EXPECT_EQ(error_class(interleaved(2, 4, 2, 2)), 'd');
  EXPECT_EQ(error_class(interleaved(2, 4, 2, 4)), '-');
  EXPECT_EQ(error_class(interleaved(2, 4, 1, 4)), 'd');
  EXPECT_EQ(error_class(interleaved(8, 1, 2, 2)), 'd');
  EXPECT_EQ(test::plan_error_where(with({"strategy.virtual_stages=2", "strategy.microbatches=6"}), 8),
            "key strategy.microbatches at --set");
  // Interleaving needs at least two chunks per device, and no more chunks than blocks (24).
  EXPECT_EQ(test::plan_error_where(with({"strategy.microbatches=4"}), 8),
            "key strategy.virtual_stages at default");
  EXPECT_EQ(test::plan_error_where(with({"strategy.virtual_stages=7", "strategy.microbatches=4"}), 8),
            "key strategy.virtual_stages at --set");
  EXPECT_EQ(test::plan_error_where(with({"strategy.virtual_stages=6", "strategy.microbatches=4"}), 8),
            "no error");
  EXPECT_EQ(test::plan_error_where({"model.name=gpt3-1.3b", "strategy.pp=4", "model.global_batch=16",
                                    "strategy.microbatches=4", "strategy.virtual_stages=2"},
                                   8),
            "key strategy.virtual_stages at --set");  // 1f1b with chunks
  EXPECT_EQ(
      test::plan_error_where({"model.name=gpt3-1.3b", "model.global_batch=16", "strategy.microbatches=2",
                              "strategy.schedule=interleaved", "strategy.virtual_stages=2"},
                             8),
      "key strategy.pp at default");  // pp = 1
}

TEST(Interleaved, StrategyJsonCarriesScheduleAndChunks) {
  const auto plan = plan_iteration_from_config(
      test::workload_config({"model.name=gpt3-1.3b", "strategy.pp=2", "model.global_batch=8",
                             "strategy.microbatches=4", "strategy.schedule=interleaved",
                             "strategy.virtual_stages=3"}),
      4);
  EXPECT_EQ(plan.strategy.schedule, PipelineSchedule::Interleaved);
  EXPECT_EQ(plan.strategy.virtual_stages, 3u);
  const auto j = strategy_to_json(plan.strategy);
  EXPECT_EQ(j.at("schedule"), "interleaved");
  EXPECT_EQ(j.at("virtual_stages"), 3);
  // Other schedules keep their JSON as before (no virtual_stages field).
  EXPECT_FALSE(strategy_to_json(Strategy{}).contains("virtual_stages"));
  EXPECT_EQ(strategy_to_json(Strategy{}).at("schedule"), "1f1b");
}

}  // namespace
}  // namespace toposweep
