// The parts of the sweep loop on their own: the scheduler's window (on MPI_COMM_SELF; several
// ranks are in tests/mpi), chunk sizing, done ranges, the to-do list, ETA formatting and the rows
// of a frontier. Expected values are worked by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "toposweep/sweep/chunk_runner.hpp"
#include "toposweep/sweep/columns.hpp"
#include "toposweep/sweep/progress.hpp"
#include "toposweep/sweep/scheduler.hpp"
#include "toposweep/sweep/todo.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::sweep {
namespace {

// Both slot stores keep the same counters (slot_store.hpp): every claim test runs on each.
class ChunkSchedulerOn : public ::testing::TestWithParam<SlotStoreKind> {};
INSTANTIATE_TEST_SUITE_P(Stores, ChunkSchedulerOn,
                         ::testing::Values(SlotStoreKind::SharedMemory, SlotStoreKind::OneSided),
                         [](const auto& info) { return spell(info.param); });

TEST_P(ChunkSchedulerOn, HandsOutConsecutiveChunksCountsAndKeepsTheFirstFailure) {
  ChunkScheduler s(MPI_COMM_SELF, 11, GetParam());
  EXPECT_EQ(s.store_kind(), GetParam());
  auto c = s.claim(5);
  EXPECT_EQ(c.first, 0);
  EXPECT_EQ(c.last, 5);
  EXPECT_EQ(c.left, 6);
  EXPECT_FALSE(c.stop || c.error);
  EXPECT_EQ(s.claim(3).first, 5);
  c = s.claim(1);
  EXPECT_EQ(c.first, 8);
  EXPECT_EQ(c.last, 9);
  s.add_done({5, 1, 2});
  s.add_done({3, 0, 1});
  EXPECT_EQ(s.done(), (ChunkCounts{8, 1, 3}));
  EXPECT_EQ(s.first_failed_rank(), -1);
  s.publish_failure(0);
  s.publish_failure(7);  // a later failure does not replace the first
  EXPECT_EQ(s.first_failed_rank(), 0);
  c = s.claim(2);
  EXPECT_TRUE(c.error);
  EXPECT_FALSE(c.stop);
  EXPECT_TRUE(c.empty());  // a failure stops the claims
  s.request_stop();
  EXPECT_TRUE(s.claim(1).stop);
  EXPECT_GT(s.seconds(), 0.0);
}

TEST_P(ChunkSchedulerOn, ClaimsAreCutAtTheEndAndThenEmpty) {
  ChunkScheduler s(MPI_COMM_SELF, 7, GetParam());
  EXPECT_EQ(s.claim(4).last, 4);
  const auto c = s.claim(10);  // only 3 left
  EXPECT_EQ(c.first, 4);
  EXPECT_EQ(c.last, 7);
  EXPECT_EQ(c.left, 0);
  EXPECT_TRUE(s.claim(1).empty());
  EXPECT_TRUE(ChunkScheduler(MPI_COMM_SELF, 0, GetParam()).claim(1).empty());
}

TEST(ChunkScheduler, AutoTakesSharedMemoryOnOneNodeAndTheNamesRoundTrip) {
  EXPECT_TRUE(all_on_one_node(MPI_COMM_SELF));
  EXPECT_EQ(ChunkScheduler(MPI_COMM_SELF, 3).store_kind(), SlotStoreKind::SharedMemory);
  for (const auto kind : {SlotStoreKind::Auto, SlotStoreKind::SharedMemory, SlotStoreKind::OneSided})
    EXPECT_EQ(parse_slot_store_kind(spell(kind)), kind);
  EXPECT_THROW(parse_slot_store_kind("rma"), BadInput);
}

TEST(ChunkScheduler, BlocksAreEvenAMultipleOfTheRanksAndFitIn32Bits) {
  EXPECT_EQ(ChunkScheduler::block_starts(10, 1), (std::vector<std::int64_t>{0, 10}));
  EXPECT_EQ(ChunkScheduler::block_starts(10, 3), (std::vector<std::int64_t>{0, 4, 7, 10}));
  EXPECT_EQ(ChunkScheduler::block_starts(0, 2), (std::vector<std::int64_t>{0, 0, 0}));
  // 2^33 positions on 2 ranks: blocks of 2^32 would not fit 32-bit offsets (at most 2^32 - 1), so
  // two rounds of two blocks of 2^31.
  const std::int64_t big = std::int64_t{1} << 33;
  EXPECT_EQ(ChunkScheduler::block_starts(big, 2),
            (std::vector<std::int64_t>{0, big / 4, big / 2, 3 * big / 4, big}));
  EXPECT_EQ(ChunkScheduler::block_starts(big - 2, 2).size(), 3u);  // 2^32 - 1 each: one round
}

TEST(ChunkSizer, MeasuresWithOnePointThenAimsAtTheChunkTimeAndShrinksNearTheEnd) {
  ChunkSizer z(0.5, 4096, 2);
  EXPECT_EQ(z.next(), 1);
  z.measured(0.01, 1, 1000);  // 10 ms a point: 50 points make 0.5 s; 1000 left / (8 * 2 sharers) = 62
  EXPECT_EQ(z.next(), 50);
  z.measured(0.5, 50, 200);  // still 10 ms a point, but only 200 / 16 = 12.5 left per share
  EXPECT_EQ(z.next(), 12);
  z.measured(1.0, 25, 10000);  // 40 ms a point, averaged with 10 ms: 25 ms -> 20 points
  EXPECT_EQ(z.next(), 20);
  ChunkSizer cheap(0.5, 4096, 2);
  cheap.measured(1e-12, 1, 1000000000);  // ~free points: capped at max_chunk_points
  EXPECT_EQ(cheap.next(), 4096);
  cheap.measured(1e-12, 1, 0);  // nothing left: still at least one point
  EXPECT_EQ(cheap.next(), 1);
  ChunkSizer one(0.5, 4096, 1);  // one rank: a block has one sharer
  one.measured(0.01, 1, 1000);   // 1000 / 8 = 125 > 50
  EXPECT_EQ(one.next(), 50);
  one.measured(0.01, 1, 200);  // 200 / 8 = 25
  EXPECT_EQ(one.next(), 25);
}

TEST(ChunkSizer, AChunkHoldsTenTimesItsOwnFixedCost) {
  ChunkSizer f(0.5, 4096, 2);
  // 0.1 ms a point and a 0.4 ms commit: the guided share would be 100 / 16 = 6 points (0.6 ms),
  // but a chunk keeps at least 10 x 0.4 ms of work: 40 points.
  f.measured(0.001, 10, 100, 0.0004);
  EXPECT_EQ(f.next(), 40);
  f.measured(0.001, 10, 100000, 0.0004);  // far from the end: the chunk time decides (5,000 -> 4,096)
  EXPECT_EQ(f.next(), 4096);
}

TEST(RangeAccumulator, ConsecutiveIndicesMakeOneRangeWithTheirCounts) {
  RangeAccumulator a;
  a.add(4, PointStatus::Evaluated);
  a.add(5, PointStatus::Failed);
  a.add(6, PointStatus::Infeasible);
  a.add(9, PointStatus::Evaluated);
  EXPECT_EQ(a.take(), (std::vector<DoneRange>{{4, 7, 1, 1, 1}, {9, 10, 1, 0, 0}}));
  EXPECT_TRUE(a.take().empty());
}

TEST(TodoList, ThePointsOutsideTheDoneSetInOrder) {
  JournalContents j;
  j.ranges = {{12, 15, 2, 1, 0}};
  for (std::uint64_t i : {10, 13, 20, 99}) {  // 13 is inside the range; 99 outside [10, 25)
    PointRecord r;
    r.index = i;
    r.result.status = PointStatus::Evaluated;
    j.records.push_back(r);
  }
  const DoneSet d = done_set(j, 10, 25);
  EXPECT_EQ(d.points, 5u);  // the range's 3 and records 10 and 20
  EXPECT_EQ(d.counts[0], 4u);
  const TodoList t = todo_from(d, 10, 25);
  EXPECT_EQ(t.flat, (std::vector<std::uint64_t>{11, 12, 15, 20, 21, 25}));
  EXPECT_EQ(t.total, 10u);
  std::vector<std::uint64_t> all;
  for (std::uint64_t p = 0; p < t.total; ++p) all.push_back(t.index_at(p));
  EXPECT_EQ(all, (std::vector<std::uint64_t>{11, 15, 16, 17, 18, 19, 21, 22, 23, 24}));
}

TEST(FormatEta, SecondsMinutesHours) {
  EXPECT_EQ(format_eta(42.4), "42s");
  EXPECT_EQ(format_eta(210), "3.5min");
  EXPECT_EQ(format_eta(7560), "2.1h");
  EXPECT_EQ(format_eta(NAN), "?");
}

TEST(FrontierRows, TheRowsOfTheIndicesInOrderSkippingAbsentOnes) {
  std::vector<PointRecord> rows(5);
  const std::uint64_t index[] = {2, 3, 7, 8, 40};
  for (std::size_t i = 0; i < 5; ++i) rows[i].index = index[i];
  EXPECT_EQ(frontier_positions(rows, {3, 5, 8, 40, 41}), (std::vector<std::size_t>{1, 3, 4}));
  EXPECT_TRUE(frontier_positions(rows, {}).empty());
  EXPECT_TRUE(frontier_positions({}, {1}).empty());
  const auto picked = frontier_rows(rows, {2, 40});
  ASSERT_EQ(picked.size(), 2u);
  EXPECT_EQ(picked[1].index, 40u);
}

}  // namespace
}  // namespace toposweep::sweep
