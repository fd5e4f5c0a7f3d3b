#include "toposweep/sim/prepared_graph.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <utility>

#include "toposweep/sim/contention.hpp"

namespace toposweep::sim {
namespace {

bool is_comm(const Task& t) {
  return t.kind != TaskKind::Compute;
}

}  // namespace

PreparedGraph::PreparedGraph(const TaskGraph& graph) : comm_purpose_(graph.tasks.size(), kComputeTask) {
  const std::size_t n = graph.tasks.size();
  std::uint32_t streams = 0;
  for (const Task& t : graph.tasks) {
    stages_ = std::max(stages_, t.stage + 1);
    streams = std::max(streams, t.stream + 1);
  }
  const std::uint32_t groups = 2 * stages_ + static_cast<std::uint32_t>(kPurposeCount);
  // Every task belongs to two chains, keyed (group, stream): its stage-wide group (slot 0) and
  // its compute-of-stage or purpose group (slot 1). Counting the tasks per key lays the chains
  // out in (group, stream) order; run() fills each in task id order.
  auto key_of = [&](const Task& t, int slot) {
    const std::uint32_t group = slot == 0    ? stages_ + t.stage
                                : is_comm(t) ? 2 * stages_ + static_cast<std::uint32_t>(t.purpose)
                                             : t.stage;
    return static_cast<std::size_t>(group) * streams + t.stream;
  };
  std::vector<std::uint32_t> key_start(static_cast<std::size_t>(groups) * streams + 1, 0);
  std::vector<std::uint32_t> last_on_stream(streams, kNone);
  std::vector<std::uint32_t> stream_prev(n, kNone);  // previous task on the same stream
  for (TaskId i = 0; i < n; ++i) {
    const Task& t = graph.tasks[i];
    if (is_comm(t)) {
      comm_purpose_[i] = static_cast<std::uint8_t>(t.purpose);
      comm_.push_back({i, t.bytes * t.repeat});
      // The bytes per purpose when every communication task takes time: run()'s sums, in its order.
      all_comm_bytes_[comm_purpose_[i]] += comm_.back().bytes;
    } else if (t.sm_share > 0) {
      comm_purpose_[i] = kContentionTask;
    }
    stream_prev[i] = last_on_stream[t.stream];
    last_on_stream[t.stream] = i;
    ++key_start[key_of(t, 0) + 1];
    ++key_start[key_of(t, 1) + 1];
  }
  // Chain ids for the non-empty keys, in key order; group g owns a contiguous run of them.
  std::vector<std::uint32_t> chain_of_key(key_start.size() - 1, kNone);
  group_chains_.assign(groups + 1, 0);
  chain_offsets_.push_back(0);
  for (std::size_t k = 0; k + 1 < key_start.size(); ++k) {
    const std::uint32_t size = key_start[k + 1];
    if (size == 0) continue;
    chain_of_key[k] = static_cast<std::uint32_t>(chain_offsets_.size() - 1);
    chain_offsets_.push_back(chain_offsets_.back() + size);
    ++group_chains_[k / streams + 1];
  }
  for (std::uint32_t g = 0; g < groups; ++g) group_chains_[g + 1] += group_chains_[g];
  const std::size_t chains = chain_offsets_.size() - 1;
  task_chains_.resize(2 * n);
  for (TaskId i = 0; i < n; ++i)
    for (int slot = 0; slot < 2; ++slot)
      task_chains_[2 * i + slot] = chain_of_key[key_of(graph.tasks[i], slot)];
  heads_.resize(chains);
  item_ends_.resize(chains);
  items_.resize(chain_offsets_.back());
  // What a task waits for, in one list: its dependencies, then its stream predecessor.
  input_offsets_.reserve(n + 1);
  inputs_.reserve(graph.deps.size() + n);
  input_offsets_.push_back(0);
  for (TaskId i = 0; i < n; ++i) {
    const auto deps = graph.deps_of(i);
    inputs_.insert(inputs_.end(), deps.begin(), deps.end());
    if (stream_prev[i] != kNone) inputs_.push_back(stream_prev[i]);
    input_offsets_.push_back(static_cast<std::uint32_t>(inputs_.size()));
  }
}

void PreparedGraph::append_to_chain(std::uint32_t c, const TaskSpan& s) {
  // A chain runs on one stream, so its spans arrive disjoint and in start order; a span that
  // touches or overlaps the chain's last interval (back-to-back tasks) extends it.
  std::uint32_t& end = item_ends_[c];
  if (end > chain_offsets_[c] && s.start_s <= items_[end - 1].end_s)
    items_[end - 1].end_s = std::max(items_[end - 1].end_s, s.end_s);
  else
    items_[end++] = s;
}

void PreparedGraph::sift_down(std::size_t n) {
  std::size_t i = 0;
  const auto top = merge_heap_[0];
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && merge_heap_[child + 1].first < merge_heap_[child].first) ++child;
    if (!(merge_heap_[child].first < top.first)) break;
    merge_heap_[i] = merge_heap_[child];
    i = child;
  }
  merge_heap_[i] = top;
}

double PreparedGraph::group_union(std::uint32_t group) {
  const std::uint32_t c0 = group_chains_[group], c1 = group_chains_[group + 1];
  for (std::uint32_t c = c0; c < c1; ++c) heads_[c] = chain_offsets_[c];
  double total = 0, lo = 0, hi = -std::numeric_limits<double>::infinity();
  auto sweep = [&](const TaskSpan& s) {
    if (s.start_s > hi) {
      if (hi > lo) total += hi - lo;
      lo = s.start_s;
      hi = s.end_s;
    } else {
      hi = std::max(hi, s.end_s);
    }
  };
  if (c1 - c0 == 1) {
    for (std::uint32_t k = chain_offsets_[c0]; k < item_ends_[c0]; ++k) sweep(items_[k]);
  } else if (c1 - c0 <= kLinearMergeChains) {
    for (;;) {
      // Few chains (one per stream): a linear scan for the earliest head is cheapest.
      std::uint32_t best = c1;
      double best_start = 0;
      for (std::uint32_t c = c0; c < c1; ++c) {
        if (heads_[c] == item_ends_[c]) continue;
        const double s = items_[heads_[c]].start_s;
        if (best == c1 || s < best_start) {
          best = c;
          best_start = s;
        }
      }
      if (best == c1) break;
      sweep(items_[heads_[best]++]);
    }
  } else {
    // Many chains (e.g. one purpose over every stage's streams): a binary min-heap of chain
    // heads keyed by start time. After taking the top item the chain's next item replaces it and
    // sinks (one sift per item; it often stays on top, as a stream's items come in runs).
    // Ties may leave in any order; the union's components, and so its sum, do not depend on it.
    merge_heap_.clear();
    for (std::uint32_t c = c0; c < c1; ++c)
      if (heads_[c] != item_ends_[c]) merge_heap_.push_back({items_[heads_[c]].start_s, c});
    std::make_heap(merge_heap_.begin(), merge_heap_.end(), std::greater<>{});
    std::size_t n = merge_heap_.size();
    while (n > 0) {
      const std::uint32_t c = merge_heap_[0].second;
      sweep(items_[heads_[c]++]);
      if (heads_[c] != item_ends_[c]) {
        merge_heap_[0].first = items_[heads_[c]].start_s;
      } else {
        merge_heap_[0] = merge_heap_[--n];
      }
      sift_down(n);
    }
  }
  if (hi > lo) total += hi - lo;
  return total;
}

JobTimes PreparedGraph::run(const TaskGraph& graph, std::span<const double> durations,
                            std::vector<TaskSpan>& spans, bool comm_busy) {
  const std::size_t n = graph.tasks.size();
  spans.resize(n);
  std::copy(chain_offsets_.begin(), chain_offsets_.end() - 1, item_ends_.begin());
  JobTimes out;
  double end = 0;
  bool comm_all_timed = true;  // every communication task took time (so all_comm_bytes_ holds)
  const std::uint32_t* input = inputs_.data();
  for (TaskId i = 0; i < n; ++i) {
    // The latest end among its inputs: a maximum, so their order does not matter.
    double start = 0;
    for (const std::uint32_t* last = inputs_.data() + input_offsets_[i + 1]; input != last; ++input)
      start = std::max(start, spans[*input].end_s);
    const std::uint8_t purpose = comm_purpose_[i];
    const double duration = purpose == kContentionTask ? contention_seconds(graph, i, spans) : durations[i];
    const TaskSpan s{start, start + duration};
    spans[i] = s;
    end = std::max(end, s.end_s);
    const bool comm = purpose < kContentionTask;
    if (s.end_s <= s.start_s) {  // zero-length spans add nothing to any union
      comm_all_timed = comm_all_timed && !comm;
      continue;
    }
    append_to_chain(task_chains_[2 * i], s);
    // A communication task's second chain is its purpose's, measured only for comm_busy.
    if (!comm || comm_busy) append_to_chain(task_chains_[2 * i + 1], s);
  }
  if (comm_all_timed) {
    out.comm_bytes = all_comm_bytes_;
  } else {
    for (const CommTask& c : comm_)
      if (spans[c.task].end_s > spans[c.task].start_s) out.comm_bytes[comm_purpose_[c.task]] += c.bytes;
  }
  out.iteration_time_s = end;
  set_critical_stage(
      out, stages_, [&](std::uint32_t p) { return group_union(p); },
      [&](std::uint32_t p) { return group_union(stages_ + p); });
  if (comm_busy)
    for (std::size_t q = 0; q < kPurposeCount; ++q)
      out.comm_busy_s[q] = group_union(2 * stages_ + static_cast<std::uint32_t>(q));
  return out;
}

}  // namespace toposweep::sim
