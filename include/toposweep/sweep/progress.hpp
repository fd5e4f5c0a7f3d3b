#pragma once
// Rank 0's progress lines on stderr (docs/sweep.md): about once per `sweep.progress_interval`
// the points done over the range with the rate and ETA of this run, and a closing summary with
// the time each part of the loop took, summed over ranks.
#include <chrono>
#include <cstdint>
#include <string>

#include "toposweep/sweep/engine.hpp"
#include "toposweep/sweep/scheduler.hpp"
#include "toposweep/util/log.hpp"

namespace toposweep::sweep {

// "42s", "3.5min", "2.1h"; "?" when not finite.
std::string format_eta(double seconds);

class ProgressReporter {
 public:
  // `points`: the range's size; `todo`: the points this run has to do; `before`: the status
  // counts (evaluated, infeasible, failed) of the points done by earlier runs. Only rank 0
  // reports (`active`), and only at LogLevel::Info.
  ProgressReporter(const Logger& log, bool active, double interval_s, std::uint64_t points,
                   std::uint64_t todo, const std::uint64_t before[3]);

  // After a chunk: a progress line when the interval has passed since the last one. Reads the
  // totals from the scheduler (no other rank takes part).
  void after_chunk(ChunkScheduler& scheduler);
  // At the end of a run: points, ranks, wall time since `start` and rate; chunks and the
  // rank-seconds of evaluation, scheduling and journal from `summary`.
  void finished(const SweepSummary& summary, int ranks, std::chrono::steady_clock::time_point start) const;

 private:
  const Logger& log_;
  bool active_;
  double interval_s_;
  std::uint64_t points_, todo_, before_[3];
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace toposweep::sweep
