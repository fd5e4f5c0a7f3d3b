#include "toposweep/sweep/chunk_runner.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "toposweep/sweep/columns.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::sweep {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Objective values of an evaluated point, oriented for minimisation.
void objective_values(const Space& space, const PointRecord& r,
                      const std::vector<frontier::Objective>& objectives, std::vector<PointRecord>& one,
                      std::vector<double>& out) {
  one.assign(1, r);
  out.clear();
  for (const auto& o : objectives) {
    const double v = field_column(space, one, o.field)[0];
    out.push_back(o.maximize ? -v : v);
  }
}

}  // namespace

void RangeAccumulator::add(std::uint64_t index, PointStatus status) {
  if (!open_ || index != cur_.end) {
    flush();
    cur_ = DoneRange{index, index, 0, 0, 0};
    open_ = true;
  }
  ++cur_.end;
  if (status == PointStatus::Evaluated) ++cur_.evaluated;
  if (status == PointStatus::Infeasible) ++cur_.infeasible;
  if (status == PointStatus::Failed) ++cur_.failed;
}

void RangeAccumulator::flush() {
  if (open_ && cur_.end > cur_.begin) ranges_.push_back(cur_);
  open_ = false;
}

std::vector<DoneRange> RangeAccumulator::take() {
  flush();
  return std::exchange(ranges_, {});
}

ChunkRunner::ChunkRunner(const Space& space, const SweepOptions& options, const Evaluator& evaluate,
                         const std::string& journal_dir, std::uint32_t run, int rank,
                         std::uint64_t fail_in_chunk, ChunkStats& stats)
    : space_(space),
      options_(options),
      evaluate_(evaluate),
      journal_(journal_dir, run, rank),
      fail_in_chunk_(fail_in_chunk),
      stats_(stats),
      scratch_(space.base()),
      groups_(space, options.frontier_by),
      front_(groups_.size(), frontier::StreamingFrontier(options.objectives.size())),
      last_commit_(Clock::now()) {}

ChunkRunner::Outcome ChunkRunner::run(const TodoList& todo, std::int64_t first, std::int64_t last,
                                      const std::function<bool()>& stop_requested) {
  const bool keep_frontier = options_.keep == Keep::Frontier;
  Outcome out;
  const auto start = Clock::now();
  std::int64_t n = 0;
  for (std::int64_t pos = first; pos < last; ++pos) {
    const PointRecord r =
        evaluate_point(space_, todo.index_at(static_cast<std::uint64_t>(pos)), evaluate_, scratch_);
    if (!keep_frontier) {
      journal_.add(r);
    } else {
      done_ranges_.add(r.index, r.result.status);
      if (r.result.status == PointStatus::Evaluated) {
        objective_values(space_, r, options_.objectives, one_row_, values_);
        if (front_[groups_.of(r.index)].offer(r.index, values_)) joined_.push_back(r);
      }
    }
    if (stats_.chunks + 1 == fail_in_chunk_)
      throw RuntimeFailure("injected fault (TOPOSWEEP_TEST_FAIL) in chunk " + std::to_string(fail_in_chunk_));
    ++out.counts[0];
    if (r.result.status == PointStatus::Infeasible) ++out.counts[1];
    if (r.result.status == PointStatus::Failed) ++out.counts[2];
    ++n;
    if (stop_requested()) {
      out.stopped = true;  // drop the rest of the chunk; it is redone on resume
      break;
    }
  }
  stats_.evaluate_seconds += seconds_since(start);
  stats_.points += static_cast<std::uint64_t>(n);
  ++stats_.chunks;
  pending_ = pending_ || n > 0;
  if (seconds_since(last_commit_) >= options_.chunk_seconds) commit();
  return out;
}

void ChunkRunner::commit() {
  if (!pending_) return;
  const auto journal_start = Clock::now();
  if (options_.keep == Keep::Frontier) {
    // Rows first, ranges after: a torn tail can lose a range (its points are redone) but a range
    // that survived always has its frontier rows before it in the same file.
    journal_frontier_rows();
    for (const auto& d : done_ranges_.take()) journal_.add(d);
  }
  journal_.commit();
  stats_.journal_seconds += seconds_since(journal_start);
  pending_ = false;
  last_commit_ = Clock::now();
}

void ChunkRunner::journal_frontier_rows() {
  if (joined_.empty()) return;
  // Of the rows that joined a frontier in this chunk, those still on it.
  std::vector<std::uint64_t> on;
  for (const auto& f : front_) on.insert(on.end(), f.ids().begin(), f.ids().end());
  std::sort(on.begin(), on.end());
  for (const auto& r : joined_)
    if (std::binary_search(on.begin(), on.end(), r.index)) journal_.add(r);
  joined_.clear();
}

void ChunkSizer::measured(double seconds, std::int64_t points, std::int64_t remaining, double overhead) {
  const double per = seconds / static_cast<double>(std::max<std::int64_t>(points, 1));
  sec_per_point_ = sec_per_point_ < 0 ? per : 0.5 * sec_per_point_ + 0.5 * per;
  overhead_ = overhead_ < 0 ? overhead : 0.5 * overhead_ + 0.5 * overhead;
  const double spp = std::max(sec_per_point_, 1e-9);
  double want = chunk_seconds_ / spp;
  want = std::min(want, static_cast<double>(remaining) / (kGuidedShare * std::min(ranks_, 2)));
  want = std::max(want, kOverheadShare * overhead_ / spp);
  next_ = static_cast<std::int64_t>(std::clamp(want, 1.0, static_cast<double>(max_points_)));
}

}  // namespace toposweep::sweep
