#pragma once
// What a sweep has left to do: the points a journal says are done, and the rest of an index range
// as a list of positions the ranks claim chunks of.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "toposweep/sweep/journal.hpp"

namespace toposweep::sweep {

// What a journal says is done: its done ranges (--keep frontier) plus every point record not
// inside one (--keep all journals every point; a frontier row whose chunk's range record was torn
// off by kill -9 is done too), with the status counts of all of them.
struct DoneSet {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals;  // sorted, [begin, end)
  std::uint64_t counts[3] = {0, 0, 0};                             // evaluated, infeasible, failed
  std::uint64_t points = 0;
};
// The done set of `journal` within [begin, end).
DoneSet done_set(const JournalContents& journal, std::uint64_t begin, std::uint64_t end);

// The points still to do, as half-open index ranges, and position -> index decoding.
struct TodoList {
  std::vector<std::uint64_t> flat;    // begin0, end0, begin1, end1, ...
  std::vector<std::uint64_t> before;  // points in earlier ranges
  std::uint64_t total = 0;

  // Computes `before` and `total` from `flat`.
  void finish();
  // The index of the pos-th point still to do (pos < total).
  std::uint64_t index_at(std::uint64_t pos) const {
    const auto it = std::upper_bound(before.begin(), before.end(), pos);
    const std::size_t r = static_cast<std::size_t>(it - before.begin()) - 1;
    return flat[2 * r] + (pos - before[r]);
  }
};
// The points of [begin, end) outside `done`.
TodoList todo_from(const DoneSet& done, std::uint64_t begin, std::uint64_t end);

}  // namespace toposweep::sweep
