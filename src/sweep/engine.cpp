#include "toposweep/sweep/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "toposweep/sweep/chunk_runner.hpp"
#include "toposweep/sweep/output.hpp"
#include "toposweep/sweep/progress.hpp"
#include "toposweep/sweep/scheduler.hpp"
#include "toposweep/sweep/todo.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/heap_prefault.hpp"

namespace toposweep::sweep {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

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

// What rank 0 found in the journal: the points left, the run number, the status counts of the
// points done before, or that the output is already complete.
struct Plan {
  TodoList todo;
  std::uint32_t run = 0;
  std::uint64_t before[3] = {0, 0, 0};  // evaluated, infeasible, failed by earlier runs
  bool already_complete = false;        // --resume of a sweep whose output was already written

  std::uint64_t already() const { return before[0] + before[1] + before[2]; }
};

// Rank 0 checks the journal (creating it for a fresh sweep) and works out what is left; every rank
// learns it. Bad input throws BadInput on every rank before anything is written.
Plan plan_on_rank0(const Space& space, const SweepOptions& o, const std::string& dir, MPI_Comm comm) {
  Plan plan;
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
      plan.already_complete = true;
      return;
    }
    if (!existing) create_journal(dir, expected, space.canonical_text());
    plan.run = next_run_number(dir);
    if (existing) journal = read_journal_contents(dir);
    if (o.keep != Keep::Frontier && !journal.ranges.empty())
      throw BadInput("the journal " + dir +
                         " was written by a --keep frontier sweep (it lacks the other "
                         "points); resume it with --keep frontier",
                     "--keep " + spell_keep(o.keep));
    const DoneSet done = done_set(journal, o.begin, o.end);
    for (int k = 0; k < 3; ++k) plan.before[k] = done.counts[k];
    plan.todo = todo_from(done, o.begin, o.end);
  });
  int complete = plan.already_complete ? 1 : 0;
  MPI_Bcast(&complete, 1, MPI_INT, 0, comm);
  plan.already_complete = complete != 0;
  if (plan.already_complete) return plan;
  std::uint64_t nflat = plan.todo.flat.size();
  MPI_Bcast(&nflat, 1, MPI_UINT64_T, 0, comm);
  plan.todo.flat.resize(nflat);
  if (nflat) MPI_Bcast(plan.todo.flat.data(), static_cast<int>(nflat), MPI_UINT64_T, 0, comm);
  plan.todo.finish();
  MPI_Bcast(&plan.run, 1, MPI_UINT32_T, 0, comm);
  MPI_Bcast(plan.before, 3, MPI_UINT64_T, 0, comm);
  return plan;
}

// How the evaluation loop ended, the same on every rank.
struct LoopEnd {
  bool stopped = false;  // some rank was asked to stop
  int failed_rank = -1;  // the rank that failed first, or -1
  std::string failure;   // its error
};

// Every rank claims chunks of the to-do list and evaluates them until none is left, a rank asks to
// stop or a rank fails. An exception on one rank must not skip the collectives the others wait
// in: it is caught, published in the scheduler's error slot (which every rank reads with each
// claim, so the others stop at their next chunk boundary), and reported by the collective exit at
// the end, which every rank reaches. The journal stays valid: only whole records were committed.
LoopEnd evaluate_todo(const Space& space, const SweepOptions& o, const Evaluator& evaluate, const Plan& plan,
                      const std::string& dir, MPI_Comm comm, const std::function<bool()>& stop_requested,
                      const InjectedFault& fault, ProgressReporter& progress, SweepSummary& summary) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  ChunkScheduler scheduler(comm, static_cast<std::int64_t>(plan.todo.total),
                           o.scheduler);  // scope ends at the exit below
  bool stopped_here = false, failed_here = false;
  std::string failure;  // what failed on this rank
  ChunkStats stats;
  try {
    ChunkRunner runner(space, o, evaluate, dir, plan.run, rank, rank == fault.rank ? fault.chunk : 0, stats);
    ChunkSizer sizer(o.chunk_seconds, o.max_chunk_points, ranks);
    util::HeapPrefault heap;  // the caches' pages, mapped ahead in bulk
    while (true) {
      if (stop_requested()) stopped_here = true;
      if (stopped_here) {
        scheduler.request_stop();
        break;
      }
      // What this chunk costs besides its points: the claim and the done count.
      const double fixed_before = scheduler.seconds(), eval_before = stats.evaluate_seconds;
      const auto claim = scheduler.claim(sizer.next());
      if (claim.stop || claim.error || claim.empty()) break;
      const auto chunk = runner.run(plan.todo, claim.first, claim.last, stop_requested);
      stopped_here = chunk.stopped;
      scheduler.add_done(chunk.counts);
      sizer.measured(stats.evaluate_seconds - eval_before, chunk.counts[0], claim.left,
                     scheduler.seconds() - fixed_before);
      heap.populate();
      progress.after_chunk(scheduler);
    }
    runner.commit();  // what the last chunks evaluated since the last commit
  } catch (const Interrupted&) {
    stopped_here = true;  // an evaluator that watches the stop flag itself
    scheduler.request_stop();
  } catch (const std::exception& e) {
    failed_here = true;
    failure = e.what();
    if (const auto* b = dynamic_cast<const BadInput*>(&e)) failure += " (" + b->where() + ")";
  } catch (...) {
    failed_here = true;
    failure = "an exception of unknown type";
  }
  if (failed_here) scheduler.publish_failure(rank);
  // The collective exit: every rank gets here, whatever happened in its loop.
  int flags_local[2] = {stopped_here ? 1 : 0, failed_here ? 1 : 0}, flags_any[2] = {0, 0};
  MPI_Allreduce(flags_local, flags_any, 2, MPI_INT, MPI_MAX, comm);
  LoopEnd end;
  end.stopped = flags_any[0] != 0;
  if (flags_any[1] != 0) {
    // Every failing rank's publish_failure was flushed before the reduction above.
    end.failed_rank = scheduler.first_failed_rank();
    end.failure = failure;
    bcast_string(end.failure, comm, end.failed_rank);
  }
  std::uint64_t totals[2] = {stats.points, stats.chunks}, sums[2] = {0, 0};
  MPI_Allreduce(totals, sums, 2, MPI_UINT64_T, MPI_SUM, comm);
  summary.done_this_run = sums[0];
  summary.chunks_this_run = sums[1];
  double times[3] = {stats.evaluate_seconds, scheduler.seconds(), stats.journal_seconds};
  double time_sums[3] = {0, 0, 0};
  MPI_Allreduce(times, time_sums, 3, MPI_DOUBLE, MPI_SUM, comm);
  summary.evaluate_seconds = time_sums[0];
  summary.schedule_seconds = time_sums[1];
  summary.journal_seconds = time_sums[2];
  summary.scheduler = scheduler.store_kind();
  return end;
}  // the scheduler's store is freed here, on every rank

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
    r.result = invalid_design_result(e.what(), e.where());
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
  const Plan plan = plan_on_rank0(space, o, dir, comm);
  if (plan.already_complete) {
    on_rank0_shared(comm, [&] {
      log.info("sweep: " + o.out_path + " is already complete for this space; nothing to do");
      read_complete_output(o, summary);
    });
    summary.seconds = seconds_since(start_time);
    return summary;
  }
  if (rank == 0 && plan.already())
    log.info("sweep: resuming: " + std::to_string(plan.already()) + " of " + std::to_string(summary.points) +
             " points already done");

  // 2. Every rank evaluates chunks, self-scheduled through the counter on rank 0.
  ProgressReporter progress(log, rank == 0, o.progress_interval_s, summary.points, plan.todo.total,
                            plan.before);
  const LoopEnd end =
      evaluate_todo(space, o, evaluate, plan, dir, comm, stop_requested, fault, progress, summary);
  if (end.failed_rank >= 0)
    throw RuntimeFailure("rank " + std::to_string(end.failed_rank) + " of " + std::to_string(ranks) +
                         " failed: " + end.failure + "; every rank stopped; progress is in " + dir +
                         ": once the cause is fixed, run the same command with --resume to continue");
  if (end.stopped)
    throw Interrupted("sweep stopped by a signal after " +
                      std::to_string(plan.already() + summary.done_this_run) + " of " +
                      std::to_string(summary.points) + " points; progress is in " + dir +
                      "; run the same command with --resume to continue");
  progress.finished(summary, ranks, start_time);

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

}  // namespace toposweep::sweep
