#pragma once
// The sweep engine: evaluates a range of a design space over the ranks of an MPI communicator
// with dynamic load balancing, journals every chunk durably, and writes the HDF5 results once
// every point is done. The engine never knows how a point is evaluated: it calls an injected
// Evaluator (the CLI wraps point/evaluate.hpp; tests pass synthetic ones). run_sweep strings
// together its parts: the plan (todo.hpp: what the journal says is left), the scheduler
// (scheduler.hpp: the shared counters), the chunk runner (chunk_runner.hpp: evaluate and
// journal a chunk), the progress reporter (progress.hpp) and the output step (output.hpp).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "toposweep/frontier/pareto.hpp"
#include "toposweep/point/point_result.hpp"
#include "toposweep/sweep/frontier_groups.hpp"
#include "toposweep/sweep/journal.hpp"
#include "toposweep/sweep/mpi.hpp"
#include "toposweep/sweep/results_file.hpp"
#include "toposweep/sweep/slot_store.hpp"
#include "toposweep/sweep/space.hpp"
#include "toposweep/util/log.hpp"

namespace toposweep::sweep {

using Evaluator = std::function<PointResult(const Config&)>;

struct SweepOptions {
  std::string out_path;
  bool resume = false;
  Keep keep = Keep::All;
  std::uint64_t begin = 0;  // index range to evaluate: [begin, end)
  std::uint64_t end = 0;
  std::string slice;  // "K/N" when a job-array slice, else ""
  std::vector<frontier::Objective> objectives;
  // "model.name": /frontier is the union of the per-model frontiers; "none": one pooled frontier.
  std::string frontier_by = kFrontierByModel;
  double chunk_seconds = 0.5;  // target wall time of a chunk
  std::uint64_t max_chunk_points = 4096;
  double progress_interval_s = 2;
  int compression = 1;
  // Where the scheduler keeps its counters (sweep.scheduler; slot_store.hpp).
  SlotStoreKind scheduler = SlotStoreKind::Auto;
  std::string config_text;  // the effective configuration, stored in the file
};

struct SweepSummary {
  std::uint64_t points = 0;  // in the range
  std::uint64_t evaluated = 0, infeasible = 0, failed = 0;
  std::uint64_t done_this_run = 0;  // points evaluated by this invocation (all ranks)
  std::uint64_t chunks_this_run = 0;
  // Wall time summed over ranks, this run: evaluating points, scheduling (shared counter
  // and progress accumulates), journal commits (write + fdatasync).
  double evaluate_seconds = 0, schedule_seconds = 0, journal_seconds = 0;
  SlotStoreKind scheduler = SlotStoreKind::Auto;  // the store the scheduler used (Auto: none ran)
  double seconds = 0;
  std::vector<PointRecord> frontier_rows;  // rank 0 only
};

// Evaluate one point, turning exceptions into status 2 with the message (BadInput included: an
// inconsistent design is a failed point, not a crashed sweep) and canonicalising NaNs.
PointRecord evaluate_point(const Space& space, std::uint64_t index, const Evaluator& evaluate);
// Same, reusing `scratch` (start it as space.base()) instead of copying the base per point.
PointRecord evaluate_point(const Space& space, std::uint64_t index, const Evaluator& evaluate,
                           Config& scratch);

// Run the sweep on every rank of `comm` (collective). `stop_requested` is polled after every
// point (a SIGTERM/SIGINT flag); when it fires on any rank, all ranks stop after their current
// point, commit their journals and throw Interrupted. Bad input (a journal of another space,
// an existing journal without `resume`) throws BadInput on every rank before anything is written.
// An exception on one rank while it evaluates or journals (e.g. a journal write failing with
// ENOSPC) stops the other ranks at their next chunk and throws RuntimeFailure, naming that rank
// and its error, on every rank; the journal keeps every committed chunk for `resume`.
SweepSummary run_sweep(const Space& space, const SweepOptions& options, const Evaluator& evaluate,
                       MPI_Comm comm, const Logger& log, const std::function<bool()>& stop_requested);

// Merge slice files of one space into `options.out_path` (keep/objectives/compression from
// `options`). Every file must carry the space's fingerprint; together they must cover the space
// exactly once. Throws BadInput otherwise.
SweepSummary merge_slices(const Space& space, const std::vector<std::string>& inputs,
                          const SweepOptions& options);

}  // namespace toposweep::sweep
