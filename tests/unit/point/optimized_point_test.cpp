// Sweep points that run an optimizer first (point.optimize): the row describes the design the
// optimizer chose, and replaying that design as a plain point gives the same time.
#include <gtest/gtest.h>

#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "evaluation_helpers.hpp"
#include "point_config.hpp"
#include "toposweep/collective/config_keys.hpp"
#include "toposweep/opt/config_keys.hpp"
#include "toposweep/opt/design_point.hpp"
#include "toposweep/point/config_keys.hpp"
#include "toposweep/sim/config_keys.hpp"
#include "toposweep/topology/config_keys.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/workload/config_keys.hpp"

namespace toposweep {
namespace {

// The optimizer on a configuration's design point, as `toposweep optimize` runs it.
opt::OptimizeResult run_optimizer(const Config& c, opt::OptimizeTarget target) {
  PointCache cache;
  return *evaluate_config(c, cache, Detail::Full, target).optimized;
}

// A switch network where the configured strategy (pure data parallelism on slow links) is not
// the best one: the strategy search must find one at least as fast, and the row must be that
// strategy's own time.
TEST(OptimizedPoint, StrategySearchRowMatchesReplayOfChosenStrategy) {
  const std::initializer_list<std::pair<const char*, const char*>> base = {
      {"model.name", "gpt3-1.3b"},
      {"topology.kind", "switch"},
      {"topology.servers", "4"},
      {"topology.link_bandwidth", "10Gbps"},
      {"server.gpus", "4"}};
  testing::RowEvaluator evaluator;
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
  const opt::OptimizeResult chosen = run_optimizer(given, opt::OptimizeTarget::Strategy);
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
  replay.set("strategy.schedule", schedule_name(s.schedule), "test");
  replay.set("strategy.virtual_stages", std::to_string(s.virtual_stages), "test");
  replay.set("strategy.tp_overlap", tp_overlap_name(s.tp_overlap), "test");
  replay.set("strategy.dp_overlap", s.dp_overlap ? "true" : "false", "test");
  replay.set("strategy.zero", std::to_string(s.zero), "test");
  replay.set("strategy.recompute", recompute_name(s.recompute), "test");
  replay.set("strategy.sequence_parallel", s.sequence_parallel ? "true" : "false", "test");
  const PointResult replayed = evaluator.evaluate(replay);
  ASSERT_EQ(replayed.status, PointStatus::Evaluated) << replayed.message;
  EXPECT_NEAR(replayed.iteration_time_s, best.iteration_time_s, 1e-9 * best.iteration_time_s);
}

// 8 servers x 4 GPUs on a 25 Gbps switch, with servers s and s+4 bridged at 800 Gbps (a TP-8 ring
// through two servers moves 7/4 of a hierarchical AllReduce's bytes over the bridge): rank order
// puts an 8-GPU tensor-parallel group on servers {2k, 2k+1} (switch only), METIS on a bridged pair.
std::string write_bridged_pairs(const std::string& path) {
  std::ofstream f(path);
  f << "switch 8\n";
  for (int s = 0; s < 8; ++s) f << s << " 8 25Gbps 1us\n8 " << s << " 25Gbps 1us\n";
  for (int s = 0; s < 4; ++s)
    f << s << " " << s + 4 << " 800Gbps 1us\n" << s + 4 << " " << s << " 800Gbps 1us\n";
  return path;
}

// With optimize.placement = metis the strategy search scores every strategy where `simulate`
// would place it. Here that finds TP-8 on bridged server pairs, faster than anything in rank order,
// and the sweep row replays the reported placement exactly.
TEST(OptimizedPoint, StrategySearchWithMetisPlacementIsReplayedWithItsPlacement) {
  const std::string topo = write_bridged_pairs(::testing::TempDir() + "bridged_pairs.topo");
  const std::initializer_list<std::pair<const char*, const char*>> base = {
      {"model.name", "gpt3-1.3b"},
      {"topology.kind", "file"},
      {"topology.file", topo.c_str()},
      {"server.gpus", "4"},
      {"optimize.search", "exhaustive"},
      {"optimize.max_microbatches", "4"},
      {"optimize.tp_across_servers", "true"},  // TP-8 spans two 4-GPU servers
      // One efficiency for every layer keeps this a placement test: with per-operator compute the
      // larger GEMMs of a smaller tp outweigh the bridged links for so small a model.
      {"server.efficiency", "0.5"}};
  const Config rank = testing::make_point_config(base);
  Config metis = rank;
  metis.set("optimize.placement", "metis", "test");
  const opt::OptimizeResult by_rank = run_optimizer(rank, opt::OptimizeTarget::Strategy);
  const opt::OptimizeResult by_metis = run_optimizer(metis, opt::OptimizeTarget::Strategy);
  EXPECT_LT(by_metis.time_s, by_rank.time_s);
  EXPECT_EQ(by_metis.strategy.tp, 8u);
  EXPECT_TRUE(by_rank.placement_method.empty());
  EXPECT_EQ(by_metis.placement_method, "metis");
  // Each TP-8 group of rank order's servers {2k, 2k+1} lands on a bridged pair {s, s+4}.
  ASSERT_EQ(by_metis.position_of_node.size(), 8u);
  for (std::uint32_t k = 0; k < 4; ++k)
    EXPECT_EQ((by_metis.position_of_node[2 * k] + 4) % 8, by_metis.position_of_node[2 * k + 1]) << k;
  EXPECT_EQ(opt::optimize_result_to_json(by_metis)["placement"], by_metis.placement_method);
  Config row_config = metis;
  row_config.set("point.optimize", "strategy", "test");
  testing::RowEvaluator evaluator;
  const PointResult row = evaluator.evaluate(row_config);
  ASSERT_EQ(row.status, PointStatus::Evaluated) << row.message;
  EXPECT_NEAR(row.iteration_time_s, by_metis.time_s, 1e-12 * by_metis.time_s);
}

TEST(OptimizedPoint, UnknownOptimizerIsBadInput) {
  testing::RowEvaluator evaluator;
  EXPECT_THROW(evaluator.evaluate(testing::make_point_config({{"point.optimize", "gradient-descent"}})),
               BadInput);
}

}  // namespace
}  // namespace toposweep
