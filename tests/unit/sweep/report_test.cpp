#include "toposweep/sweep/report.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace toposweep::sweep {
namespace {

TEST(SampleIndices, EvenlySpreadIncludingBothEnds) {
  EXPECT_EQ(sample_indices(101, 5), (std::vector<std::uint64_t>{0, 25, 50, 75, 100}));
  EXPECT_EQ(sample_indices(3, 10), (std::vector<std::uint64_t>{0, 1, 2}));
  EXPECT_EQ(sample_indices(1000, 1), (std::vector<std::uint64_t>{0}));
  EXPECT_TRUE(sample_indices(1000, 0).empty());
  // Near 2^64: no overflow in the spacing.
  const auto big = sample_indices(UINT64_MAX, 3);
  EXPECT_EQ(big, (std::vector<std::uint64_t>{0, (UINT64_MAX - 1) / 2, UINT64_MAX - 1}));
}

TEST(PointsTable, CsvQuotesValuesWithCommasAndShowsAbsentAxes) {
  Config c;
  load_ini_text(c, "[space.a]\ntopology.strides = 1,3 | 1,5\n[space.b]\ntopology.degree = 4\n", "r.ini");
  const KeyRegistry reg({{"topology.strides", "", ""}, {"topology.degree", "", ""}, {"space.*", "", ""}});
  const Space space = parse_space(c, reg);
  std::vector<PointRecord> rows(3);
  for (std::uint64_t i = 0; i < 3; ++i) {
    rows[i].index = i;
    rows[i].result.status = PointStatus::Evaluated;
    rows[i].result.cost_usd = 10.0 * static_cast<double>(i + 1);
  }
  std::ostringstream out;
  print_points_table(out, space, rows, {{"cost_usd", false}}, true);
  EXPECT_EQ(out.str(),
            "index,subspace,topology.degree,topology.strides,cost_usd\n"
            "0,a,-,\"1,3\",10\n"
            "1,a,-,\"1,5\",20\n"
            "2,b,4,-,30\n");
}

}  // namespace
}  // namespace toposweep::sweep
