#include "toposweep/sweep/output.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <iterator>

#include "toposweep/sweep/columns.hpp"
#include "toposweep/sweep/results_file.hpp"
#include "toposweep/sweep/todo.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::sweep {
namespace {

// The space_fingerprint attribute's spelling.
std::string fingerprint_hex(const Space& space) {
  char fp[17];
  std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(space.fingerprint()));
  return fp;
}

}  // namespace

ResultsMeta results_meta(const SweepOptions& o) {
  ResultsMeta meta;
  meta.config_text = o.config_text;
  meta.slice = o.slice;
  meta.begin = o.begin;
  meta.end = o.end;
  meta.keep = o.keep;
  meta.objectives = o.objectives;
  meta.frontier_by = o.frontier_by;
  meta.compression = o.compression;
  return meta;
}

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
  ResultsMeta meta = results_meta(o);
  meta.status_counts = std::array<std::uint64_t, 3>{done.counts[0], done.counts[1], done.counts[2]};
  const auto t0 = std::chrono::steady_clock::now();
  write_results_file(o.out_path, space, rows, front, meta);
  log.debug("sweep: wrote " + o.out_path + " in " +
            std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()) +
            " s");
  remove_journal(dir);
  summary.frontier_rows = frontier_rows(rows, front);
}

bool output_is_complete(const Space& space, const SweepOptions& o) {
  try {
    ResultsReader r(o.out_path);
    return r.root_string("space_fingerprint") == fingerprint_hex(space) &&
           r.root_u64("slice_begin") == o.begin && r.root_u64("slice_end") == o.end &&
           r.root_string("keep") == spell_keep(o.keep) &&
           r.frontier_objectives() == frontier::spell_objectives(o.objectives) &&
           r.frontier_group_by() == o.frontier_by;
  } catch (const std::exception&) {
    return false;  // not ours or unreadable: redo the sweep and replace it
  }
}

void read_complete_output(const SweepOptions& o, SweepSummary& summary) {
  ResultsReader reader(o.out_path);
  summary.evaluated = reader.root_u64("points_evaluated");
  summary.infeasible = reader.root_u64("points_infeasible");
  summary.failed = reader.root_u64("points_failed");
  summary.frontier_rows = frontier_rows(reader.records(), reader.frontier());
}

SweepSummary merge_slices(const Space& space, const std::vector<std::string>& inputs, const SweepOptions& o) {
  if (inputs.empty()) throw BadInput("no slice files to merge", "--merge");
  const std::string fp = fingerprint_hex(space);
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
  ResultsMeta meta = results_meta(o);
  meta.status_counts = counts;
  meta.slice = "";
  meta.begin = 0;
  meta.end = space.size();
  write_results_file(o.out_path, space, rows, front, meta);
  summary.frontier_rows = frontier_rows(rows, front);
  return summary;
}

}  // namespace toposweep::sweep
