#include "toposweep/sim/engine.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>

#include "toposweep/sim/contention.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Completion {
  double time;
  std::uint64_t task;  // global task index
  bool operator>(const Completion& o) const { return time > o.time || (time == o.time && task > o.task); }
};

bool is_comm(const Task& t) {
  return t.kind != TaskKind::Compute;
}

// Per-stage busy/exposed accounting over the recorded spans.
JobTimes breakdown(const TaskGraph& g, const std::vector<TaskSpan>& spans) {
  JobTimes out;
  std::uint32_t stages = 1;
  for (const Task& t : g.tasks) stages = std::max(stages, t.stage + 1);
  std::vector<std::vector<TaskSpan>> compute(stages), all(stages);
  std::array<std::vector<TaskSpan>, kPurposeCount> by_purpose;
  double end = 0;
  for (std::size_t i = 0; i < g.tasks.size(); ++i) {
    const Task& t = g.tasks[i];
    const TaskSpan s = spans[i];
    end = std::max(end, s.end_s);
    if (s.end_s <= s.start_s) continue;
    all[t.stage].push_back(s);
    if (is_comm(t)) {
      const auto p = static_cast<std::size_t>(t.purpose);
      by_purpose[p].push_back(s);
      out.comm_bytes[p] += t.bytes * t.repeat;
    } else {
      compute[t.stage].push_back(s);
    }
  }
  out.iteration_time_s = end;
  set_critical_stage(
      out, stages, [&](std::uint32_t p) { return union_length(compute[p]); },
      [&](std::uint32_t p) { return union_length(all[p]); });
  for (std::size_t p = 0; p < kPurposeCount; ++p) out.comm_busy_s[p] = union_length(by_purpose[p]);
  return out;
}

}  // namespace

double union_length(std::vector<TaskSpan>& spans) {
  auto by_start = [](const TaskSpan& a, const TaskSpan& b) { return a.start_s < b.start_s; };
  // Spans of one stream arrive in start order already; most sets need no sort.
  if (!std::is_sorted(spans.begin(), spans.end(), by_start)) std::sort(spans.begin(), spans.end(), by_start);
  double total = 0, lo = 0, hi = -kInf;
  for (const TaskSpan& s : spans) {
    if (s.start_s > hi) {
      if (hi > lo) total += hi - lo;
      lo = s.start_s;
      hi = s.end_s;
    } else {
      hi = std::max(hi, s.end_s);
    }
  }
  if (hi > lo) total += hi - lo;
  return total;
}

std::string_view comm_purpose_name(CommPurpose p) {
  switch (p) {
    case CommPurpose::None:
      return "none";
    case CommPurpose::DataParallel:
      return "data_parallel";
    case CommPurpose::TensorParallel:
      return "tensor_parallel";
    case CommPurpose::PipelineParallel:
      return "pipeline_parallel";
    case CommPurpose::Embedding:
      return "embedding";
    case CommPurpose::ContextParallel:
      return "context_parallel";
    case CommPurpose::ExpertParallel:
      return "expert_parallel";
    case CommPurpose::Other:
      return "other";
  }
  return "other";
}

EngineResult run_engine(std::span<const Job> jobs, NetworkModel& model) {
  // Global task index = offset[job] + task id.
  std::vector<std::uint64_t> offset(jobs.size() + 1, 0);
  for (std::size_t j = 0; j < jobs.size(); ++j) offset[j + 1] = offset[j] + jobs[j].graph->tasks.size();
  const std::uint64_t n = offset.back();
  std::vector<std::uint32_t> job_of(n);
  std::vector<std::uint32_t> waiting(n, 0);
  // Successors in CSR form: explicit dependents plus the next task on the same stream.
  std::vector<std::uint64_t> succ_offset(n + 1, 0);
  std::vector<std::uint64_t> stream_next(n, std::numeric_limits<std::uint64_t>::max());
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const TaskGraph& g = *jobs[j].graph;
    std::vector<std::uint64_t> last_on_stream;
    for (TaskId i = 0; i < g.tasks.size(); ++i) {
      const std::uint64_t gi = offset[j] + i;
      job_of[gi] = static_cast<std::uint32_t>(j);
      for (TaskId d : g.deps_of(i)) {
        ++succ_offset[offset[j] + d + 1];
        ++waiting[gi];
      }
      const std::uint32_t s = g.tasks[i].stream;
      if (s >= last_on_stream.size()) last_on_stream.resize(s + 1, std::numeric_limits<std::uint64_t>::max());
      if (last_on_stream[s] != std::numeric_limits<std::uint64_t>::max()) {
        stream_next[last_on_stream[s]] = gi;
        ++waiting[gi];
      }
      last_on_stream[s] = gi;
    }
  }
  for (std::uint64_t i = 0; i < n; ++i) succ_offset[i + 1] += succ_offset[i];
  std::vector<std::uint64_t> succ(succ_offset[n]);
  {
    std::vector<std::uint64_t> fill(succ_offset.begin(), succ_offset.end() - 1);
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const TaskGraph& g = *jobs[j].graph;
      for (TaskId i = 0; i < g.tasks.size(); ++i)
        for (TaskId d : g.deps_of(i)) succ[fill[offset[j] + d]++] = offset[j] + i;
    }
  }

  EngineResult result;
  result.spans.resize(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j) result.spans[j].resize(jobs[j].graph->tasks.size());
  auto span_of = [&](std::uint64_t gi) -> TaskSpan& {
    return result.spans[job_of[gi]][gi - offset[job_of[gi]]];
  };

  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> fixed;
  std::vector<std::uint64_t> ready, batch;
  std::uint64_t finished = 0;

  auto start = [&](std::uint64_t gi, double now) {
    const std::uint32_t j = job_of[gi];
    const TaskId id = static_cast<TaskId>(gi - offset[j]);
    const Task& t = jobs[j].graph->tasks[id];
    span_of(gi).start_s = now;
    if (!is_comm(t)) {
      const double d =
          t.sm_share > 0 ? contention_seconds(*jobs[j].graph, id, result.spans[j]) : t.duration_s * t.repeat;
      fixed.push({now + d, gi});
      return;
    }
    const CommTask comm{j, jobs[j].graph, id, &jobs[j].placement};
    if (auto d = model.begin(comm, now, gi)) fixed.push({now + *d, gi});
  };
  auto complete = [&](std::uint64_t gi, double now) {
    span_of(gi).end_s = now;
    ++finished;
    for (std::uint64_t k = succ_offset[gi]; k < succ_offset[gi + 1]; ++k)
      if (--waiting[succ[k]] == 0) ready.push_back(succ[k]);
    const std::uint64_t nx = stream_next[gi];
    if (nx != std::numeric_limits<std::uint64_t>::max() && --waiting[nx] == 0) ready.push_back(nx);
  };

  for (std::uint64_t i = 0; i < n; ++i)
    if (waiting[i] == 0) ready.push_back(i);
  double now = 0;
  std::vector<std::uint64_t> completed;
  for (;;) {
    // Start everything that became ready at `now` (starting may complete zero-length tasks
    // only through the queues below, so this loop cannot recurse).
    while (!ready.empty()) {
      batch.swap(ready);
      ready.clear();
      std::sort(batch.begin(), batch.end());
      for (std::uint64_t gi : batch) start(gi, now);
    }
    const double t_fixed = fixed.empty() ? kInf : fixed.top().time;
    const double t_model = model.next_event_time();
    const double t = std::min(t_fixed, t_model);
    if (t == kInf) break;
    now = std::max(now, t);
    completed.clear();
    model.advance_to(t, completed);  // keeps the model's clock at `now` for begin()
    while (!fixed.empty() && fixed.top().time <= t) {
      completed.push_back(fixed.top().task);
      fixed.pop();
    }
    std::sort(completed.begin(), completed.end());
    for (std::uint64_t gi : completed) complete(gi, now);
  }
  if (finished != n)
    throw RuntimeFailure(
        "simulation stalled with " + std::to_string(n - finished) + " of " + std::to_string(n) +
        " tasks unfinished (dependency cycle through stream order, or a flow with no bandwidth)");

  for (std::size_t j = 0; j < jobs.size(); ++j) {
    result.jobs.push_back(breakdown(*jobs[j].graph, result.spans[j]));
    result.makespan_s = std::max(result.makespan_s, result.jobs.back().iteration_time_s);
  }
  return result;
}

}  // namespace toposweep::sim
