// Sweep points that run an optimizer first (point.optimize): the row describes the design the
// optimizer chose, and replaying that design as a plain point gives the same time.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <utility>

#include "toposweep/collective/config_keys.hpp"
#include "toposweep/opt/config_keys.hpp"
#include "toposweep/opt/design_point.hpp"
#include "toposweep/point/config_keys.hpp"
#include "toposweep/point/evaluate.hpp"
#include "toposweep/sim/config_keys.hpp"
#include "toposweep/topology/config_keys.hpp"
#include "toposweep/util/error.hpp"
#include "point_config.hpp"
#include "toposweep/workload/config_keys.hpp"

namespace toposweep {
namespace {

// A switch network where the configured strategy (pure data parallelism on slow links) is not
// the best one: the strategy search must find one at least as fast, and the row must be that
// strategy's own time.
TEST(OptimizedPoint, StrategySearchRowMatchesReplayOfChosenStrategy) {
  const std::initializer_list<std::pair<const char*, const char*>> base = {
      {"model.name", "gpt3-1.3b"}, {"topology.kind", "switch"}, {"topology.servers", "4"},
      {"topology.link_bandwidth", "10Gbps"}, {"server.gpus", "4"}};
  PointEvaluator evaluator;
  Config given = testing::make_point_config(base);
  const PointResult as_given = evaluator.evaluate(given);
  ASSERT_EQ(as_given.status, PointStatus::Evaluated) << as_given.message;
  EXPECT_EQ(as_given.optimizer_rounds, 0u);

  Config optimized = given;
  optimized.set("point.optimize", "strategy", "test");
  const PointResult best = evaluator.evaluate(optimized);
  ASSERT_EQ(best.status, PointStatus::Evaluated) << best.message;
  EXPECT_GE(best.optimizer_rounds, 1u);
  EXPECT_LE(best.iteration_time_s, as_given.iteration_time_s * (1 + 1e-12));
  EXPECT_EQ(best.dp * best.tp * best.pp, 16u);
  EXPECT_DOUBLE_EQ(best.cost_usd, as_given.cost_usd);  // the network is fixed for this target

  // The optimizer's full choice (schedule, ZeRO-1, ... as well as the degrees), replayed as a
  // plain point.
  const opt::OptimizeResult chosen = opt::optimize_design_point(given, opt::OptimizeTarget::Strategy);
  const Strategy& s = chosen.strategy;
  EXPECT_EQ(s.dp, best.dp);
  EXPECT_EQ(s.tp, best.tp);
  EXPECT_EQ(s.pp, best.pp);
  EXPECT_EQ(s.microbatches, best.microbatches);
  Config replay = given;
  replay.set("strategy.dp", std::to_string(s.dp), "test");
  replay.set("strategy.tp", std::to_string(s.tp), "test");
  replay.set("strategy.pp", std::to_string(s.pp), "test");
  replay.set("strategy.microbatches", std::to_string(s.microbatches), "test");
  replay.set("strategy.schedule", s.schedule == PipelineSchedule::GPipe ? "gpipe" : "1f1b", "test");
  replay.set("strategy.zero", std::to_string(s.zero), "test");
  replay.set("strategy.recompute", s.recompute ? "true" : "false", "test");
  replay.set("strategy.sequence_parallel", s.sequence_parallel ? "true" : "false", "test");
  const PointResult replayed = evaluator.evaluate(replay);
  ASSERT_EQ(replayed.status, PointStatus::Evaluated) << replayed.message;
  EXPECT_NEAR(replayed.iteration_time_s, best.iteration_time_s, 1e-9 * best.iteration_time_s);
}

TEST(OptimizedPoint, UnknownOptimizerIsBadInput) {
  Config c = testing::make_point_config({{"point.optimize", "gradient-descent"}});
  PointEvaluator evaluator;
  EXPECT_THROW(evaluator.evaluate(c), BadInput);
}

}  // namespace
}  // namespace toposweep
