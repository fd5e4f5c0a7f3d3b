#include "toposweep/sim/contention.hpp"

#include <algorithm>
#include <vector>

namespace toposweep::sim {

double contention_seconds(const TaskGraph& g, TaskId i, std::span<const TaskSpan> spans) {
  const auto deps = g.deps_of(i);
  double comm_end = 0, compute_end = 0, overlap = 0;
  // The communication dependencies in dependency order. On one stream (every caller's) their spans
  // follow each other, so the ones overlapping a compute span form a run found by binary search;
  // otherwise every pair is tried. Either way the sum adds the same nonzero overlaps in the same
  // order (pairs that do not overlap add exactly 0), so both give the same bits.
  thread_local std::vector<TaskId> comm;  // reused: a contention task is timed once per pass played
  comm.clear();
  for (TaskId c : deps)
    if (g.tasks[c].kind != TaskKind::Compute) {
      comm.push_back(c);
      comm_end = std::max(comm_end, spans[c].end_s);
    }
  bool chained = true;
  for (std::size_t k = 1; k < comm.size() && chained; ++k)
    chained = spans[comm[k - 1]].end_s <= spans[comm[k]].start_s;
  // Each side runs on one stream, so its spans are disjoint: the pairwise overlaps add up to
  // the measure of the two unions' intersection.
  for (TaskId c : deps) {
    if (g.tasks[c].kind != TaskKind::Compute) continue;
    compute_end = std::max(compute_end, spans[c].end_s);
    std::size_t first = 0;
    if (chained)
      first = static_cast<std::size_t>(
          std::partition_point(comm.begin(), comm.end(),
                               [&](TaskId a) { return spans[a].end_s <= spans[c].start_s; }) -
          comm.begin());
    for (std::size_t k = first; k < comm.size(); ++k) {
      const TaskSpan& a = spans[comm[k]];
      if (chained && a.start_s >= spans[c].end_s) break;
      overlap += std::max(0.0, std::min(spans[c].end_s, a.end_s) - std::max(spans[c].start_s, a.start_s));
    }
  }
  return std::max(0.0, compute_end + g.tasks[i].sm_share * overlap - std::max(compute_end, comm_end));
}

}  // namespace toposweep::sim
