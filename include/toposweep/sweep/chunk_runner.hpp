#pragma once
// One rank's share of a sweep: evaluates the chunks the scheduler hands it and journals each one
// durably before claiming the next. With Keep::All the journal gets every point's record; with
// Keep::Frontier it gets the chunk's done index ranges (with status counts) and the rows that are
// on the rank's streaming frontier (one per frontier group) when the chunk commits, never the
// dominated rest.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "toposweep/frontier/streaming.hpp"
#include "toposweep/sweep/engine.hpp"
#include "toposweep/sweep/frontier_groups.hpp"
#include "toposweep/sweep/journal.hpp"
#include "toposweep/sweep/scheduler.hpp"
#include "toposweep/sweep/todo.hpp"

namespace toposweep::sweep {

// What a rank's chunks added up to (this run).
struct ChunkStats {
  std::uint64_t points = 0, chunks = 0;  // committed
  double evaluate_seconds = 0, journal_seconds = 0;
};

// Collects the done ranges of a chunk: consecutive indices form one range with its counts.
class RangeAccumulator {
 public:
  void add(std::uint64_t index, PointStatus status);
  std::vector<DoneRange> take();

 private:
  void flush();
  DoneRange cur_;
  bool open_ = false;
  std::vector<DoneRange> ranges_;
};

class ChunkRunner {
 public:
  // Opens this rank's journal part for `run` in `journal_dir`. `fail_in_chunk` (1-based, 0 =
  // never) is the TOPOSWEEP_TEST_FAIL hook: that chunk throws after its first point. Keeps
  // references to everything it is given.
  ChunkRunner(const Space& space, const SweepOptions& options, const Evaluator& evaluate,
              const std::string& journal_dir, std::uint32_t run, int rank, std::uint64_t fail_in_chunk,
              ChunkStats& stats);

  struct Outcome {
    ChunkCounts counts = {0, 0, 0};  // points evaluated in the chunk, infeasible, failed
    bool stopped = false;            // stop_requested() turned true: the rest is redone on resume
  };
  // Evaluates positions [first, last) of `todo`, polling `stop_requested` after every point, and
  // commits the journal after the first chunk and then once `sweep.chunk_seconds` have passed
  // since the last commit (an fdatasync costs ~0.4 ms, a claim ~10 us, so chunks can stay small
  // near the end without paying a commit each; a kill loses at most that much work per rank).
  Outcome run(const TodoList& todo, std::int64_t first, std::int64_t last,
              const std::function<bool()>& stop_requested);
  // Commits what is not yet committed (the loop's end, a stop).
  void commit();

 private:
  void journal_frontier_rows();

  const Space& space_;
  const SweepOptions& options_;
  const Evaluator& evaluate_;
  JournalWriter journal_;
  std::uint64_t fail_in_chunk_;
  ChunkStats& stats_;
  Config scratch_;  // each point is applied in place: no per-point copy of the base
  // Keep::Frontier: one streaming frontier per group of sweep.frontier_by.
  PointGroups groups_;
  std::vector<frontier::StreamingFrontier> front_;
  std::vector<PointRecord> joined_, one_row_;  // rows that joined a frontier in this chunk
  std::vector<double> values_;
  RangeAccumulator done_ranges_;
  bool pending_ = false;  // evaluated points not yet committed
  // The last commit, or the start: the first commit comes sweep.chunk_seconds into the run (a
  // commit after the first chunk cost a short sweep's rank an fdatasync, ~1 ms, for nothing).
  std::chrono::steady_clock::time_point last_commit_;
};

// Sizes chunks to `sweep.chunk_seconds` of work from the measured cost per point, at most
// `max_chunk_points`, and shrinks them near the end (guided scheduling) so the ranks finish
// together, but not below kOverheadShare times a chunk's own fixed cost (its claim and done count;
// the journal commits on its own clock, ChunkRunner::run), so that cheap points (designs that do
// not fit cost microseconds) are not spread over needlessly many claims. The first chunk is one
// point, to measure.
class ChunkSizer {
 public:
  ChunkSizer(double chunk_seconds, std::uint64_t max_chunk_points, int ranks)
      : chunk_seconds_(chunk_seconds), max_points_(max_chunk_points), ranks_(ranks) {}
  std::int64_t next() const { return next_; }
  // A chunk of `points` took `seconds` of evaluation plus `overhead` seconds of fixed cost (claim,
  // done count); `remaining` positions are left unclaimed in its block.
  void measured(double seconds, std::int64_t points, std::int64_t remaining, double overhead = 0);

 private:
  // A chunk takes at most 1 / (kGuidedShare x sharers) of what is left in its block, where a block
  // has at most two sharers at a time (its owner at the front, a rank that finished its own at
  // the back; one when there is one rank). Points' costs are far from uniform (a plan's first
  // point on a network times its collectives and plays its graph; the rest are lookups; a design
  // that does not fit costs microseconds), so one rank's chunk can hold most of the remaining
  // work; an eighth of a share bounds that imbalance at the price of a few more chunks, and the
  // kOverheadShare floor keeps those chunks from costing more in claims than in points.
  static constexpr double kGuidedShare = 8.0;
  static constexpr double kOverheadShare = 10.0;
  double chunk_seconds_;
  std::uint64_t max_points_;
  int ranks_;
  double sec_per_point_ = -1, overhead_ = -1;
  std::int64_t next_ = 1;
};

}  // namespace toposweep::sweep
