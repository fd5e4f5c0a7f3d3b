#include "toposweep/sweep/progress.hpp"

#include <cmath>
#include <cstdio>

namespace toposweep::sweep {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

std::string format_eta(double s) {
  char buf[32];
  if (!std::isfinite(s)) return "?";
  if (s < 120)
    std::snprintf(buf, sizeof buf, "%.0fs", s);
  else if (s < 7200)
    std::snprintf(buf, sizeof buf, "%.1fmin", s / 60);
  else
    std::snprintf(buf, sizeof buf, "%.1fh", s / 3600);
  return buf;
}

ProgressReporter::ProgressReporter(const Logger& log, bool active, double interval_s, std::uint64_t points,
                                   std::uint64_t todo, const std::uint64_t before[3])
    : log_(log),
      active_(active && log.enabled(LogLevel::Info)),
      interval_s_(interval_s),
      points_(points),
      todo_(todo),
      before_{before[0], before[1], before[2]},
      start_(Clock::now()),
      last_(start_) {}

void ProgressReporter::after_chunk(ChunkScheduler& scheduler) {
  if (!active_ || seconds_since(last_) < interval_s_) return;
  const ChunkCounts c = scheduler.done();
  const std::uint64_t already = before_[0] + before_[1] + before_[2];
  const double elapsed = seconds_since(start_);
  const double done_run = static_cast<double>(c[0]);
  const double rate = elapsed > 0 ? done_run / elapsed : 0;
  const double left = static_cast<double>(todo_) - done_run;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "sweep: %llu/%llu points (%.1f%%), %.0f points/s, ETA %s, infeasible %llu, failed %llu",
                static_cast<unsigned long long>(already + c[0]), static_cast<unsigned long long>(points_),
                points_ ? 100.0 * static_cast<double>(already + c[0]) / static_cast<double>(points_) : 100.0,
                rate, format_eta(rate > 0 ? left / rate : NAN).c_str(),
                static_cast<unsigned long long>(before_[1] + c[1]),
                static_cast<unsigned long long>(before_[2] + c[2]));
  log_.info(buf);
  last_ = Clock::now();
}

void ProgressReporter::finished(const SweepSummary& s, int ranks, Clock::time_point start) const {
  if (!active_) return;
  const std::uint64_t already = before_[0] + before_[1] + before_[2];
  char buf[200];
  const double el = seconds_since(start);
  std::snprintf(buf, sizeof buf, "sweep: %llu/%llu points evaluated by %d rank(s) in %.2f s (%.0f points/s)",
                static_cast<unsigned long long>(already + s.done_this_run),
                static_cast<unsigned long long>(points_), ranks, el,
                el > 0 ? static_cast<double>(s.done_this_run) / el : 0.0);
  log_.info(buf);
  std::snprintf(
      buf, sizeof buf,
      "sweep: %llu chunks; rank-seconds: evaluating %.3f, scheduling %.4f (%.2f us/chunk, %s), journal %.3f",
      static_cast<unsigned long long>(s.chunks_this_run), s.evaluate_seconds, s.schedule_seconds,
      s.chunks_this_run ? 1e6 * s.schedule_seconds / static_cast<double>(s.chunks_this_run) : 0.0,
      spell(s.scheduler).c_str(), s.journal_seconds);
  log_.info(buf);
}

}  // namespace toposweep::sweep
