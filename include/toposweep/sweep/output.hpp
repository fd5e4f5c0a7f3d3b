#pragma once
// The sweep's output step, on rank 0 once every point is journaled: the results file assembled
// from the journal (in index order, so its bytes depend neither on ranks nor on runs), and the
// check that lets a resumed job whose output is already complete do nothing.
#include <string>

#include "toposweep/sweep/engine.hpp"
#include "toposweep/util/log.hpp"

namespace toposweep::sweep {

// What the options make of a results file's metadata (slice and range, keep, objectives,
// grouping, compression, configuration).
ResultsMeta results_meta(const SweepOptions& options);

// Reads the journal in `journal_dir`, checks it holds every point of the range, writes
// `options.out_path` and removes the journal. Fills the summary's status counts and frontier rows.
// RuntimeFailure when points are missing or a --keep frontier journal is finished as --keep all.
void write_output(const Space& space, const SweepOptions& options, const std::string& journal_dir,
                  SweepSummary& summary, const Logger& log);

// True when `options.out_path` is a results file of this space, range, keep mode, objectives and
// grouping: a resumed job (e.g. a requeued Slurm task) whose sweep had finished has nothing to do.
bool output_is_complete(const Space& space, const SweepOptions& options);
// The status counts and frontier rows of such a file.
void read_complete_output(const SweepOptions& options, SweepSummary& summary);

}  // namespace toposweep::sweep
