#include "toposweep/sim/contention.hpp"

#include <algorithm>

namespace toposweep::sim {

double contention_seconds(const TaskGraph& g, TaskId i, std::span<const TaskSpan> spans) {
  const auto deps = g.deps_of(i);
  double comm_end = 0, compute_end = 0, overlap = 0;
  // Each side runs on one stream, so its spans are disjoint: the pairwise overlaps add up to
  // the measure of the two unions' intersection.
  for (TaskId c : deps) {
    if (g.tasks[c].kind != TaskKind::Compute) {
      comm_end = std::max(comm_end, spans[c].end_s);
      continue;
    }
    compute_end = std::max(compute_end, spans[c].end_s);
    for (TaskId a : deps)
      if (g.tasks[a].kind != TaskKind::Compute)
        overlap += std::max(
            0.0, std::min(spans[c].end_s, spans[a].end_s) - std::max(spans[c].start_s, spans[a].start_s));
  }
  return std::max(0.0, compute_end + g.tasks[i].sm_share * overlap - std::max(compute_end, comm_end));
}

}  // namespace toposweep::sim
