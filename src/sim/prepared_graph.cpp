#include "toposweep/sim/prepared_graph.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <utility>

namespace toposweep::sim {
namespace {

bool is_comm(const Task& t) {
  return t.kind != TaskKind::Compute;
}

}  // namespace

PreparedGraph::PreparedGraph(const TaskGraph& graph) : stream_prev_(graph.tasks.size(), kNone) {
  std::vector<std::uint32_t> last_on_stream;
  for (const Task& t : graph.tasks) stages_ = std::max(stages_, t.stage + 1);
  const std::uint32_t groups = 2 * stages_ + static_cast<std::uint32_t>(kPurposeCount);
  // (group, stream) -> tasks in id order; built once per graph, so a map is fine here.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<TaskId>> chains;
  for (TaskId i = 0; i < graph.tasks.size(); ++i) {
    const Task& t = graph.tasks[i];
    if (t.stream >= last_on_stream.size()) last_on_stream.resize(t.stream + 1, kNone);
    stream_prev_[i] = last_on_stream[t.stream];
    last_on_stream[t.stream] = i;
    chains[{stages_ + t.stage, t.stream}].push_back(i);
    if (is_comm(t))
      chains[{2 * stages_ + static_cast<std::uint32_t>(t.purpose), t.stream}].push_back(i);
    else
      chains[{t.stage, t.stream}].push_back(i);
  }
  group_chains_.assign(groups + 1, 0);
  chain_offsets_.push_back(0);
  for (const auto& [key, tasks] : chains) {
    ++group_chains_[key.first + 1];
    chain_tasks_.insert(chain_tasks_.end(), tasks.begin(), tasks.end());
    chain_offsets_.push_back(static_cast<std::uint32_t>(chain_tasks_.size()));
  }
  for (std::uint32_t g = 0; g < groups; ++g) group_chains_[g + 1] += group_chains_[g];
  heads_.resize(chains.size());
}

double PreparedGraph::group_union(std::uint32_t group, const std::vector<TaskSpan>& spans) {
  const std::uint32_t c0 = group_chains_[group], c1 = group_chains_[group + 1];
  // A head points at its chain's next span of positive length (zero-length spans do not count).
  auto skip_empty = [&](std::uint32_t c) {
    std::uint32_t& h = heads_[c];
    while (h < chain_offsets_[c + 1] && spans[chain_tasks_[h]].end_s <= spans[chain_tasks_[h]].start_s) ++h;
  };
  for (std::uint32_t c = c0; c < c1; ++c) {
    heads_[c] = chain_offsets_[c];
    skip_empty(c);
  }
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
  if (c1 - c0 <= kLinearMergeChains) {
    for (;;) {
      // Few chains (one per stream): a linear scan for the earliest head is cheapest.
      std::uint32_t best = c1;
      double best_start = 0;
      for (std::uint32_t c = c0; c < c1; ++c) {
        if (heads_[c] == chain_offsets_[c + 1]) continue;
        const double s = spans[chain_tasks_[heads_[c]]].start_s;
        if (best == c1 || s < best_start) {
          best = c;
          best_start = s;
        }
      }
      if (best == c1) break;
      sweep(spans[chain_tasks_[heads_[best]]]);
      ++heads_[best];
      skip_empty(best);
    }
  } else {
    // Many chains (e.g. one purpose over every stage's streams): a min-heap of chain heads.
    // Ties may pop in any order; the union's components, and so its sum, do not depend on it.
    merge_heap_.clear();
    for (std::uint32_t c = c0; c < c1; ++c)
      if (heads_[c] != chain_offsets_[c + 1])
        merge_heap_.push_back({spans[chain_tasks_[heads_[c]]].start_s, c});
    std::make_heap(merge_heap_.begin(), merge_heap_.end(), std::greater<>{});
    while (!merge_heap_.empty()) {
      std::pop_heap(merge_heap_.begin(), merge_heap_.end(), std::greater<>{});
      const std::uint32_t c = merge_heap_.back().second;
      merge_heap_.pop_back();
      sweep(spans[chain_tasks_[heads_[c]]]);
      ++heads_[c];
      skip_empty(c);
      if (heads_[c] != chain_offsets_[c + 1]) {
        merge_heap_.push_back({spans[chain_tasks_[heads_[c]]].start_s, c});
        std::push_heap(merge_heap_.begin(), merge_heap_.end(), std::greater<>{});
      }
    }
  }
  if (hi > lo) total += hi - lo;
  return total;
}

JobTimes PreparedGraph::run(const TaskGraph& graph, std::span<const double> durations,
                            std::vector<TaskSpan>& spans) {
  const std::size_t n = graph.tasks.size();
  spans.resize(n);
  JobTimes out;
  double end = 0;
  for (TaskId i = 0; i < n; ++i) {
    double start = 0;
    for (TaskId d : graph.deps_of(i)) start = std::max(start, spans[d].end_s);
    if (stream_prev_[i] != kNone) start = std::max(start, spans[stream_prev_[i]].end_s);
    const TaskSpan s{start, start + durations[i]};
    spans[i] = s;
    end = std::max(end, s.end_s);
    const Task& t = graph.tasks[i];
    if (s.end_s > s.start_s && is_comm(t))
      out.comm_bytes[static_cast<std::size_t>(t.purpose)] += t.bytes * t.repeat;
  }
  out.iteration_time_s = end;
  double best_busy = -1;
  for (std::uint32_t p = 0; p < stages_; ++p) {
    const double c = group_union(p, spans);
    const double busy = group_union(stages_ + p, spans);
    if (busy > best_busy) {
      best_busy = busy;
      out.critical_stage = p;
      out.compute_time_s = c;
      out.exposed_comm_time_s = busy - c;
    }
  }
  out.bubble_time_s = std::max(0.0, end - out.compute_time_s - out.exposed_comm_time_s);
  for (std::size_t q = 0; q < kPurposeCount; ++q)
    out.comm_busy_s[q] = group_union(2 * stages_ + static_cast<std::uint32_t>(q), spans);
  return out;
}

}  // namespace toposweep::sim
