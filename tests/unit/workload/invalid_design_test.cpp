// Strategies that cannot exist for the workload are InvalidDesign (sweeps count them infeasible),
// also when the check runs on a configuration and the error is re-pointed at the user's key;
// input errors stay plain BadInput.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "toposweep/util/config.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/workload/config_keys.hpp"
#include "toposweep/workload/strategy.hpp"
#include "toposweep/workload/workload.hpp"
#include "workload_test_helpers.hpp"

namespace toposweep {
namespace {

// 0: valid, 1: InvalidDesign, 2: other BadInput.
int kind_of(const std::vector<std::string>& sets, std::uint32_t gpus) {
  try {
    // Malformed values (no such ZeRO stage) are rejected as the configuration is read.
    const Config c = test::workload_config(sets);
    strategy_from_config(c, workload_from_config(c, gpus), gpus);
  } catch (const InvalidDesign& e) {
    // Re-pointed at where the user set the key, e.g. "key strategy.tp at --set".
    EXPECT_EQ(e.where().rfind("key strategy.", 0), 0u) << e.where();
    EXPECT_NE(e.where().find(" at --set"), std::string::npos) << e.where();
    return 1;
  } catch (const BadInput&) {
    return 2;
  }
  return 0;
}

TEST(InvalidDesign, StrategyMismatchesAreImpossibleDesigns) {
  // bert-large has 16 heads: tp = 3 divides 24 GPUs but not the heads.
  EXPECT_EQ(kind_of({"model.name=bert-large", "strategy.tp=3"}, 24), 1);
  // 8 GPUs x 1 sample: a batch of 8 per replica does not split into 3 microbatches.
  EXPECT_EQ(kind_of({"model.name=bert-large", "model.batch_per_gpu=1", "strategy.microbatches=3"}, 8), 1);
  EXPECT_EQ(kind_of({"model.name=bert-large", "strategy.dp=3"}, 8), 1);    // dp x tp x pp is not 8
  EXPECT_EQ(kind_of({"model.name=bert-large", "strategy.zero=4"}, 8), 2);  // no such ZeRO stage
  EXPECT_EQ(kind_of({"model.name=bert-large", "strategy.tp=2"}, 8), 0);
}

}  // namespace
}  // namespace toposweep
