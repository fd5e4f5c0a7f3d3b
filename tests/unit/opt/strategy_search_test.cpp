#include "toposweep/opt/strategy_search.hpp"

#include <gtest/gtest.h>

#include <array>
#include <limits>

#include "test_config.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/workload/iteration.hpp"

namespace toposweep::opt {
namespace {

// A chain-coupled cost over 6 coordinates with 6 values each (46656 states) with many local
// minima; its minimum is found by brute force.
using State = std::array<int, 6>;
double rugged_cost(const State& x) {
  double c = 10;
  for (int i = 0; i < 6; ++i) {
    c += ((x[i] * 5 + 2 * i) % 6) * 0.7;
    c += ((x[i] + 2 * x[(i + 1) % 6]) % 6 == 3 ? -1.5 : 0.4);
  }
  return c;
}

TEST(Metropolis, FindsTheBruteForceMinimumFromRandomStarts) {
  double best = std::numeric_limits<double>::infinity();
  State s{};
  for (int code = 0; code < 46656; ++code) {
    int v = code;
    for (int i = 0; i < 6; ++i) s[i] = v % 6, v /= 6;
    best = std::min(best, rugged_cost(s));
  }
  std::function<std::optional<State>(const State&, std::mt19937_64&)> propose = [](const State& x,
                                                                                   std::mt19937_64& rng) {
    State y = x;
    y[rng() % 6] = static_cast<int>(rng() % 6);
    return std::optional<State>(y);
  };
  std::function<std::optional<double>(const State&)> cost = [](const State& x) {
    return std::optional<double>(rugged_cost(x));
  };
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    std::mt19937_64 rng(seed * 977);
    State start;
    for (auto& v : start) v = static_cast<int>(rng() % 6);
    MetropolisSettings ms;
    ms.seed = seed;
    ms.budget = 3000;
    ms.temperature = 0.05;
    ms.restart_after = 300;
    const auto r = metropolis_search<State>(start, rugged_cost(start), propose, cost, ms);
    EXPECT_NEAR(r.best_cost, best, 1e-12) << "seed " << seed;
    EXPECT_DOUBLE_EQ(rugged_cost(r.best), r.best_cost);
  }
}

TEST(Metropolis, SameSeedSameWalk) {
  std::function<std::optional<int>(const int&, std::mt19937_64&)> propose = [](const int& x,
                                                                               std::mt19937_64& rng) {
    return std::optional<int>((x + 1 + static_cast<int>(rng() % 50)) % 100);
  };
  std::function<std::optional<double>(const int&)> cost = [](const int& x) {
    return std::optional<double>(1.0 + ((x * 37) % 100));
  };
  MetropolisSettings ms;
  ms.budget = 40;
  const auto a = metropolis_search<int>(0, 1.0, propose, cost, ms);
  const auto b = metropolis_search<int>(0, 1.0, propose, cost, ms);
  EXPECT_EQ(a.best, b.best);
  EXPECT_EQ(a.accepted, b.accepted);
}

struct SmallSetup {
  Config config;
  Network net;
  Workload workload;
  sim::SimOptions options;
};

SmallSetup small_setup(const std::string& model) {
  SmallSetup s;
  s.config = testing::make_config({{"model.name", model},
                                   {"topology.kind", "switch"},
                                   {"topology.servers", "4"},
                                   {"server.gpus", "2"},
                                   {"topology.link_bandwidth", "25Gbps"}});
  s.net = network_from_config(s.config);
  s.workload = workload_from_config(s.config, s.net.gpu_count());
  s.options = sim::sim_options_from_config(s.config);
  return s;
}

StrategySpace small_space() {
  StrategySpace space;
  space.set(&StrategyKnobs::schedule, {PipelineSchedule::OneFOneB});
  space.set(&StrategyKnobs::recompute, {Recompute::None});
  space.set(&StrategyKnobs::zero, {0});
  space.set(&StrategyKnobs::sequence_parallel, {false});
  space.set(&StrategyKnobs::tp_overlap, {TpOverlap::None});
  space.set(&StrategyKnobs::dp_overlap, {true});
  space.max_microbatches = 4;
  return space;
}

TEST(StrategySearch, ExhaustiveReturnsTheTrueMinimum) {
  auto s = small_setup("bert-large");
  StrategyScorer scorer(s.workload, s.net, s.options);
  const auto space = small_space();
  const auto r = exhaustive_strategy_search(scorer, s.workload, space);
  // Independently: simulate every feasible strategy without the scorer's memo.
  double best = std::numeric_limits<double>::infinity();
  std::uint64_t feasible = 0;
  for (const auto& st : feasible_strategies(s.workload, 8, space)) {
    const auto plan = plan_iteration(s.workload, st);
    if (!plan.feasible) continue;
    ++feasible;
    best = std::min(best, sim::simulate_iteration(s.net, plan.graph, s.options).job(0).iteration_time_s);
  }
  ASSERT_GT(feasible, 3u);
  // Every candidate that fits is simulated or pruned by its compute bound.
  EXPECT_EQ(r.evaluated + r.pruned, feasible);
  EXPECT_DOUBLE_EQ(r.iteration_time_s, best);
  EXPECT_DOUBLE_EQ(*scorer.iteration_time(r.best), best);
}

TEST(StrategySearch, McmcFindsTheExhaustiveMinimumFromRandomStarts) {
  auto s = small_setup("bert-large");
  StrategyScorer scorer(s.workload, s.net, s.options);
  const auto space = small_space();
  const auto exhaustive = exhaustive_strategy_search(scorer, s.workload, space);
  const auto all = feasible_strategies(s.workload, 8, space);
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    McmcStrategySettings ms;
    ms.metropolis.seed = seed;
    ms.metropolis.budget = 100;  // the space has 30 strategies; the walk revisits
    const Strategy& start = all[(seed * 7) % all.size()];
    const auto r = mcmc_strategy_search(scorer, s.workload, start, ms, space);
    EXPECT_DOUBLE_EQ(r.iteration_time_s, exhaustive.iteration_time_s) << "seed " << seed;
  }
}

TEST(StrategySearch, McmcImprovesTablePlacementOfARecommendationModel) {
  auto s = small_setup("ncf");
  StrategyScorer scorer(s.workload, s.net, s.options);
  Strategy start = pure_data_parallel(8);
  start.table_owner.assign(s.workload.model.tables.size(), 0);  // every table on GPU 0: a hot spot
  const auto t0 = scorer.iteration_time(start);
  ASSERT_TRUE(t0);
  McmcStrategySettings ms;
  ms.metropolis.budget = 150;
  const auto r = mcmc_strategy_search(scorer, s.workload, start, ms);
  EXPECT_LT(r.iteration_time_s, *t0);
  EXPECT_DOUBLE_EQ(*scorer.iteration_time(r.best), r.iteration_time_s);
  ms.metropolis.budget = 0;
  EXPECT_THROW(mcmc_strategy_search(scorer, s.workload, start, ms), BadInput);
}

}  // namespace
}  // namespace toposweep::opt
