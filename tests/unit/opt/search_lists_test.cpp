// The optimize.* value lists read from the knob table: the keys' defaults are the lists the
// search tries, a list keeps the user's order without repeats, and the reader's errors name the
// knob's values.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "test_config.hpp"
#include "toposweep/opt/settings.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::opt {
namespace {

StrategySpace space_of(const std::vector<std::pair<std::string, std::string>>& values) {
  return optimize_settings_from_config(testing::make_config(values), OptimizeTarget::Strategy).space;
}

TEST(SearchLists, DefaultsAreEveryValueOfEachKnob) {
  const StrategySpace s = space_of({});
  EXPECT_EQ(s.values(&StrategyKnobs::zero), (std::vector<std::uint8_t>{0, 1, 2, 3}));
  EXPECT_EQ(s.values(&StrategyKnobs::schedule),
            (std::vector<PipelineSchedule>{PipelineSchedule::OneFOneB, PipelineSchedule::GPipe,
                                           PipelineSchedule::Interleaved}));
  EXPECT_EQ(s.values(&StrategyKnobs::recompute),
            (std::vector<Recompute>{Recompute::None, Recompute::Selective, Recompute::Full}));
  EXPECT_EQ(s.values(&StrategyKnobs::sequence_parallel), (std::vector<bool>{false, true}));
  EXPECT_EQ(s.values(&StrategyKnobs::tp_overlap),
            (std::vector<TpOverlap>{TpOverlap::None, TpOverlap::Backward, TpOverlap::Full}));
  EXPECT_EQ(s.values(&StrategyKnobs::dp_overlap), (std::vector<bool>{true, false}));
  EXPECT_EQ(s.values(&StrategyKnobs::batch_split),
            (std::vector<BatchSplit>{BatchSplit::Even, BatchSplit::Proportional}));
  EXPECT_EQ(s.values(&StrategyKnobs::stage_split),
            (std::vector<StageSplit>{StageSplit::Even, StageSplit::Speed}));
  EXPECT_EQ(s.values(&StrategyKnobs::compression),
            (std::vector<Compression>{Compression::None, Compression::Sfb}));
}

TEST(SearchLists, UserOrderWithoutRepeats) {
  const StrategySpace s = space_of({{"optimize.zero_stages", "3,1,3"},
                                    {"optimize.recompute", "full,none,full"},
                                    {"optimize.dp_overlap", "false,true,false"},
                                    {"optimize.schedules", "interleaved"}});
  EXPECT_EQ(s.values(&StrategyKnobs::zero), (std::vector<std::uint8_t>{3, 1}));
  EXPECT_EQ(s.values(&StrategyKnobs::recompute), (std::vector<Recompute>{Recompute::Full, Recompute::None}));
  EXPECT_EQ(s.values(&StrategyKnobs::dp_overlap), (std::vector<bool>{false, true}));
  EXPECT_EQ(s.values(&StrategyKnobs::schedule),
            (std::vector<PipelineSchedule>{PipelineSchedule::Interleaved}));
}

// The reader's own error (the keys' checks skipped, as a Config built in code may).
std::string read_error(const std::string& key, const std::string& value) {
  Config c = testing::make_config({});
  c.set(key, value, "test");
  try {
    optimize_settings_from_config(c, OptimizeTarget::Strategy);
  } catch (const BadInput& e) {
    return e.what();
  }
  return "no error";
}

TEST(SearchLists, ErrorsListTheKnobsValues) {
  EXPECT_EQ(read_error("optimize.zero_stages", "0,4"), "'4' is not one of 0, 1, 2, 3");
  EXPECT_EQ(read_error("optimize.zero_stages", "01"), "'01' is not one of 0, 1, 2, 3");
  EXPECT_EQ(read_error("optimize.sequence_parallel", "maybe"), "'maybe' is not one of true, false");
  EXPECT_EQ(read_error("optimize.schedules", "zigzag"), "'zigzag' is not one of 1f1b, gpipe, interleaved");
  EXPECT_EQ(read_error("optimize.compressions", "zip"), "'zip' is not one of none, sfb");
  EXPECT_EQ(read_error("optimize.tp_overlap", ""), "name at least one of none, backward, full");
}

}  // namespace
}  // namespace toposweep::opt
