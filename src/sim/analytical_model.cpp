#include "toposweep/sim/analytical_model.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "toposweep/collective/plan.hpp"
#include "toposweep/topology/rail_relay.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::sim {

std::size_t AnalyticalModel::KeyHash::operator()(const Key& k) const {
  std::uint64_t h = std::bit_cast<std::uint64_t>(k.bytes);
  h ^= (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.shape)) << 16 | std::uint64_t{k.kind} << 8 |
        k.op | std::uint64_t{k.dedup.top_k} << 48) +
       0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return static_cast<std::size_t>(h * 0xbf58476d1ce4e5b9ull);
}

AnalyticalModel::AnalyticalModel(const Network& net, CommSettings settings, std::shared_ptr<TwinShared> twins)
    : net_(&net), settings_(std::move(settings)), memo_(net, std::move(twins)) {}

std::int32_t AnalyticalModel::shape_of(const std::vector<std::uint32_t>& ranks, const Placement& placement,
                                       std::uint32_t sharing) {
  GroupNodes g = group_nodes(ranks, placement);
  g.instances_per_node = sharing;
  std::vector<std::uint32_t> sig;
  shape_signature_into(g, sharing, sig);
  auto [it, fresh] = shape_ids_.emplace(std::move(sig), static_cast<std::int32_t>(shapes_.size()));
  if (fresh) shapes_.push_back(std::move(g));
  return it->second;
}

double AnalyticalModel::transfer_time(std::int32_t shape, double bytes) {
  if (paths_.size() < shapes_.size()) paths_.resize(shapes_.size());
  PathCost& p = paths_[static_cast<std::size_t>(shape)];
  if (!p.known) learn_path(shape, p);
  if (p.intra) return intra_node_transfer_time(bytes, *p.intra);
  const double network =
      p.sums.hops == 0 ? 0.0 : p.sums.latency_s + (bytes > 0 ? bytes / p.sums.narrowest_Bps : 0.0);
  if (!p.relay) return network;
  // The PXN relay over the source server's fabric, joined as a two-level collective's intra-node
  // part is: pipelined the slower of the two, sequential their sum.
  const double relay = intra_node_transfer_time(bytes, *p.relay);
  return settings_.hierarchical_pipelined ? std::max(network, relay) : network + relay;
}

void AnalyticalModel::learn_path(std::int32_t shape, PathCost& p) {
  const GroupNodes& g = shapes_[static_cast<std::size_t>(shape)];
  if (g.ranks != 2) throw RuntimeFailure("a transfer group must be {src, dst}");
  if (g.nodes.size() == 1) {
    p.intra = &net_->intra_link(g.nodes[0]);
  } else {
    const auto sums = memo_.path_sums(g.nodes[0], g.nodes[1]);
    if (!sums)
      throw BadInput("compute node " + std::to_string(g.nodes[1]) + " is unreachable from compute node " +
                         std::to_string(g.nodes[0]),
                     "topology");
    p.sums = *sums;
    if (g.locals.size() == 2 && needs_rail_relay(*net_, g.nodes[0], g.locals[0], g.nodes[1], g.locals[1]))
      p.relay = &net_->intra_link(g.nodes[0]);
  }
  p.known = true;
}

double AnalyticalModel::shape_time(const Task& t, std::int32_t shape) {
  const Key key{shape, static_cast<std::uint8_t>(t.kind), static_cast<std::uint8_t>(t.op), t.bytes, t.dedup};
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  const GroupNodes& g = shapes_[static_cast<std::size_t>(shape)];
  double time = 0;
  if (t.kind == TaskKind::Transfer) {
    time = transfer_time(shape, t.bytes);
  } else if (g.nodes.size() == 1) {
    time = intra_node_collective_time(t.op, g.ranks, t.bytes, net_->intra_link(g.nodes[0]));
  } else {
    ++plans_computed_;
    time = plan_collective(node_collective_request(t, g), settings_.algorithm,
                           collective_plan_options(settings_, false), memo_)
               .time_s;
  }
  cache_.emplace(key, time);
  return time;
}

double AnalyticalModel::operation_time(const CommTask& comm) {
  auto& memo = task_time_[comm.graph];
  if (memo.size() != comm.graph->tasks.size())
    memo.assign(comm.graph->tasks.size(), std::numeric_limits<double>::quiet_NaN());
  double& known = memo[comm.id];
  if (std::isnan(known)) known = compute_operation_time(comm);
  return known;
}

double AnalyticalModel::compute_operation_time(const CommTask& comm) {
  const Task& t = comm.task();
  const GroupSet& gs = comm.graph->group_sets.at(t.group_set);
  if (gs.groups.empty()) return 0.0;
  // Concurrent instances of a collective share their nodes' network links (the transfers of a
  // set are bounded by injection below).
  auto sharing_of = [&] {
    return t.kind == TaskKind::Collective && gs.groups.size() > 1
               ? instances_on_first_node(gs, *comm.placement)
               : 1u;
  };
  // Mixed servers: instances on different fabrics differ, so every instance is timed.
  if (settings_.analytical_all_instances || !net_->uniform_servers()) {
    const std::uint32_t sharing = sharing_of();
    // Irregular networks: time every instance, the slowest wins.
    double worst = 0;
    for (const auto& ranks : gs.groups)
      worst = std::max(worst, shape_time(t, shape_of(ranks, *comm.placement, sharing)));
    return worst;
  }
  if (t.kind == TaskKind::Transfer && gs.groups.size() > 1) {
    TransferSet& ts = transfer_set(comm);
    for (const auto& [bytes, worst] : ts.worst_by_bytes)
      if (bytes == t.bytes) return worst;
    double worst = ts.injection_s_per_byte * t.bytes;
    for (std::int32_t shape : ts.shapes) worst = std::max(worst, shape_time(t, shape));
    ts.worst_by_bytes.emplace_back(t.bytes, worst);
    return worst;
  }
  // Instances of one task run in lockstep on symmetric placements: time the first.
  auto& shapes = first_shape_[comm.graph];
  if (shapes.size() != comm.graph->group_sets.size()) shapes.assign(comm.graph->group_sets.size(), -1);
  std::int32_t& shape = shapes[t.group_set];
  if (shape < 0) shape = shape_of(gs.groups[0], *comm.placement, sharing_of());
  return shape_time(t, shape);
}

AnalyticalModel::TransferSet& AnalyticalModel::transfer_set(const CommTask& comm) {
  const Task& t = comm.task();
  const auto key = std::make_pair(comm.graph, t.group_set);
  auto it = transfer_sets_.find(key);
  if (it != transfer_sets_.end()) return it->second;
  const GroupSet& gs = comm.graph->group_sets[t.group_set];
  const Placement& placement = *comm.placement;
  TransferSet ts;
  for (std::size_t i : sampled_transfer_groups(gs)) ts.shapes.push_back(shape_of(gs.groups[i], placement, 1));
  std::vector<std::uint32_t> out(net_->compute_count(), 0), in(net_->compute_count(), 0);
  count_transfer_endpoints(gs, placement, out, in);
  for (VertexId v = 0; v < net_->compute_count(); ++v) {
    if (!out[v] && !in[v]) continue;
    double egress = 0, ingress = 0;
    for (ArcId a : net_->out_arcs(v)) egress += net_->arc(a).bandwidth_Bps;
    for (ArcId a : net_->in_arcs(v)) ingress += net_->arc(a).bandwidth_Bps;
    if (out[v]) ts.injection_s_per_byte = std::max(ts.injection_s_per_byte, out[v] / egress);
    if (in[v]) ts.injection_s_per_byte = std::max(ts.injection_s_per_byte, in[v] / ingress);
  }
  return transfer_sets_.emplace(key, std::move(ts)).first->second;
}

std::optional<double> AnalyticalModel::begin(const CommTask& comm, double, std::uint64_t) {
  return operation_time(comm) * comm.task().repeat;
}

void AnalyticalModel::forget_graph(const TaskGraph* graph) {
  first_shape_.erase(graph);
  task_time_.erase(graph);
  std::erase_if(transfer_sets_, [&](const auto& kv) { return kv.first.first == graph; });
  prepared_.erase(graph);
}

AnalyticalModel::Prepared& AnalyticalModel::prepared(const TaskGraph& graph, std::uint32_t gpus_per_node) {
  auto it = prepared_.find(&graph);
  // A different placement or a different graph at a recycled address: start that graph over.
  if (it != prepared_.end() &&
      (it->second.gpus_per_node != gpus_per_node || it->second.graph.task_count() != graph.tasks.size())) {
    forget_graph(&graph);
    it = prepared_.end();
  }
  if (it == prepared_.end()) {
    Prepared p{gpus_per_node, PreparedGraph(graph), std::vector<double>(graph.tasks.size()), false, {}, {}};
    const Placement placement = rank_order_placement(graph.gpus, gpus_per_node);
    for (TaskId i = 0; i < graph.tasks.size(); ++i) {
      const Task& t = graph.tasks[i];
      // The same products run_engine forms, so the times agree bit for bit.
      p.durations[i] = t.kind == TaskKind::Compute
                           ? t.duration_s * t.repeat
                           : operation_time(CommTask{0, &graph, i, &placement}) * t.repeat;
    }
    it = prepared_.emplace(&graph, std::move(p)).first;
  }
  Prepared& p = it->second;
  if (!p.played) {
    p.times = p.graph.run(graph, p.durations, p.spans);
    p.played = true;
  }
  return p;
}

JobTimes AnalyticalModel::play(const TaskGraph& graph, std::uint32_t gpus_per_node,
                               std::vector<TaskSpan>& spans) {
  const Prepared& p = prepared(graph, gpus_per_node);
  spans.assign(p.spans.begin(), p.spans.end());
  return p.times;
}

const JobTimes& AnalyticalModel::play_times(const CommLayout& layout) {
  if (auto it = layout_times_.find(&layout); it != layout_times_.end()) return it->second;
  if (layout.all_instances() != (settings_.analytical_all_instances || !net_->uniform_servers()))
    throw RuntimeFailure("a communication layout played with other instance settings than it was made for");
  // The layout's shapes as this model's shape ids (the ids key the cache of plans).
  layout_shapes_.resize(layout.signatures().size());
  for (std::size_t s = 0; s < layout_shapes_.size(); ++s) {
    const auto& sig = layout.signatures()[s];
    auto it = shape_ids_.find(sig);  // a signature is copied only when it is new
    if (it == shape_ids_.end()) {
      it = shape_ids_.emplace(sig, static_cast<std::int32_t>(shapes_.size())).first;
      shapes_.push_back(layout.shapes()[s]);
    }
    layout_shapes_[s] = it->second;
  }
  // Each distinct operation's time: what compute_operation_time gives, with the same maxima in
  // the same order.
  const auto& refs = layout.shape_refs();
  op_times_.resize(layout.ops().size());
  for (std::size_t o = 0; o < op_times_.size(); ++o) {
    const CommLayout::Op& op = layout.ops()[o];
    Task t;
    t.kind = op.kind;
    t.op = op.op;
    t.bytes = op.bytes;
    t.dedup = op.dedup;
    double worst = 0;
    if (op.mode == CommLayout::Mode::TransferSet) {
      double injection = 0;
      for (const CommLayout::NodeCount& c : layout.injections()[op.injection]) {
        double egress = 0, ingress = 0;
        for (ArcId a : net_->out_arcs(c.node)) egress += net_->arc(a).bandwidth_Bps;
        for (ArcId a : net_->in_arcs(c.node)) ingress += net_->arc(a).bandwidth_Bps;
        if (c.out) injection = std::max(injection, c.out / egress);
        if (c.in) injection = std::max(injection, c.in / ingress);
      }
      worst = injection * t.bytes;
    }
    if (op.kind == TaskKind::Transfer) {
      // A transfer's time is its path's (memoised per shape, no hashing per sampled instance).
      for (std::uint32_t k = op.first; k < op.first + op.count; ++k)
        worst = std::max(worst, transfer_time(layout_shapes_[refs[k]], t.bytes));
    } else {
      for (std::uint32_t k = op.first; k < op.first + op.count; ++k)
        worst = std::max(worst, shape_time(t, layout_shapes_[refs[k]]));
    }
    op_times_[o] = worst;
  }
  const TaskGraph& graph = layout.graph();
  // The same products run_engine forms, so the times agree bit for bit.
  PreparedGraph& prepared = layout.prepared();
  std::vector<double>& durations = prepared.durations();
  durations.assign(layout.compute_durations().begin(), layout.compute_durations().end());
  for (const CommLayout::CommTaskRef& c : layout.comm_tasks()) durations[c.task] = op_times_[c.op] * c.repeat;
  return layout_times_.emplace(&layout, prepared.run_scratch(graph)).first->second;
}

double AnalyticalModel::next_event_time() {
  return std::numeric_limits<double>::infinity();
}

}  // namespace toposweep::sim
