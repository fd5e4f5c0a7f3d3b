#include "toposweep/sim/trace.hpp"

#include <algorithm>
#include <string>
#include <unordered_set>

namespace toposweep::sim {
namespace {

std::string task_name(const TaskGraph& g, const Task& t) {
  if (t.label < g.labels.size() && !g.labels[t.label].empty()) return g.labels[t.label];
  switch (t.kind) {
    case TaskKind::Compute:
      return t.phase == TaskPhase::Forward        ? "forward"
             : t.phase == TaskPhase::Backward     ? "backward"
             : t.phase == TaskPhase::WeightUpdate ? "update"
                                                  : "compute";
    case TaskKind::Collective:
      return std::string(collective_op_name(t.op));
    case TaskKind::Transfer:
      return "transfer";
  }
  return "task";
}

}  // namespace

nlohmann::json chrome_trace(const Network& net, std::span<const Job> jobs, const SimResult& result,
                            std::size_t max_links) {
  using nlohmann::json;
  json events = json::array();
  constexpr double us = 1e6;  // trace timestamps are microseconds
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const TaskGraph& g = *jobs[j].graph;
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", j}, {"args", {{"name", jobs[j].name}}}});
    for (std::uint32_t s = 0; s < g.stream_count(); ++s)
      events.push_back({{"ph", "M"},
                        {"name", "thread_name"},
                        {"pid", j},
                        {"tid", s},
                        {"args", {{"name", g.stream_names[s]}}}});
    const auto& spans = result.engine.spans.at(j);
    for (std::size_t i = 0; i < g.tasks.size(); ++i) {
      const Task& t = g.tasks[i];
      // "task": the task id, a Chakra export's node id (matching another simulator's timeline).
      json args = {{"task", i}, {"stage", t.stage}, {"microbatch", t.microbatch}, {"repeat", t.repeat}};
      if (t.layer != kNoLayer) args["layer"] = t.layer;
      if (t.kind != TaskKind::Compute) {
        args["bytes"] = t.bytes;
        args["purpose"] = std::string(comm_purpose_name(t.purpose));
        args["instances"] = g.group_sets.at(t.group_set).groups.size();
      }
      events.push_back({{"ph", "X"},
                        {"name", task_name(g, t)},
                        {"cat", t.kind == TaskKind::Compute ? "compute" : "comm"},
                        {"pid", j},
                        {"tid", t.stream},
                        {"ts", spans[i].start_s * us},
                        {"dur", (spans[i].end_s - spans[i].start_s) * us},
                        {"args", std::move(args)}});
    }
  }
  if (!result.links.empty()) {
    std::vector<LinkLoad> busy;
    for (const LinkLoad& l : result.links)
      if (l.bytes > 0) busy.push_back(l);
    std::sort(busy.begin(), busy.end(), [](const LinkLoad& a, const LinkLoad& b) {
      return a.bytes != b.bytes ? a.bytes > b.bytes : a.arc < b.arc;
    });
    if (busy.size() > max_links) busy.resize(max_links);
    std::unordered_set<ArcId> shown;
    const std::size_t pid = jobs.size();
    events.push_back(
        {{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"args", {{"name", "links (Gbps)"}}}});
    for (const LinkLoad& l : busy) shown.insert(l.arc);
    auto link_name = [&](ArcId a) {
      return "link " + std::to_string(net.arc(a).src) + "->" + std::to_string(net.arc(a).dst) + " #" +
             std::to_string(a);
    };
    for (const LinkSample& s : result.link_samples)
      if (shown.count(s.arc))
        events.push_back({{"ph", "C"},
                          {"name", link_name(s.arc)},
                          {"pid", pid},
                          {"ts", s.time_s * us},
                          {"args", {{"Gbps", s.load_Bps * 8 / 1e9}}}});
  }
  return json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
}

}  // namespace toposweep::sim
