#include "toposweep/sim/flow_network.hpp"

#include <algorithm>
#include <functional>

#include "toposweep/util/error.hpp"

namespace toposweep::sim {
namespace {

std::vector<double> capacities_of(const Network& net) {
  std::vector<double> c(net.arc_count());
  for (ArcId a = 0; a < net.arc_count(); ++a) c[a] = net.arc(a).bandwidth_Bps;
  return c;
}

// Flows whose finish times differ by less than this are treated as finishing together, so
// symmetric flows that differ only by rounding share one event.
double finish_tolerance(double t) { return 1e-15 + 1e-10 * t; }

}  // namespace

FlowNetwork::FlowNetwork(std::vector<double> capacities_Bps) : capacity_(std::move(capacities_Bps)) {
  for (double c : capacity_)
    if (!(c > 0)) throw RuntimeFailure("FlowNetwork: an arc has no capacity");
  const std::size_t n = capacity_.size();
  on_arc_.resize(n);
  arc_bytes_.assign(n, 0.0);
  arc_weight_.assign(n, 0.0);
  arc_mark_.assign(n, 0);
  arc_unfrozen_.assign(n, 0.0);
  arc_remaining_.assign(n, 0.0);
}

FlowNetwork::FlowNetwork(const Network& net) : FlowNetwork(capacities_of(net)) {}

FlowId FlowNetwork::start(std::span<const ArcId> path, double bytes, std::uint64_t tag, double weight) {
  if (!(weight > 0)) throw RuntimeFailure("FlowNetwork: a flow needs a positive weight");
  FlowId id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
    flow_mark_.push_back(0);
    flow_frozen_.push_back(0);
    old_rate_.push_back(0);
  }
  FlowState& f = flows_[id];
  f.path.assign(path.begin(), path.end());
  f.pos.resize(path.size());
  f.bytes = std::max(0.0, bytes);
  f.remaining = f.bytes;
  f.rate = 0;
  old_rate_[id] = -1;  // forces a first schedule
  f.weight = weight;
  f.since = now_;
  f.tag = tag;
  f.active = true;
  ++f.version;
  ++active_;
  if (f.path.empty() || f.remaining <= 0) {
    // Nothing to share: finishes now, holding no arc.
    f.path.clear();
    finish_heap_.push({now_, id, f.version});
    return id;
  }
  for (std::size_t i = 0; i < f.path.size(); ++i) {
    const ArcId a = f.path[i];
    if (a >= capacity_.size()) throw RuntimeFailure("FlowNetwork: path uses an unknown arc");
    f.pos[i] = static_cast<std::uint32_t>(on_arc_[a].size());
    on_arc_[a].push_back({id, static_cast<std::uint32_t>(i)});
    arc_weight_[a] += weight;
  }
  dirty_flows_.push_back(id);
  return id;
}

void FlowNetwork::settle(FlowState& f) {
  f.remaining = std::max(0.0, f.remaining - f.rate * (now_ - f.since));
  f.since = now_;
}

void FlowNetwork::schedule(FlowId id) {
  FlowState& f = flows_[id];
  ++f.version;
  const double t = f.rate > 0 ? f.since + f.remaining / f.rate : kNever;
  if (t < kNever) finish_heap_.push({t, id, f.version});
}

void FlowNetwork::detach(FlowId id) {
  FlowState& f = flows_[id];
  for (std::size_t i = 0; i < f.path.size(); ++i) {
    const ArcId a = f.path[i];
    auto& list = on_arc_[a];
    const std::uint32_t p = f.pos[i];
    const LinkEntry moved = list.back();
    list[p] = moved;
    flows_[moved.flow].pos[moved.hop] = p;
    list.pop_back();
    arc_weight_[a] = list.empty() ? 0.0 : arc_weight_[a] - f.weight;
    arc_bytes_[a] += f.bytes;
    dirty_arcs_.push_back(a);
  }
  f.active = false;
  ++f.version;
  --active_;
  free_ids_.push_back(id);
}

void FlowNetwork::recompute() {
  if (dirty_flows_.empty() && dirty_arcs_.empty()) return;
  ++recomputations_;
  ++epoch_;
  comp_arcs_.clear();
  comp_flows_.clear();
  // The component of flows linked (through shared arcs) to what changed; rates elsewhere stay.
  auto visit_arc = [&](ArcId a) {
    if (arc_mark_[a] == epoch_) return;
    arc_mark_[a] = epoch_;
    comp_arcs_.push_back(a);
  };
  for (FlowId id : dirty_flows_)
    if (flows_[id].active)
      for (ArcId a : flows_[id].path) visit_arc(a);
  for (ArcId a : dirty_arcs_) visit_arc(a);
  dirty_flows_.clear();
  dirty_arcs_.clear();
  for (std::size_t i = 0; i < comp_arcs_.size(); ++i) {
    for (const LinkEntry& e : on_arc_[comp_arcs_[i]]) {
      if (flow_mark_[e.flow] == epoch_) continue;
      flow_mark_[e.flow] = epoch_;
      comp_flows_.push_back(e.flow);
      for (ArcId b : flows_[e.flow].path) visit_arc(b);
    }
  }
  for (FlowId id : comp_flows_) {
    settle(flows_[id]);
    old_rate_[id] = flows_[id].rate;
  }

  // Progressive filling: repeatedly saturate the arc offering the smallest fair share. Freezing
  // flows at the current minimum share can only raise the share other arcs offer, so heap keys
  // are lower bounds: a popped arc whose share has grown is pushed back instead of updating
  // the heap on every change (one push per arc instead of one per flow-hop).
  share_heap_.clear();
  for (ArcId a : comp_arcs_) {
    arc_remaining_[a] = capacity_[a];
    const double w = arc_weight_[a];
    arc_unfrozen_[a] = w;
    if (w > 0) share_heap_.push_back({capacity_[a] / w, a});
  }
  std::make_heap(share_heap_.begin(), share_heap_.end(), std::greater<>{});
  while (!share_heap_.empty()) {
    std::pop_heap(share_heap_.begin(), share_heap_.end(), std::greater<>{});
    const ShareEntry top = share_heap_.back();
    share_heap_.pop_back();
    const ArcId a = top.arc;
    if (!(arc_unfrozen_[a] > 0)) continue;
    const double share = std::max(0.0, arc_remaining_[a] / arc_unfrozen_[a]);  // per unit of weight
    if (share > top.share) {
      share_heap_.push_back({share, a});
      std::push_heap(share_heap_.begin(), share_heap_.end(), std::greater<>{});
      continue;
    }
    for (const LinkEntry& e : on_arc_[a]) {
      if (flow_frozen_[e.flow] == epoch_) continue;
      flow_frozen_[e.flow] = epoch_;
      FlowState& f = flows_[e.flow];
      f.rate = share * f.weight;
      ++rate_assignments_;
      for (ArcId b : f.path) {
        arc_remaining_[b] -= f.rate;
        arc_unfrozen_[b] -= f.weight;
        // Weights are small integers in practice, so this reaches exactly zero; guard anyway.
        if (arc_unfrozen_[b] < 1e-9) arc_unfrozen_[b] = 0;
      }
    }
    arc_unfrozen_[a] = 0;
  }
  // A flow whose rate did not change keeps its finish event (settle() moved `since` and
  // `remaining` consistently), which saves most heap traffic in big components.
  for (FlowId id : comp_flows_) {
    const FlowState& f = flows_[id];
    if (f.rate != old_rate_[id] || f.rate <= 0) schedule(id);
  }
  if (record_) {
    for (ArcId a : comp_arcs_) {
      double load = 0;
      for (const LinkEntry& e : on_arc_[a]) load += flows_[e.flow].rate;
      samples_.push_back({now_, a, load});
    }
  }
}

double FlowNetwork::next_finish_time() {
  recompute();
  while (!finish_heap_.empty()) {
    const FinishEvent& top = finish_heap_.top();
    const FlowState& f = flows_[top.flow];
    if (f.active && f.version == top.version) return top.time;
    finish_heap_.pop();
  }
  return kNever;
}

void FlowNetwork::advance_to(double t, std::vector<FinishedFlow>& finished) {
  recompute();
  if (t < now_) throw RuntimeFailure("FlowNetwork: time cannot go backwards");
  now_ = t;
  const double limit = t + finish_tolerance(t);
  while (!finish_heap_.empty() && finish_heap_.top().time <= limit) {
    const FinishEvent ev = finish_heap_.top();
    finish_heap_.pop();
    FlowState& f = flows_[ev.flow];
    if (!f.active || f.version != ev.version) continue;
    finished.push_back({ev.flow, f.tag});
    detach(ev.flow);
  }
}

double FlowNetwork::rate(FlowId id) {
  recompute();
  return flows_[id].rate;
}

}  // namespace toposweep::sim
