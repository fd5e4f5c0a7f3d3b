#include "toposweep/sim/comm_layout.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "toposweep/util/error.hpp"

namespace toposweep::sim {

CommLayout::CommLayout(const TaskGraph& graph, std::uint32_t gpus_per_node, bool all_instances)
    : graph_(&graph),
      gpus_per_node_(gpus_per_node),
      all_instances_(all_instances),
      compute_durations_(graph.tasks.size(), 0.0),
      prepared_(graph) {
  const Placement placement = rank_order_placement(graph.gpus, gpus_per_node);
  VertexId nodes = 0;
  for (VertexId v : placement.node_of_gpu) nodes = std::max(nodes, v + 1);
  std::vector<std::uint32_t> out, in;  // transfer sets' per-node counts (scratch)
  std::map<std::vector<std::uint32_t>, std::uint32_t> shape_ids;
  GroupNodes g;                           // scratch: the group's nodes
  std::vector<std::uint32_t> count, sig;  // scratch: its members per node, its signature
  auto shape_of = [&](const std::vector<std::uint32_t>& ranks, std::uint32_t sharing) {
    group_nodes_into(ranks, placement, g, count);
    g.instances_per_node = sharing;
    // A group inside one node is timed over that node's fabric, the same on every node: one
    // shape for all (so a stage's tensor-parallel collectives share their times with the other
    // stages'). Timing every instance (which mixed servers, whose fabrics differ, need) keeps
    // the node.
    if (g.nodes.size() == 1 && !all_instances) g.nodes[0] = 0;
    shape_signature_into(g, sharing, sig);
    auto it = shape_ids.find(sig);  // copied only when new
    if (it == shape_ids.end()) {
      it = shape_ids.emplace(sig, static_cast<std::uint32_t>(shapes_.size())).first;
      signatures_.push_back(sig);
      shapes_.push_back(g);
    }
    return it->second;
  };
  // The timed shapes of a group set as a task of `kind` sees it (what
  // AnalyticalModel::compute_operation_time times), once per (group set, kind).
  struct Timed {
    Mode mode;
    std::uint32_t first, count, injection;
  };
  std::map<std::pair<std::uint32_t, TaskKind>, Timed> timed;
  std::map<std::vector<std::uint32_t>, Timed> alike;
  auto timed_of = [&](std::uint32_t set, TaskKind kind) {
    const auto key = std::make_pair(set, kind);
    if (auto it = timed.find(key); it != timed.end()) return it->second;
    const GroupSet& gs = graph.group_sets.at(set);
    Timed t{Mode::Slowest, static_cast<std::uint32_t>(shape_refs_.size()), 0, 0};
    if (gs.groups.empty()) {
      t.mode = Mode::Idle;
    } else {
      const std::uint32_t sharing =
          kind == TaskKind::Collective && gs.groups.size() > 1 ? instances_on_first_node(gs, placement) : 1u;
      if (all_instances) {
        for (const auto& ranks : gs.groups) shape_refs_.push_back(shape_of(ranks, sharing));
      } else if (kind == TaskKind::Transfer && gs.groups.size() > 1) {
        t.mode = Mode::TransferSet;
        for (std::size_t i : sampled_transfer_groups(gs)) shape_refs_.push_back(shape_of(gs.groups[i], 1));
        out.assign(nodes, 0);
        in.assign(nodes, 0);
        count_transfer_endpoints(gs, placement, out, in);
        t.injection = static_cast<std::uint32_t>(injections_.size());
        auto& list = injections_.emplace_back();
        for (VertexId v = 0; v < nodes; ++v)
          if (out[v] || in[v]) list.push_back({v, out[v], in[v]});
      } else {
        shape_refs_.push_back(shape_of(gs.groups[0], sharing));
      }
    }
    t.count = static_cast<std::uint32_t>(shape_refs_.size()) - t.first;
    // Group sets timed alike (the same shapes, the same per-node counts) share one entry.
    std::vector<std::uint32_t> content{static_cast<std::uint32_t>(t.mode)};
    content.insert(content.end(), shape_refs_.begin() + t.first, shape_refs_.end());
    if (t.mode == Mode::TransferSet)
      for (const NodeCount& c : injections_[t.injection])
        content.insert(content.end(), {c.node, c.out, c.in});
    auto [same, fresh] = alike.emplace(std::move(content), t);
    if (!fresh) {
      shape_refs_.resize(t.first);
      if (t.mode == Mode::TransferSet) injections_.pop_back();
    }
    timed.emplace(key, same->second);
    return same->second;
  };
  // A Timed's shape range is its own (Idle: empty), so (mode, first, count) names it.
  std::map<std::tuple<Mode, std::uint32_t, std::uint32_t, TaskKind, CollectiveOp, double, TokenDedup>,
           std::uint32_t>
      op_ids;
  for (TaskId i = 0; i < graph.tasks.size(); ++i) {
    const Task& task = graph.tasks[i];
    if (task.kind == TaskKind::Compute) {
      compute_durations_[i] = task.duration_s * task.repeat;
      continue;
    }
    const Timed t = timed_of(task.group_set, task.kind);
    const auto key = std::make_tuple(t.mode, t.first, t.count, task.kind, task.op, task.bytes, task.dedup);
    auto [it, fresh] = op_ids.emplace(key, static_cast<std::uint32_t>(ops_.size()));
    if (fresh)
      ops_.push_back(Op{t.mode, task.kind, task.op, task.bytes, task.dedup, t.first, t.count, t.injection});
    comm_tasks_.push_back({i, it->second, task.repeat});
  }
}

}  // namespace toposweep::sim
