#include "toposweep/sweep/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <utility>

#include "toposweep/frontier/streaming.hpp"
#include "toposweep/sweep/columns.hpp"
#include "toposweep/sweep/results_file.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::sweep {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Slots of the scheduling window on rank 0. kError holds 1 + the rank that failed first (0: none);
// kStop and kError are adjacent so one fetch per chunk reads both.
enum Slot : int { kNext = 0, kDone = 1, kInfeasible = 2, kFailed = 3, kStop = 4, kError = 5, kSlots = 6 };

void bcast_string(std::string& s, MPI_Comm comm, int root = 0) {
  std::uint64_t n = s.size();
  MPI_Bcast(&n, 1, MPI_UINT64_T, root, comm);
  s.resize(n);
  if (n) MPI_Bcast(s.data(), static_cast<int>(n), MPI_CHAR, root, comm);
}

// Test hook (docs/sweep.md, "Testing hooks"): TOPOSWEEP_TEST_FAIL=RANK:CHUNK makes RANK throw in
// its CHUNK-th chunk (1-based), after that chunk's first point, so that the failure path can be
// exercised end to end under mpirun.
struct InjectedFault {
  int rank = -1;
  std::uint64_t chunk = 0;
};

InjectedFault injected_fault() {
  const char* v = std::getenv("TOPOSWEEP_TEST_FAIL");
  if (!v || !*v) return {};
  InjectedFault f;
  int used = 0;
  unsigned long long chunk = 0;
  if (std::sscanf(v, "%d:%llu%n", &f.rank, &chunk, &used) != 2 || v[used] != '\0' || f.rank < 0 || chunk == 0)
    throw BadInput(std::string("'") + v + "' is not RANK:CHUNK (CHUNK counts from 1)",
                   "environment variable TOPOSWEEP_TEST_FAIL");
  f.chunk = chunk;
  return f;
}

// Run `f` on rank 0 and rethrow its exception, by category, on every rank, so that all ranks
// leave together with the same exit status.
template <class F>
void on_rank0_shared(MPI_Comm comm, F&& f) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int kind = 0;  // 0 ok, 1 BadInput, 2 Interrupted, 3 other
  std::string what, where;
  if (rank == 0) {
    try {
      f();
    } catch (const BadInput& e) {
      kind = 1, what = e.what(), where = e.where();
    } catch (const Interrupted& e) {
      kind = 2, what = e.what();
    } catch (const std::exception& e) {
      kind = 3, what = e.what();
    }
  }
  MPI_Bcast(&kind, 1, MPI_INT, 0, comm);
  if (kind == 0) return;
  bcast_string(what, comm);
  bcast_string(where, comm);
  if (kind == 1) throw BadInput(what, where);
  if (kind == 2) throw Interrupted(what);
  throw RuntimeFailure(what);
}

// The points still to do, as half-open index ranges, and position -> index decoding.
struct TodoList {
  std::vector<std::uint64_t> flat;    // begin0, end0, begin1, end1, ...
  std::vector<std::uint64_t> before;  // points in earlier ranges
  std::uint64_t total = 0;

  void finish() {
    before.clear();
    total = 0;
    for (std::size_t i = 0; i + 1 < flat.size(); i += 2) {
      before.push_back(total);
      total += flat[i + 1] - flat[i];
    }
  }
  std::uint64_t index_at(std::uint64_t pos) const {
    const auto it = std::upper_bound(before.begin(), before.end(), pos);
    const std::size_t r = static_cast<std::size_t>(it - before.begin()) - 1;
    return flat[2 * r] + (pos - before[r]);
  }
};

// What a journal says is done: its done ranges (--keep frontier) plus every point record not
// inside one (--keep all journals every point; a frontier row whose chunk's range record was torn
// off by kill -9 is done too), with the status counts of all of them.
struct DoneSet {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals;  // sorted, disjoint, [begin, end)
  std::uint64_t counts[3] = {0, 0, 0};                             // evaluated, infeasible, failed
  std::uint64_t points = 0;
};

bool inside_a_range(const std::vector<DoneRange>& ranges, std::uint64_t index) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), index,
                             [](std::uint64_t i, const DoneRange& r) { return i < r.begin; });
  return it != ranges.begin() && index < std::prev(it)->end;
}

DoneSet done_set(const JournalContents& j, std::uint64_t begin, std::uint64_t end) {
  DoneSet d;
  for (const auto& r : j.ranges) {
    if (r.begin < begin || r.end > end || r.begin == r.end) continue;
    d.intervals.emplace_back(r.begin, r.end);
    d.counts[0] += r.evaluated, d.counts[1] += r.infeasible, d.counts[2] += r.failed;
  }
  for (const auto& r : j.records) {
    if (r.index < begin || r.index >= end || inside_a_range(j.ranges, r.index)) continue;
    d.intervals.emplace_back(r.index, r.index + 1);
    ++d.counts[static_cast<int>(r.result.status)];
  }
  std::sort(d.intervals.begin(), d.intervals.end());
  d.points = d.counts[0] + d.counts[1] + d.counts[2];
  return d;
}

TodoList todo_from(const DoneSet& done, std::uint64_t begin, std::uint64_t end) {
  TodoList t;
  std::uint64_t cur = begin;
  for (const auto& [b, e] : done.intervals) {
    if (e <= cur) continue;
    if (b > cur) t.flat.insert(t.flat.end(), {cur, b});
    cur = std::max(cur, e);
  }
  if (cur < end) t.flat.insert(t.flat.end(), {cur, end});
  t.finish();
  return t;
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

// Journals the done ranges of a chunk: consecutive indices form one range with its counts.
class RangeAccumulator {
 public:
  void add(std::uint64_t index, PointStatus status) {
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
  void flush() {
    if (open_ && cur_.end > cur_.begin) ranges_.push_back(cur_);
    open_ = false;
  }
  std::vector<DoneRange> take() {
    flush();
    return std::exchange(ranges_, {});
  }

 private:
  DoneRange cur_;
  bool open_ = false;
  std::vector<DoneRange> ranges_;
};

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

// Rank 0's last step: everything is journaled; assemble, check, write, clean up.
void write_output(const Space& space, const SweepOptions& o, const std::string& dir, SweepSummary& summary,
                  const Logger& log) {
  std::uint64_t dropped = 0;
  auto journal = read_journal_contents(dir, &dropped);
  const DoneSet done = done_set(journal, o.begin, o.end);
  auto rows = std::move(journal.records);
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [&](const PointRecord& r) { return r.index < o.begin || r.index >= o.end; }),
             rows.end());
  if (done.points != o.end - o.begin)
    throw RuntimeFailure("the journal " + dir + " holds " + std::to_string(done.points) + " of " +
                         std::to_string(o.end - o.begin) + " points after the run; rerun with --resume");
  summary.evaluated = done.counts[0];
  summary.infeasible = done.counts[1];
  summary.failed = done.counts[2];
  // With --keep frontier the rows are the union of the ranks' per-model frontier rows (some since
  // dominated): the exact frontier of that union is the frontier of the whole range, because a
  // point no point of its model dominates was never dominated on its own rank either.
  const auto front = grouped_frontier_indices(space, rows, o.objectives, PointGroups(space, o.frontier_by));
  if (o.keep == Keep::Frontier) {
    std::vector<PointRecord> on_front;
    for (std::size_t i : frontier_positions(rows, front)) on_front.push_back(std::move(rows[i]));
    rows = std::move(on_front);
  } else if (rows.size() != o.end - o.begin) {
    throw RuntimeFailure("the journal " + dir +
                         " holds only the frontier rows of some points; finish it "
                         "with --keep frontier");
  }
  ResultsMeta meta;
  meta.status_counts = std::array<std::uint64_t, 3>{done.counts[0], done.counts[1], done.counts[2]};
  meta.config_text = o.config_text;
  meta.slice = o.slice;
  meta.begin = o.begin;
  meta.end = o.end;
  meta.keep = o.keep;
  meta.objectives = o.objectives;
  meta.frontier_by = o.frontier_by;
  meta.compression = o.compression;
  const auto t0 = Clock::now();
  write_results_file(o.out_path, space, rows, front, meta);
  log.debug("sweep: wrote " + o.out_path + " in " + std::to_string(seconds_since(t0)) + " s");
  remove_journal(dir);
  summary.frontier_rows = frontier_rows(rows, front);
}

// True when `o.out_path` is a results file of this space, range, keep mode and objectives: a
// resumed job (e.g. a requeued Slurm task) whose sweep had already finished has nothing to do.
bool output_is_complete(const Space& space, const SweepOptions& o) {
  try {
    ResultsReader r(o.out_path);
    char fp[17];
    std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(space.fingerprint()));
    return r.root_string("space_fingerprint") == fp && r.root_u64("slice_begin") == o.begin &&
           r.root_u64("slice_end") == o.end && r.root_string("keep") == spell_keep(o.keep) &&
           r.frontier_objectives() == frontier::spell_objectives(o.objectives) &&
           r.frontier_group_by() == o.frontier_by;
  } catch (const std::exception&) {
    return false;  // not ours or unreadable: redo the sweep and replace it
  }
}

}  // namespace

PointRecord evaluate_point(const Space& space, std::uint64_t index, const Evaluator& evaluate) {
  Config scratch = space.base();
  return evaluate_point(space, index, evaluate, scratch);
}

PointRecord evaluate_point(const Space& space, std::uint64_t index, const Evaluator& evaluate,
                           Config& scratch) {
  PointRecord r;
  r.index = index;
  try {
    space.apply_point(index, scratch);
    r.result = evaluate(scratch);
  } catch (const InvalidDesign& e) {
    // The axes combined into a design that cannot exist (e.g. degree >= servers): infeasible.
    r.result = PointResult{};
    r.result.status = PointStatus::Infeasible;
    r.result.message = std::string(e.what()) + " (" + e.where() + ")";
  } catch (const BadInput& e) {
    r.result = PointResult{};
    r.result.status = PointStatus::Failed;
    r.result.message = std::string("bad input: ") + e.what() + " (" + e.where() + ")";
  } catch (const Interrupted&) {
    throw;
  } catch (const std::exception& e) {
    r.result = PointResult{};
    r.result.status = PointStatus::Failed;
    r.result.message = e.what();
  }
  if (r.result.status == PointStatus::Failed && r.result.message.empty())
    r.result.message = "failed (no message)";
  PointResult& x = r.result;
  if (x.status != PointStatus::Evaluated)
    for (const ResultField& f : kResultFields)
      if (f.nan_unless_evaluated) x.*f.f64 = PointResult::nan;
  return r;
}

SweepSummary run_sweep(const Space& space, const SweepOptions& o, const Evaluator& evaluate, MPI_Comm comm,
                       const Logger& log, const std::function<bool()>& stop_requested) {
  const auto start_time = Clock::now();
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  if (o.end < o.begin || o.end > space.size()) throw RuntimeFailure("sweep range outside the space");
  const InjectedFault fault = injected_fault();  // before anything is written
  SweepSummary summary;
  summary.points = o.end - o.begin;
  const std::string dir = journal_dir_for(o.out_path);

  // 1. Rank 0 checks the journal and works out what is left; everyone learns it.
  TodoList todo;
  std::uint32_t run = 0;
  int already_complete = 0;           // --resume of a sweep whose output was already written
  std::uint64_t prev[3] = {0, 0, 0};  // evaluated, infeasible, failed before this run
  on_rank0_shared(comm, [&] {
    const auto parent = std::filesystem::path(o.out_path).parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent))
      throw BadInput("the output directory " + parent.string() + " does not exist", "--out " + o.out_path);
    const JournalHeader expected{space.fingerprint(), space.size(), o.begin, o.end};
    const auto existing = read_journal_header(dir);
    JournalContents journal;
    if (existing && !o.resume)
      throw BadInput("an unfinished sweep's journal exists at " + dir +
                         ": add --resume to continue it, or remove that directory to start afresh",
                     "--out " + o.out_path);
    if (existing && existing->fields != expected.fields)
      throw BadInput("the journal " + dir + " holds records of other result fields (" + existing->fields +
                         ") than this toposweep writes (" + expected.fields +
                         "): finish it with the toposweep that started it, or remove it to start afresh",
                     "--resume");
    if (existing && *existing != expected)
      throw BadInput("the journal " + dir +
                         " belongs to a different space, base configuration or slice; remove it or use the "
                         "original configuration",
                     "--resume");
    if (!existing && o.resume && std::filesystem::exists(o.out_path) && output_is_complete(space, o)) {
      already_complete = 1;
      return;
    }
    if (!existing) create_journal(dir, expected, space.canonical_text());
    run = next_run_number(dir);
    if (existing) journal = read_journal_contents(dir);
    if (o.keep != Keep::Frontier && !journal.ranges.empty())
      throw BadInput("the journal " + dir +
                         " was written by a --keep frontier sweep (it lacks the other "
                         "points); resume it with --keep frontier",
                     "--keep " + spell_keep(o.keep));
    const DoneSet done = done_set(journal, o.begin, o.end);
    for (int k = 0; k < 3; ++k) prev[k] = done.counts[k];
    todo = todo_from(done, o.begin, o.end);
  });
  MPI_Bcast(&already_complete, 1, MPI_INT, 0, comm);
  if (already_complete) {
    on_rank0_shared(comm, [&] {
      log.info("sweep: " + o.out_path + " is already complete for this space; nothing to do");
      ResultsReader reader(o.out_path);
      summary.evaluated = reader.root_u64("points_evaluated");
      summary.infeasible = reader.root_u64("points_infeasible");
      summary.failed = reader.root_u64("points_failed");
      summary.frontier_rows = frontier_rows(reader.records(), reader.frontier());
    });
    summary.seconds = seconds_since(start_time);
    return summary;
  }
  std::uint64_t nflat = todo.flat.size();
  MPI_Bcast(&nflat, 1, MPI_UINT64_T, 0, comm);
  todo.flat.resize(nflat);
  if (nflat) MPI_Bcast(todo.flat.data(), static_cast<int>(nflat), MPI_UINT64_T, 0, comm);
  todo.finish();
  MPI_Bcast(&run, 1, MPI_UINT32_T, 0, comm);
  MPI_Bcast(prev, 3, MPI_UINT64_T, 0, comm);
  const std::uint64_t already = prev[0] + prev[1] + prev[2];
  if (rank == 0 && already)
    log.info("sweep: resuming: " + std::to_string(already) + " of " + std::to_string(summary.points) +
             " points already done");

  // 2. Self-scheduling through an atomic counter on rank 0.
  std::int64_t* slots = nullptr;
  MPI_Win win;
  MPI_Win_allocate(rank == 0 ? kSlots * sizeof(std::int64_t) : 0, sizeof(std::int64_t), MPI_INFO_NULL, comm,
                   &slots, &win);
  if (rank == 0) std::fill(slots, slots + kSlots, 0);
  MPI_Barrier(comm);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);

  // From here until the collective exit below, an exception on one rank must not skip the
  // collectives the others wait in: it is caught, published in kError (which every rank reads
  // between chunks, so the others stop at their next chunk boundary), and rethrown on every rank
  // after the exit. The journal stays valid: only whole records were committed.
  bool stopped_here = false, failed_here = false;
  std::string failure;  // what failed on this rank
  std::uint64_t local_done = 0, local_chunks = 0;
  double times[3] = {0, 0, 0};  // evaluate, schedule, journal
  try {
    JournalWriter journal(dir, run, rank);
    // --keep frontier: this rank's streaming frontier; the journal gets done ranges and the rows
    // that are on the frontier when their chunk commits, never the dominated rest.
    const bool keep_frontier = o.keep == Keep::Frontier;
    // One streaming frontier per model (per group of sweep.frontier_by).
    const PointGroups groups(space, o.frontier_by);
    std::vector<frontier::StreamingFrontier> local_front(groups.size(),
                                                         frontier::StreamingFrontier(o.objectives.size()));
    std::vector<PointRecord> joined, one_row;  // rows that joined the frontier in this chunk
    std::vector<double> values;
    RangeAccumulator done_ranges;
    Config scratch = space.base();  // each point is applied in place: no per-point copy of the base
    double sec_per_point = -1;
    std::int64_t next_chunk = 1;  // measure first, then size chunks to chunk_seconds
    auto last_progress = Clock::now();
    const auto loop_start = Clock::now();
    auto print_progress = [&](bool final_line) {
      std::int64_t c[3] = {0, 0, 0};
      MPI_Get_accumulate(nullptr, 0, MPI_INT64_T, c, 3, MPI_INT64_T, 0, kDone, 3, MPI_INT64_T, MPI_NO_OP,
                         win);
      MPI_Win_flush(0, win);
      const double el = seconds_since(loop_start);
      const double done_run = static_cast<double>(c[0]);
      const double rate = el > 0 ? done_run / el : 0;
      const double left = static_cast<double>(todo.total) - done_run;
      char buf[256];
      std::snprintf(
          buf, sizeof buf,
          "sweep: %llu/%llu points (%.1f%%), %.0f points/s, ETA %s, infeasible %llu, failed %llu",
          static_cast<unsigned long long>(already + c[0]), static_cast<unsigned long long>(summary.points),
          summary.points ? 100.0 * static_cast<double>(already + c[0]) / static_cast<double>(summary.points)
                         : 100.0,
          rate, final_line ? "0s" : format_eta(rate > 0 ? left / rate : NAN).c_str(),
          static_cast<unsigned long long>(prev[1] + c[1]), static_cast<unsigned long long>(prev[2] + c[2]));
      log.info(buf);
    };
    while (true) {
      if (stop_requested()) stopped_here = true;
      if (stopped_here) {
        const std::int64_t one = 1;
        MPI_Accumulate(&one, 1, MPI_INT64_T, 0, kStop, 1, MPI_INT64_T, MPI_REPLACE, win);
        MPI_Win_flush(0, win);
        break;
      }
      std::int64_t first = 0, stop_or_error[2] = {0, 0};
      auto t_sched = Clock::now();
      MPI_Fetch_and_op(&next_chunk, &first, MPI_INT64_T, 0, kNext, MPI_SUM, win);
      MPI_Get_accumulate(nullptr, 0, MPI_INT64_T, stop_or_error, 2, MPI_INT64_T, 0, kStop, 2, MPI_INT64_T,
                         MPI_NO_OP, win);
      MPI_Win_flush(0, win);
      times[1] += seconds_since(t_sched);
      if (stop_or_error[0] || stop_or_error[1]) break;
      const auto total = static_cast<std::int64_t>(todo.total);
      if (first >= total) break;
      const std::int64_t last = std::min(total, first + next_chunk);
      std::int64_t add[3] = {0, 0, 0};
      const auto chunk_start = Clock::now();
      std::int64_t n = 0;
      for (std::int64_t pos = first; pos < last; ++pos) {
        const PointRecord r =
            evaluate_point(space, todo.index_at(static_cast<std::uint64_t>(pos)), evaluate, scratch);
        if (!keep_frontier) {
          journal.add(r);
        } else {
          done_ranges.add(r.index, r.result.status);
          if (r.result.status == PointStatus::Evaluated) {
            objective_values(space, r, o.objectives, one_row, values);
            if (local_front[groups.of(r.index)].offer(r.index, values)) joined.push_back(r);
          }
        }
        if (rank == fault.rank && local_chunks + 1 == fault.chunk)
          throw RuntimeFailure("injected fault (TOPOSWEEP_TEST_FAIL) in chunk " +
                               std::to_string(fault.chunk));
        ++add[0];
        if (r.result.status == PointStatus::Infeasible) ++add[1];
        if (r.result.status == PointStatus::Failed) ++add[2];
        ++n;
        if (stop_requested()) {
          stopped_here = true;  // drop the rest of the chunk; it is redone on resume
          break;
        }
      }
      times[0] += seconds_since(chunk_start);
      auto t_journal = Clock::now();
      if (keep_frontier) {
        // Rows first, ranges after: a torn tail can lose a range (its points are redone) but a
        // range that survived always has its frontier rows before it in the same file.
        if (!joined.empty()) {
          std::vector<std::uint64_t> on;
          for (const auto& f : local_front) on.insert(on.end(), f.ids().begin(), f.ids().end());
          std::sort(on.begin(), on.end());
          for (const auto& r : joined)
            if (std::binary_search(on.begin(), on.end(), r.index)) journal.add(r);
          joined.clear();
        }
        for (const auto& d : done_ranges.take()) journal.add(d);
      }
      journal.commit();
      times[2] += seconds_since(t_journal);
      local_done += static_cast<std::uint64_t>(n);
      ++local_chunks;
      t_sched = Clock::now();
      MPI_Accumulate(add, 3, MPI_INT64_T, 0, kDone, 3, MPI_INT64_T, MPI_SUM, win);
      MPI_Win_flush(0, win);
      times[1] += seconds_since(t_sched);
      // Size the next chunk from the measured cost; shrink near the end (guided scheduling).
      const double per = seconds_since(chunk_start) / static_cast<double>(std::max<std::int64_t>(n, 1));
      sec_per_point = sec_per_point < 0 ? per : 0.5 * sec_per_point + 0.5 * per;
      double want = o.chunk_seconds / std::max(sec_per_point, 1e-9);
      want = std::clamp(want, 1.0, static_cast<double>(o.max_chunk_points));
      const double remaining = static_cast<double>(total - last);
      want = std::min(want, std::max(1.0, remaining / (2.0 * ranks)));
      next_chunk = static_cast<std::int64_t>(want);
      if (rank == 0 && log.enabled(LogLevel::Info) && seconds_since(last_progress) >= o.progress_interval_s) {
        print_progress(false);
        last_progress = Clock::now();
      }
    }
  } catch (const Interrupted&) {
    stopped_here = true;  // an evaluator that watches the stop flag itself
    const std::int64_t one = 1;
    MPI_Accumulate(&one, 1, MPI_INT64_T, 0, kStop, 1, MPI_INT64_T, MPI_REPLACE, win);
    MPI_Win_flush(0, win);
  } catch (const std::exception& e) {
    failed_here = true;
    failure = e.what();
    if (const auto* b = dynamic_cast<const BadInput*>(&e)) failure += " (" + b->where() + ")";
  } catch (...) {
    failed_here = true;
    failure = "an exception of unknown type";
  }
  if (failed_here) {
    // The first failure wins the slot, so the message names the cause, not a later consequence.
    const std::int64_t mine = rank + 1, none = 0;
    std::int64_t previous = 0;
    MPI_Compare_and_swap(&mine, &none, &previous, MPI_INT64_T, 0, kError, win);
    MPI_Win_flush(0, win);
  }
  // The collective exit: every rank gets here, whatever happened in its loop.
  int flags_local[2] = {stopped_here ? 1 : 0, failed_here ? 1 : 0}, flags_any[2] = {0, 0};
  MPI_Allreduce(flags_local, flags_any, 2, MPI_INT, MPI_MAX, comm);
  const bool stopped_any = flags_any[0] != 0, failed_any = flags_any[1] != 0;
  int failed_rank = -1;
  if (failed_any) {
    // Every failing rank's compare-and-swap was flushed before the reduction above.
    std::int64_t first_failed = 0;
    MPI_Fetch_and_op(nullptr, &first_failed, MPI_INT64_T, 0, kError, MPI_NO_OP, win);
    MPI_Win_flush(0, win);
    failed_rank = static_cast<int>(first_failed) - 1;
    bcast_string(failure, comm, failed_rank);
  }
  std::uint64_t totals[2] = {local_done, local_chunks}, sums[2] = {0, 0};
  MPI_Allreduce(totals, sums, 2, MPI_UINT64_T, MPI_SUM, comm);
  summary.done_this_run = sums[0];
  summary.chunks_this_run = sums[1];
  double time_sums[3] = {0, 0, 0};
  MPI_Allreduce(times, time_sums, 3, MPI_DOUBLE, MPI_SUM, comm);
  summary.evaluate_seconds = time_sums[0];
  summary.schedule_seconds = time_sums[1];
  summary.journal_seconds = time_sums[2];
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  if (failed_any)
    throw RuntimeFailure("rank " + std::to_string(failed_rank) + " of " + std::to_string(ranks) +
                         " failed: " + failure + "; every rank stopped; progress is in " + dir +
                         ": once the cause is fixed, run the same command with --resume to continue");
  if (stopped_any)
    throw Interrupted("sweep stopped by a signal after " + std::to_string(already + summary.done_this_run) +
                      " of " + std::to_string(summary.points) + " points; progress is in " + dir +
                      "; run the same command with --resume to continue");
  if (rank == 0 && log.enabled(LogLevel::Info)) {
    char buf[160];
    const double el = seconds_since(start_time);
    std::snprintf(buf, sizeof buf,
                  "sweep: %llu/%llu points evaluated by %d rank(s) in %.2f s (%.0f points/s)",
                  static_cast<unsigned long long>(already + summary.done_this_run),
                  static_cast<unsigned long long>(summary.points), ranks, el,
                  el > 0 ? static_cast<double>(summary.done_this_run) / el : 0.0);
    log.info(buf);
    std::snprintf(
        buf, sizeof buf,
        "sweep: %llu chunks; rank-seconds: evaluating %.3f, scheduling %.4f (%.2f us/chunk), journal %.3f",
        static_cast<unsigned long long>(summary.chunks_this_run), summary.evaluate_seconds,
        summary.schedule_seconds,
        summary.chunks_this_run
            ? 1e6 * summary.schedule_seconds / static_cast<double>(summary.chunks_this_run)
            : 0.0,
        summary.journal_seconds);
    log.info(buf);
  }

  // 3. Rank 0 writes the file from the journal (index order: independent of ranks and runs).
  on_rank0_shared(comm, [&] { write_output(space, o, dir, summary, log); });
  std::uint64_t counts[3] = {summary.evaluated, summary.infeasible, summary.failed};
  MPI_Bcast(counts, 3, MPI_UINT64_T, 0, comm);
  summary.evaluated = counts[0];
  summary.infeasible = counts[1];
  summary.failed = counts[2];
  summary.seconds = seconds_since(start_time);
  return summary;
}

SweepSummary merge_slices(const Space& space, const std::vector<std::string>& inputs, const SweepOptions& o) {
  if (inputs.empty()) throw BadInput("no slice files to merge", "--merge");
  char fp[17];
  std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(space.fingerprint()));
  const std::string objectives = frontier::spell_objectives(o.objectives);
  // Each slice: its index range, whether it holds every point, and its status counts.
  struct Slice {
    std::uint64_t begin, end;
    std::string path;
  };
  std::vector<Slice> ranges;
  std::vector<PointRecord> rows;
  std::array<std::uint64_t, 3> counts = {0, 0, 0};
  bool any_frontier_slice = false;
  for (const auto& path : inputs) {
    ResultsReader r(path);
    if (r.root_string("space_fingerprint") != fp)
      throw BadInput("this file comes from a different space than " + inputs.front(), path);
    const bool frontier_only = r.root_string("keep") != spell_keep(Keep::All);
    if (frontier_only) {
      // Its /points holds only its frontier rows: the merge can only be a frontier, and only for
      // the objectives that slice filtered by (a point it dropped may be optimal for others).
      if (o.keep != Keep::Frontier)
        throw BadInput(
            "this slice was written with --keep frontier and holds only its frontier rows; "
            "merge with --keep frontier",
            path);
      if (r.frontier_objectives() != objectives)
        throw BadInput("this slice's frontier is over '" + r.frontier_objectives() + "', not '" + objectives +
                           "'; merge with the same frontier objectives",
                       path);
      // A pooled frontier dropped points that are on their own model's frontier; the converse is
      // fine (a per-model frontier holds the pooled one).
      if (r.frontier_group_by() != o.frontier_by && o.frontier_by != kFrontierPooled)
        throw BadInput("this slice's frontier is grouped by '" + r.frontier_group_by() + "', not '" +
                           o.frontier_by + "'; merge with sweep.frontier_by = " + r.frontier_group_by(),
                       path);
      any_frontier_slice = true;
    }
    ranges.push_back({r.root_u64("slice_begin"), r.root_u64("slice_end"), path});
    counts[0] += r.root_u64("points_evaluated");
    counts[1] += r.root_u64("points_infeasible");
    counts[2] += r.root_u64("points_failed");
    auto part = r.records();
    rows.insert(rows.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  // The slices' ranges must tile [0, size) exactly.
  std::sort(ranges.begin(), ranges.end(), [](const Slice& a, const Slice& b) { return a.begin < b.begin; });
  std::uint64_t next = 0;
  for (const auto& sl : ranges) {
    if (sl.begin < next)
      throw BadInput("its points [" + std::to_string(sl.begin) + ", " + std::to_string(sl.end) +
                         ") overlap another slice file's",
                     sl.path);
    if (sl.begin > next)
      throw BadInput("the slice files do not cover the space: point " + std::to_string(next) + " is missing",
                     "--merge");
    next = sl.end;
  }
  if (next != space.size())
    throw BadInput(
        "the slice files cover " + std::to_string(next) + " of " + std::to_string(space.size()) + " points",
        "--merge");
  std::sort(rows.begin(), rows.end(),
            [](const PointRecord& a, const PointRecord& b) { return a.index < b.index; });
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (rows[i].index == rows[i - 1].index)
      throw BadInput("point " + std::to_string(rows[i].index) + " appears in two slice files", "--merge");
  if (!any_frontier_slice && rows.size() != space.size())
    throw BadInput("the slice files hold " + std::to_string(rows.size()) + " rows for " +
                       std::to_string(space.size()) + " points",
                   "--merge");
  // A point off its slice's frontier is dominated by a point of that slice and of its model, so
  // the per-model frontiers of the union of the slices' rows are those of the whole space.
  SweepSummary summary;
  summary.points = space.size();
  summary.evaluated = counts[0];
  summary.infeasible = counts[1];
  summary.failed = counts[2];
  const auto front = grouped_frontier_indices(space, rows, o.objectives, PointGroups(space, o.frontier_by));
  ResultsMeta meta;
  meta.status_counts = counts;
  meta.config_text = o.config_text;
  meta.begin = 0;
  meta.end = space.size();
  meta.keep = o.keep;
  meta.objectives = o.objectives;
  meta.frontier_by = o.frontier_by;
  meta.compression = o.compression;
  write_results_file(o.out_path, space, rows, front, meta);
  summary.frontier_rows = frontier_rows(rows, front);
  return summary;
}

}  // namespace toposweep::sweep
