#include "toposweep/opt/metis_stages.hpp"

#include <gtest/gtest.h>

#include "toposweep/util/error.hpp"

namespace toposweep::opt {
namespace {

std::vector<OperatorEdge> chain(std::uint32_t n, double bytes) {
  std::vector<OperatorEdge> e;
  for (std::uint32_t i = 0; i + 1 < n; ++i) e.push_back({i, i + 1, bytes});
  return e;
}

TEST(MetisStages, BalancesAnUnevenChain) {
  // Loads 1,1,1,1,1,1,3,3 (total 12): rank order (4 + 4 operators) has stage loads 4 and 8;
  // the balanced split {0..5} | {6,7} has 6 and 6 with one cut edge.
  const std::vector<double> load = {1, 1, 1, 1, 1, 1, 3, 3};
  const auto r = metis_pipeline_stages(load, chain(8, 10), 2);
  EXPECT_DOUBLE_EQ(r.rank_order_max_stage_load, 8);
  EXPECT_DOUBLE_EQ(r.rank_order_cut_bytes, 10);
  EXPECT_EQ(r.method, "metis");
  EXPECT_DOUBLE_EQ(r.max_stage_load, 6);
  EXPECT_DOUBLE_EQ(r.cut_bytes, 10);
  for (std::uint32_t v = 0; v < 6; ++v) EXPECT_EQ(r.stage_of_op[v], r.stage_of_op[0]);
  EXPECT_NE(r.stage_of_op[6], r.stage_of_op[0]);
}

TEST(MetisStages, NeverWorseThanRankOrder) {
  // Uniform chain: rank order is optimal (load n/stages, stages-1 cut edges); METIS may tie.
  for (std::uint32_t stages : {2u, 4u}) {
    const auto r = metis_pipeline_stages(std::vector<double>(16, 1.0), chain(16, 5), stages);
    EXPECT_DOUBLE_EQ(r.max_stage_load, 16.0 / stages);
    EXPECT_LE(r.cut_bytes, r.rank_order_cut_bytes);
  }
  EXPECT_THROW(metis_pipeline_stages({1, 1}, {}, 3), BadInput);
}

}  // namespace
}  // namespace toposweep::opt
