#include "toposweep/sweep/todo.hpp"

#include <algorithm>
#include <iterator>

namespace toposweep::sweep {
namespace {

bool inside_a_range(const std::vector<DoneRange>& ranges, std::uint64_t index) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), index,
                             [](std::uint64_t i, const DoneRange& r) { return i < r.begin; });
  return it != ranges.begin() && index < std::prev(it)->end;
}

}  // namespace

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

void TodoList::finish() {
  before.clear();
  total = 0;
  for (std::size_t i = 0; i + 1 < flat.size(); i += 2) {
    before.push_back(total);
    total += flat[i + 1] - flat[i];
  }
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

}  // namespace toposweep::sweep
