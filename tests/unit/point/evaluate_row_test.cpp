// evaluate_row (the sweep's evaluator): the row evaluate_config gives, and for a design that
// cannot exist the Infeasible row a sweep made of evaluate_config's InvalidDesign, whether the
// plan cache learns the failure at that point or already holds it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "point_config.hpp"
#include "toposweep/point/evaluate.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep {
namespace {

// What sweep::evaluate_point records for an evaluator that throws (the path before evaluate_row).
PointResult row_through_exception(const Config& c, PointCache& cache) {
  try {
    return evaluate_config(c, cache, Detail::Row).row;
  } catch (const InvalidDesign& e) {
    return invalid_design_result(e.what(), e.where());
  }
}

void expect_same_row(const PointResult& a, const PointResult& b) {
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.message, b.message);
  for (const ResultField& f : kResultFields) {
    const double x = f.as_double(a), y = f.as_double(b);
    EXPECT_EQ(std::memcmp(&x, &y, sizeof x), 0) << f.name << ": " << x << " vs " << y;
  }
}

Config point(const char* kind, const char* microbatches) {
  Config c = testing::make_point_config({{"topology.kind", kind},
                                         {"topology.servers", "2"},
                                         {"server.gpus", "8"},
                                         {"model.name", "gpt3-175b"},
                                         {"model.batch_per_gpu", "1"},
                                         {"strategy.tp", "8"},
                                         {"strategy.microbatches", microbatches}});
  c.set("strategy.microbatches", microbatches, "space.ini:7");
  return c;
}

TEST(EvaluateRow, EqualsTheRowsOfTheThrowingPath) {
  // 3 microbatches do not divide a replica's batch: the plan fails for every network (the first
  // point plans and fails, the others find the failure cached); 1 and 2 are played or too big.
  PointCache rows, thrown;
  int invalid = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (const char* microbatches : {"3", "1", "2"})
      for (const char* kind : {"switch", "fattree"}) {
        SCOPED_TRACE(std::string(kind) + " microbatches " + microbatches);
        const Config c = point(kind, microbatches);
        const PointResult row = evaluate_row(c, rows);
        expect_same_row(row, row_through_exception(c, thrown));
        if (row.status == PointStatus::Infeasible && row.message.find("microbatches") != std::string::npos) {
          ++invalid;
          // Hand-checked: the message names the key at the line that set it.
          EXPECT_NE(row.message.find("(key strategy.microbatches at space.ini:7)"), std::string::npos)
              << row.message;
          EXPECT_TRUE(std::isnan(row.iteration_time_s));
        }
      }
  EXPECT_EQ(invalid, 4);
  // evaluate_config still throws for it, from the cache as well.
  EXPECT_THROW(evaluate_config(point("switch", "3"), rows, Detail::Row), InvalidDesign);
}

}  // namespace
}  // namespace toposweep
