#include "toposweep/opt/design_point.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_config.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::opt {
namespace {

// The optimizer on a configuration's specs (what the point module does for a DesignPoint).
OptimizeResult optimize_config(const Config& c, OptimizeTarget t,
                               const std::optional<SingleCollective>& single = std::nullopt) {
  return optimize_design_point(optimize_problem_from_config(c, t), t, single);
}

TEST(DesignPoint, SingleAllReduceBandwidthMatchesTheClosedForm) {
  const Config c = testing::make_config({{"topology.kind", "multidim"},
                                         {"topology.dims", "ring:4,fc:8,switch:4"},
                                         {"topology.dim_bandwidth", "100GB/s,100GB/s,100GB/s"}});
  const auto r =
      optimize_config(c, OptimizeTarget::Bandwidth, SingleCollective{CollectiveOp::AllReduce, 1e9});
  // Budget = sum of the configured bandwidths = 300 GB/s; sizes 1.5e9, 4.375e8, 4.6875e7.
  const double total = 1.5e9 + 4.375e8 + 4.6875e7;
  EXPECT_NEAR(r.time_s, total / 300e9, 1e-9 * r.time_s);
  EXPECT_NEAR(r.baseline_time_s, 1.5e9 / 100e9, 1e-15);
  const auto j = optimize_result_to_json(r);
  EXPECT_TRUE(j.contains("time_s"));
  EXPECT_TRUE(j.contains("baseline_time_s"));
  ASSERT_EQ(j["dim_bandwidth_Bps"].size(), 3u);
  EXPECT_NEAR(j["dim_bandwidth_Bps"][0].get<double>(), 300e9 * 1.5e9 / total, 300e9 * 1e-6);
}

TEST(DesignPoint, TopologyTargetRecordsStridesAndKeepsTheStrategy) {
  const Config c = testing::make_config({{"model.name", "bert-large"},
                                         {"topology.kind", "topoopt"},
                                         {"topology.servers", "8"},
                                         {"topology.degree", "4"},
                                         {"server.gpus", "2"},
                                         {"strategy.tp", "2"}});
  const auto r = optimize_config(c, OptimizeTarget::Topology);
  EXPECT_EQ(r.strategy.tp, 2u);
  EXPECT_FALSE(r.strides.empty());
  const auto j = optimize_result_to_json(r);
  for (const char* key : {"iteration_time_s", "baseline_iteration_time_s", "strides", "mp_links", "strategy"})
    EXPECT_TRUE(j.contains(key)) << key;
}

// Exhaustive search over a larger set of ZeRO stages can only find an equal or faster strategy,
// and what it returns uses a stage it was allowed.
TEST(DesignPoint, ZeroStagesWidenTheExhaustiveSearch) {
  auto config = [](const char* stages) {
    return testing::make_config({{"model.name", "bert-large"},
                                 {"topology.kind", "switch"},
                                 {"topology.servers", "4"},
                                 {"server.gpus", "4"},
                                 {"optimize.search", "exhaustive"},
                                 {"optimize.max_microbatches", "4"},
                                 {"optimize.zero_stages", stages}});
  };
  const auto none = optimize_config(config("0"), OptimizeTarget::Strategy);
  const auto all = optimize_config(config("0,1,2,3"), OptimizeTarget::Strategy);
  const auto three = optimize_config(config("3"), OptimizeTarget::Strategy);
  EXPECT_EQ(none.strategy.zero, 0u);
  EXPECT_EQ(three.strategy.zero, 3u);
  EXPECT_LE(all.time_s, none.time_s);
  EXPECT_LE(all.time_s, three.time_s);
  EXPECT_THROW(optimize_config(config("4"), OptimizeTarget::Strategy), BadInput);
}

TEST(DesignPoint, BadInputs) {
  Config c = testing::make_config(
      {{"model.name", "bert-large"}, {"optimize.search", "mcmc"}, {"optimize.mcmc_budget", "0"}});
  EXPECT_THROW(optimize_config(c, OptimizeTarget::Strategy), BadInput);
  c = testing::make_config({{"topology.kind", "switch"}});
  EXPECT_THROW(optimize_config(c, OptimizeTarget::Bandwidth), BadInput);  // not multidim
  c = testing::make_config({{"topology.kind", "multidim"},
                            {"topology.dims", "ring:4,fc:8"},
                            {"topology.dim_bandwidth", "100GB/s,100GB/s"},
                            {"optimize.dim_bandwidth_min", "50GB/s,50GB/s"},
                            {"optimize.cost_budget", "10"}});
  EXPECT_THROW(optimize_config(c, OptimizeTarget::Bandwidth, SingleCollective{CollectiveOp::AllReduce, 1e9}),
               BadInput);  // cost budget below the cheapest network the bounds allow
  EXPECT_THROW(parse_optimize_target("fastest", "--target"), BadInput);
}

}  // namespace
}  // namespace toposweep::opt
