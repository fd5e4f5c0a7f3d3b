#include "toposweep/opt/alternating.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "test_config.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/memory.hpp"

namespace toposweep::opt {
namespace {

AlternatingSettings small_settings(const Config& c, std::uint32_t servers) {
  AlternatingSettings s;
  s.servers = servers;
  s.finder.degree = 3;
  s.finder.link_bandwidth_Bps = 12.5e9;
  s.finder.link_latency_s = 1e-6;
  s.finder.server.gpus = 2;
  s.finder.server.intra_bandwidth_Bps = 300e9;
  s.sim = sim::sim_options_from_config(c);
  s.mcmc.metropolis.budget = 40;
  s.patience = 2;
  s.max_rounds = 6;
  return s;
}

void check_trace(const AlternatingResult& r, const AlternatingSettings& s, const Workload& w) {
  ASSERT_FALSE(r.rounds.empty());
  EXPECT_EQ(r.rounds[0].strategy.dp, 16u);
  EXPECT_EQ(r.rounds[0].strategy.tp * r.rounds[0].strategy.pp, 1u);
  EXPECT_DOUBLE_EQ(r.baseline_time_s, r.rounds[0].iteration_time_s);
  double running = r.rounds[0].iteration_time_s;
  for (std::size_t i = 0; i < r.rounds.size(); ++i) {
    running = std::min(running, r.rounds[i].iteration_time_s);
    EXPECT_DOUBLE_EQ(r.rounds[i].best_time_s, running) << "round " << i;
    if (i > 0) {
      EXPECT_LE(r.rounds[i].best_time_s, r.rounds[i - 1].best_time_s);
    }
    EXPECT_EQ(r.rounds[i].round, i);
  }
  EXPECT_DOUBLE_EQ(r.best_time_s, running);
  EXPECT_LE(r.best_time_s, r.baseline_time_s);
  // Stopped for the right reason: K stale rounds at the end, or the round budget.
  ASSERT_LE(r.rounds.size(), s.max_rounds + 1);
  if (r.rounds.size() < s.max_rounds + 1) {
    EXPECT_EQ(r.stop_reason, "converged");
    const std::size_t n = r.rounds.size();
    for (std::size_t i = n - s.patience; i < n; ++i) {
      EXPECT_DOUBLE_EQ(r.rounds[i].best_time_s, r.rounds[n - s.patience - 1].best_time_s);
    }
  } else {
    EXPECT_TRUE(r.stop_reason == "max_rounds" || r.stop_reason == "converged") << r.stop_reason;
  }
  // The best strategy on the best network, simulated afresh, takes the reported time.
  const IterationPlan plan = plan_iteration(w, r.best_strategy);
  Placement p = rank_order_placement(r.best_strategy.gpus(), 2);
  for (auto& node : p.node_of_gpu) node = r.best_design.position_of_node[node];
  const double t =
      sim::simulate_iteration(r.best_design.network, plan.graph, s.sim, p).job(0).iteration_time_s;
  EXPECT_DOUBLE_EQ(t, r.best_time_s);
}

TEST(Alternating, McmcBestTimeNeverIncreasesAndIsReproducible) {
  const Config c = testing::make_config({{"model.name", "ncf"}});
  const Workload w = workload_from_config(c, 16);
  const auto s = small_settings(c, 8);
  const auto r = alternating_optimize(w, s);
  check_trace(r, s, w);
  const auto again = alternating_optimize(w, s);
  ASSERT_EQ(again.rounds.size(), r.rounds.size());
  EXPECT_DOUBLE_EQ(again.best_time_s, r.best_time_s);
  EXPECT_TRUE(again.best_strategy == r.best_strategy);
}

TEST(Alternating, ExhaustiveOnATransformer) {
  const Config c = testing::make_config({{"model.name", "bert-large"}});
  const Workload w = workload_from_config(c, 16);
  auto s = small_settings(c, 8);
  s.search = SearchMethod::Exhaustive;
  s.space.set(&StrategyKnobs::schedule, {PipelineSchedule::OneFOneB});
  s.space.set(&StrategyKnobs::recompute, {Recompute::None});
  s.space.set(&StrategyKnobs::zero, {0});
  s.space.max_microbatches = 4;
  const auto r = alternating_optimize(w, s);
  check_trace(r, s, w);
  EXPECT_GE(r.rounds.size(), 1u + s.patience);
}

// What the space fixes without searching it (the bucket, strategy.recompute_modules and
// strategy.recompute_layers) is in every round's strategy, the pure data-parallel start included,
// and in the answer; before, the start carried the defaults, and the exhaustive step kept that start
// whenever no searched strategy beat it.
TEST(Alternating, EveryRoundCarriesWhatTheSpaceFixes) {
  const Config c = testing::make_config({{"model.name", "bert-large"}});
  const Workload w = workload_from_config(c, 16);
  auto s = small_settings(c, 8);
  s.search = SearchMethod::Exhaustive;
  s.space.set(&StrategyKnobs::schedule, {PipelineSchedule::OneFOneB});
  s.space.set(&StrategyKnobs::recompute, {Recompute::None, Recompute::Full});
  s.space.set(&StrategyKnobs::zero, {0});
  s.space.max_microbatches = 2;
  s.space.bucket_bytes = 4.0 * 1024 * 1024;
  s.space.codes(*find_strategy_knob(&StrategyKnobs::recompute_layers)) = {2};
  s.space.codes(*find_strategy_knob(&StrategyKnobs::recompute_modules)) = {
      static_cast<std::uint32_t>(RecomputeModules::Mlp)};
  s.max_rounds = 2;
  const auto r = alternating_optimize(w, s);
  ASSERT_FALSE(r.rounds.empty());
  for (const auto& round : r.rounds) {
    EXPECT_EQ(round.strategy.recompute_layers, 2u) << "round " << round.round;
    EXPECT_EQ(round.strategy.recompute_modules, RecomputeModules::Mlp) << "round " << round.round;
    EXPECT_EQ(round.strategy.bucket_bytes, 4.0 * 1024 * 1024) << "round " << round.round;
  }
  EXPECT_EQ(r.best_strategy.recompute_layers, 2u);
  check_trace(r, s, w);
}

// A MoE model whose experts do not fit on every GPU: round 0 is the first pure data-parallel
// strategy that fits with its experts split over ep ranks (optimize.ep, then optimize.zero_stages,
// then optimize.recompute, each in its order), found here by the memory model directly; the All-to-Alls
// reach the TopologyFinder as model-parallel demand, and the answer replays.
TEST(Alternating, MoeStartsFromTheFirstPureDataParallelStrategyThatFits) {
  const Config c = testing::make_config({{"model.name", "mixtral-8x7b"},
                                         {"server.device", "h100"},
                                         {"model.datatype", "bf16"},
                                         {"model.fused_attention", "true"},
                                         {"model.global_batch", "16"}});
  const Workload w = workload_from_config(c, 16);
  auto s = small_settings(c, 8);
  s.search = SearchMethod::Exhaustive;
  s.space.set(&StrategyKnobs::ep, {1, 2, 4, 8});
  s.space.set(&StrategyKnobs::zero, {0, 1});
  s.space.set(&StrategyKnobs::schedule, {PipelineSchedule::OneFOneB});
  s.space.set(&StrategyKnobs::recompute, {Recompute::None, Recompute::Full});
  s.space.tp = {1};
  s.space.pp = {1, 2};
  s.space.max_microbatches = 2;
  s.max_rounds = 1;
  Strategy expected;
  bool found = false;
  for (const std::uint32_t ep : {1u, 2u, 4u, 8u})
    for (const std::uint8_t zero : {0, 1})
      for (const Recompute rc : {Recompute::None, Recompute::Full}) {
        Strategy t = pure_data_parallel(16);
        t.ep = ep;
        t.zero = zero;
        t.recompute = rc;
        if (!found && fits_in_memory(w, memory_per_gpu(w, t))) {
          expected = t;
          found = true;
        }
      }
  ASSERT_TRUE(found);
  // Pure data parallelism does not fit at ZeRO-0/1 on 16 GPUs; ep 8 with ZeRO-1 and full
  // recomputation is the first that does (73 GB of 80 GiB).
  ASSERT_EQ(expected.ep, 8u);
  const auto r = alternating_optimize(w, s);
  ASSERT_FALSE(r.rounds.empty());
  EXPECT_TRUE(r.rounds[0].strategy == expected);
  EXPECT_FALSE(r.rounds[0].mp_links.empty());  // the All-to-Alls asked for links
  EXPECT_LE(r.best_time_s, r.baseline_time_s);
  const IterationPlan plan = plan_iteration(w, r.best_strategy);
  Placement p = rank_order_placement(r.best_strategy.gpus(), 2);
  for (auto& node : p.node_of_gpu) node = r.best_design.position_of_node[node];
  EXPECT_DOUBLE_EQ(
      sim::simulate_iteration(r.best_design.network, plan.graph, s.sim, p).job(0).iteration_time_s,
      r.best_time_s);
}

// A spent wall-clock budget stops the loop at the next check: a budget far below one round's
// time leaves round 0 alone, whatever the machine.
TEST(Alternating, TimeBudgetStopsBetweenRounds) {
  const Config c = testing::make_config({{"model.name", "ncf"}});
  const Workload w = workload_from_config(c, 16);
  auto s = small_settings(c, 8);
  s.time_budget_s = 1e-9;
  const auto r = alternating_optimize(w, s);
  ASSERT_EQ(r.rounds.size(), 1u);
  EXPECT_EQ(r.stop_reason, "time_budget");
  EXPECT_DOUBLE_EQ(r.best_time_s, r.baseline_time_s);
  // An ample budget changes nothing: the same rounds as with no budget.
  s.time_budget_s = 3600;
  const auto ample = alternating_optimize(w, s);
  s.time_budget_s = 0;
  const auto none = alternating_optimize(w, s);
  ASSERT_EQ(ample.rounds.size(), none.rounds.size());
  EXPECT_DOUBLE_EQ(ample.best_time_s, none.best_time_s);
  EXPECT_EQ(ample.stop_reason, none.stop_reason);
  EXPECT_NE(none.stop_reason, "time_budget");
}

// With one round allowed and room for patience, the round budget is what stops the loop.
TEST(Alternating, MaxRoundsIsReported) {
  const Config c = testing::make_config({{"model.name", "ncf"}});
  const Workload w = workload_from_config(c, 16);
  auto s = small_settings(c, 8);
  s.max_rounds = 1;
  s.patience = 5;
  const auto r = alternating_optimize(w, s);
  ASSERT_EQ(r.rounds.size(), 2u);
  EXPECT_EQ(r.stop_reason, "max_rounds");
}

}  // namespace
}  // namespace toposweep::opt
