// check_point_config: malformed or missing input is BadInput; a design that cannot exist is left
// to the evaluation (a sweep counts it infeasible).
#include "toposweep/point/check.hpp"

#include <gtest/gtest.h>

#include "point_config.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep {
namespace {

TEST(CheckPointConfig, AValidPointPasses) {
  EXPECT_NO_THROW(check_point_config(testing::make_point_config(
      {{"topology.kind", "topoopt"}, {"topology.servers", "8"}, {"model.name", "bert-large"}})));
}

TEST(CheckPointConfig, ImpossibleDesignsAreNotInputErrors) {
  // degree >= servers, tp not dividing the heads, dp x tp x pp not the GPU count.
  EXPECT_NO_THROW(check_point_config(testing::make_point_config(
      {{"topology.kind", "expander"}, {"topology.servers", "4"}, {"topology.degree", "4"}})));
  EXPECT_NO_THROW(check_point_config(testing::make_point_config({{"strategy.tp", "3"}})));
  EXPECT_NO_THROW(check_point_config(testing::make_point_config({{"strategy.dp", "3"}})));
  // dims that hold another NPU count than servers x gpus.
  EXPECT_NO_THROW(check_point_config(testing::make_point_config(
      {{"topology.kind", "multidim"}, {"topology.dims", "ring:4,fc:4"}, {"topology.servers", "8"}})));
}

TEST(CheckPointConfig, MissingOrMalformedInputIsBadInput) {
  EXPECT_THROW(check_point_config(testing::make_point_config({{"topology.kind", "multidim"}})), BadInput);
  EXPECT_THROW(check_point_config(testing::make_point_config({{"topology.kind", "file"}})), BadInput);
  // Read only because an optimizer runs: the MCMC budget must be at least 1.
  EXPECT_THROW(
      check_point_config(testing::make_point_config(
          {{"point.optimize", "strategy"}, {"optimize.search", "mcmc"}, {"optimize.mcmc_budget", "0"}})),
      BadInput);
  EXPECT_NO_THROW(check_point_config(testing::make_point_config({{"optimize.mcmc_budget", "0"}})));
}

TEST(CheckPointConfig, ReadsWhatTheEvaluationReads) {
  Config c = testing::make_point_config({{"topology.kind", "switch"}, {"topology.dims", "ring:4"}});
  auto reads = std::make_shared<std::set<std::string>>();
  c.record_reads(reads);
  check_point_config(c);
  for (const char* k : {"topology.kind", "topology.servers", "topology.link_bandwidth", "model.name",
                        "server.device", "strategy.tp", "simulate.network_model", "collective.algorithm"})
    EXPECT_TRUE(reads->count(k)) << k;
  EXPECT_FALSE(reads->count("topology.dims"));  // a switch has no dimensions
  EXPECT_FALSE(reads->count("optimize.mcmc_budget"));
}

}  // namespace
}  // namespace toposweep
