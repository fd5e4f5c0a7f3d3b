#include "toposweep/sim/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "toposweep/util/error.hpp"

namespace toposweep::sim {
namespace {

std::vector<double> capacities_of(const Network& net) {
  std::vector<double> c(net.arc_count());
  for (ArcId a = 0; a < net.arc_count(); ++a) c[a] = net.arc(a).bandwidth_Bps;
  return c;
}

// Checkpoints of a logged filling start this many flows before its end.
constexpr std::size_t kFirstCheckpointGap = 16;

// Arcs left unreached by the component search below which it looks at them directly.
constexpr std::size_t kShortcutArcs = 16;

// Flows whose finish times differ by less than this are treated as finishing together, so
// symmetric flows that differ only by rounding share one event.
double finish_tolerance(double t) {
  return 1e-15 + 1e-10 * t;
}

}  // namespace

FlowNetwork::FlowNetwork(std::vector<double> capacities_Bps) {
  arcs_.resize(capacities_Bps.size());
  for (std::size_t a = 0; a < arcs_.size(); ++a) {
    if (!(capacities_Bps[a] > 0)) throw RuntimeFailure("FlowNetwork: an arc has no capacity");
    arcs_[a].capacity = capacities_Bps[a];
  }
  on_arc_.resize(arcs_.size());
  arc_bytes_.assign(arcs_.size(), 0.0);
}

FlowNetwork::FlowNetwork(const Network& net) : FlowNetwork(capacities_of(net)) {}

FlowId FlowNetwork::start(std::span<const ArcId> path, double bytes, std::uint64_t tag, double weight) {
  if (!(weight > 0)) throw RuntimeFailure("FlowNetwork: a flow needs a positive weight");
  for (ArcId a : path)
    if (a >= arcs_.size()) throw RuntimeFailure("FlowNetwork: path uses an unknown arc");
  if (integer_weights_ && (weight != std::floor(weight) || weight > 1e15)) {
    // Unfrozen weights would no longer subtract exactly: no filling is resumed from now on.
    integer_weights_ = false;
    for (std::uint32_t l = 0; l < logs_.size(); ++l) invalidate_log(l);
  }
  FlowId id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
    info_.emplace_back();
    flow_seen_.push_back(0);
    fill_pos_.push_back(0);
    flow_frozen_.push_back(0);
  }
  Flow& f = flows_[id];
  FlowInfo& info = info_[id];
  info.bytes = std::max(0.0, bytes);
  info.tag = tag;
  info.active = true;
  info.log = kNoLog;
  ++info.version;
  f.remaining = info.bytes;
  f.weight = weight;
  f.since = now_;
  ++active_;
  if (path.empty() || f.remaining <= 0) {
    // Nothing to share: finishes now, holding no arc.
    f.rate = 0;
    f.hops = 0;
    finish_heap_.push({now_, id, info.version});
    return id;
  }
  f.rate = -1;  // no rate yet: the next recomputation schedules the flow whatever it gets
  const auto hops = static_cast<std::uint32_t>(path.size());
  if (hops > info.hop_capacity) {
    // This id's pool slots are too short: take fresh ones at the end (the old ones stay unused;
    // paths are short and ids are reused, so the pool stays small).
    f.first_hop = static_cast<std::uint32_t>(hop_arc_.size());
    info.hop_capacity = hops;
    hop_arc_.resize(hop_arc_.size() + hops);
    hop_pos_.resize(hop_arc_.size());
  }
  f.hops = hops;
  info.linked_pos = static_cast<std::uint32_t>(linked_.size());
  linked_.push_back(id);
  for (std::uint32_t i = 0; i < hops; ++i) {
    const ArcId a = path[i];
    // The component of a logged filling changes: that filling no longer describes it.
    if (arcs_[a].log != kNoLog) invalidate_log(arcs_[a].log);
    hop_arc_[f.first_hop + i] = a;
    hop_pos_[f.first_hop + i] = static_cast<std::uint32_t>(on_arc_[a].size());
    if (on_arc_[a].empty()) ++busy_arcs_;
    on_arc_[a].push_back(id);
    arcs_[a].weight += weight;
  }
  dirty_flows_.push_back(id);
  return id;
}

void FlowNetwork::schedule_changed() {
  // A flow whose rate did not change keeps its finish event (settle() moved `since` and
  // `remaining` consistently), which saves most heap traffic in big components.
  for (std::size_t i = 0; i < comp_flows_.size(); ++i) {
    const double rate = flows_[comp_flows_[i]].rate;
    if (rate != comp_old_rate_[i] || rate <= 0) schedule(comp_flows_[i]);
  }
}

void FlowNetwork::schedule(FlowId id) {
  const Flow& f = flows_[id];
  const std::uint32_t version = ++info_[id].version;
  const double t = f.rate > 0 ? f.since + f.remaining / f.rate : kNever;
  if (t < kNever) finish_heap_.push({t, id, version});
}

void FlowNetwork::detach(FlowId id) {
  Flow& f = flows_[id];
  FlowInfo& info = info_[id];
  Log* log = f.hops > 0 && info.log != kNoLog ? &logs_[info.log] : nullptr;
  for (std::uint32_t i = 0; i < f.hops; ++i) {
    const ArcId a = hop_arc_[f.first_hop + i];
    auto& list = on_arc_[a];
    const std::uint32_t p = hop_pos_[f.first_hop + i];
    const FlowId moved = list.back();
    list[p] = moved;
    if (moved != id) {
      // The moved flow's hop on this arc is the one that pointed at the list's last slot.
      const auto last = static_cast<std::uint32_t>(list.size() - 1);
      const Flow& m = flows_[moved];
      for (std::uint32_t j = m.first_hop; j < m.first_hop + m.hops; ++j)
        if (hop_arc_[j] == a && hop_pos_[j] == last) {
          hop_pos_[j] = p;
          break;
        }
    }
    list.pop_back();
    if (list.empty()) {
      --busy_arcs_;
      if (log) --log->busy;
    }
    arcs_[a].weight = list.empty() ? 0.0 : arcs_[a].weight - f.weight;
    if (log) {
      if (arcs_[a].dropped == 0) log->dropped.push_back(arcs_[a].slot);
      arcs_[a].dropped += f.weight;
      --log->arc_alive[arcs_[a].slot];
    }
    arc_bytes_[a] += info.bytes;
    dirty_arcs_.push_back(a);
  }
  if (f.hops > 0) {
    if (log) {
      const std::uint32_t l = info.log;
      log->cut = std::min<std::size_t>(log->cut, fill_pos_[id]);
      log->dead[info.local] = 1;
      if (log->certified) log->died.push_back(info.local);
      info.log = kNoLog;
      if (--log->active == 0) {
        invalidate_log(l);
      } else if (!log->pending) {
        log->pending = true;
        pending_logs_.push_back(l);
      }
    }
    const FlowId last = linked_.back();
    linked_[info.linked_pos] = last;
    info_[last].linked_pos = info.linked_pos;
    linked_.pop_back();
    f.hops = 0;  // holds no arc any more
  }
  info.active = false;
  ++info.version;
  --active_;
  free_ids_.push_back(id);
}

void FlowNetwork::collect_component() {
  comp_arcs_.clear();
  comp_flows_.clear();
  comp_old_rate_.clear();
  piece_arcs_.clear();
  piece_flows_.clear();
  // The components of flows linked (through shared arcs) to what changed; rates elsewhere stay.
  // Each flow is settled when first reached. Unless link loads are recorded, each component is
  // searched to the end before the next starts from the next seed, so that it can be filled
  // and logged on its own (a piece: comp_arcs_ / comp_flows_ from piece_arcs_[k] /
  // piece_flows_[k] on); when recording, all seeds start one search (samples follow the order
  // arcs are reached) and the whole is one piece.
  std::size_t busy_reached = 0;  // arcs reached that carry flows
  auto visit_arc = [&](ArcId a) {
    Arc& arc = arcs_[a];
    if (arc.seen == epoch_) return;
    arc.seen = epoch_;
    comp_arcs_.push_back(a);
    // Positive weight means flows cross the arc (an arc whose weight rounded to zero would
    // only stop the whole-network shortcut below from applying).
    if (arc.weight > 0) ++busy_reached;
  };
  auto visit_flow = [&](FlowId id) {
    flow_seen_[id] = epoch_;
    settle_into_component(id);
  };
  // A flow not reached yet that crosses a reached arc belongs to the component too.
  auto reach_through = [&](FlowId id) {
    for (ArcId b : path_of(flows_[id]))
      if (arcs_[b].seen == epoch_) {
        visit_flow(id);
        for (ArcId c : path_of(flows_[id])) visit_arc(c);
        return true;
      }
    return false;
  };
  std::size_t last_shortcut = busy_arcs_;
  std::size_t scanned = 0;  // list entries looked at so far
  // Searches on from the reached arcs at index `from` on.
  auto search = [&](std::size_t from) {
    for (std::size_t i = from; i < comp_arcs_.size() && busy_reached < busy_arcs_; ++i) {
      scanned += on_arc_[comp_arcs_[i]].size();
      for (FlowId id : on_arc_[comp_arcs_[i]]) {
        if (flow_seen_[id] == epoch_) continue;
        visit_flow(id);
        for (ArcId b : path_of(flows_[id])) visit_arc(b);
      }
      // Breadth-first order can take most of a big component before it reaches its last few
      // arcs. When only a few busy arcs are unreached, look at them directly: one of their
      // flows crossing a reached arc brings it in (earlier components were searched to the
      // end, so the arc joins this one). Only once the search has done more work than a pass
      // over all arcs costs, and not while recording link loads.
      const std::size_t unreached = busy_arcs_ - busy_reached;
      if (!record_ && unreached <= kShortcutArcs && unreached != last_shortcut && scanned >= arcs_.size()) {
        last_shortcut = unreached;
        for (ArcId x = 0; x < arcs_.size() && busy_reached < busy_arcs_; ++x)
          if (arcs_[x].seen != epoch_ && !on_arc_[x].empty())
            for (FlowId id : on_arc_[x])
              if (reach_through(id)) break;
      }
    }
    if (busy_reached == busy_arcs_ && !whole_) {
      // Every arc that carries flows is reached (often so in big components): so is every
      // active flow, and those not reached yet belong to this component. Take them in one pass
      // instead of walking arcs and paths: over the ids when most are in use (sequential),
      // else over the list of flows on the network.
      whole_ = true;
      if (2 * linked_.size() >= flows_.size()) {
        for (FlowId id = 0; id < flows_.size(); ++id)
          if (flow_seen_[id] != epoch_ && flows_[id].hops > 0) visit_flow(id);
      } else {
        for (FlowId id : linked_)
          if (flow_seen_[id] != epoch_) visit_flow(id);
      }
    }
  };
  auto open_piece = [&] {
    piece_arcs_.push_back(comp_arcs_.size());
    piece_flows_.push_back(comp_flows_.size());
  };
  whole_ = false;
  if (record_) {
    open_piece();
    for (FlowId id : dirty_flows_)
      if (info_[id].active)
        for (ArcId a : path_of(flows_[id])) visit_arc(a);
    for (ArcId a : dirty_arcs_) visit_arc(a);
    search(0);
  } else {
    for (FlowId id : dirty_flows_) {
      const Flow& f = flows_[id];
      // A flow's arcs are all in one component: seen means searched already.
      if (!info_[id].active || f.hops == 0 || arcs_[hop_arc_[f.first_hop]].seen == epoch_) continue;
      open_piece();
      const std::size_t from = comp_arcs_.size();
      for (ArcId a : path_of(f)) visit_arc(a);
      search(from);
    }
    for (ArcId a : dirty_arcs_) {
      // An arc no flow crosses any more has nothing to recompute.
      if (arcs_[a].seen == epoch_ || on_arc_[a].empty()) continue;
      open_piece();
      const std::size_t from = comp_arcs_.size();
      visit_arc(a);
      search(from);
    }
  }
  dirty_flows_.clear();
  dirty_arcs_.clear();
  piece_arcs_.push_back(comp_arcs_.size());
  piece_flows_.push_back(comp_flows_.size());
}

void FlowNetwork::freeze_flows_on(ArcId a, double share, std::size_t& unfrozen_flows, Log* log) {
  // Memory bound: the flows on an arc sit anywhere in the flow store, so fetch the records of
  // the entries a few steps ahead while working on the current one.
  constexpr std::size_t kAhead = 8;
  const std::uint32_t epoch = epoch_;
  const FlowId* entries = on_arc_[a].data();
  const std::size_t n = on_arc_[a].size();
  Flow* flows = flows_.data();
  std::uint32_t* frozen = flow_frozen_.data();
  const ArcId* hops = hop_arc_.data();
  Arc* arcs = arcs_.data();
  std::uint64_t assigned = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (k + kAhead < n) {
      __builtin_prefetch(frozen + entries[k + kAhead]);
      __builtin_prefetch(flows + entries[k + kAhead]);
    }
    const FlowId id = entries[k];
    if (frozen[id] == epoch) continue;
    frozen[id] = epoch;
    if (log) {
      fill_pos_[id] = static_cast<std::uint32_t>(log->order.size());
      log->order.push_back(id);
    }
    Flow& f = flows[id];
    f.rate = share * f.weight;
    ++assigned;
    for (const ArcId* b = hops + f.first_hop; b != hops + f.first_hop + f.hops; ++b) {
      Arc& on = arcs[*b];
      on.remaining -= f.rate;
      on.unfrozen -= f.weight;
      // Weights are small integers in practice, so this reaches exactly zero; guard anyway.
      if (on.unfrozen < 1e-9) on.unfrozen = 0;
    }
  }
  unfrozen_flows -= assigned;
  rate_assignments_ += assigned;
}

void FlowNetwork::seed_fill(std::span<const ArcId> arcs) {
  share_heap_.clear();
  for (ArcId a : arcs) {
    Arc& arc = arcs_[a];
    arc.remaining = arc.capacity;
    arc.unfrozen = arc.weight;
    if (arc.weight > 0) share_heap_.append(arc.capacity / arc.weight, a);
  }
}

void FlowNetwork::fill(std::size_t n, std::size_t frozen, Log* log) {
  // Progressive filling: repeatedly saturate the arc offering the smallest fair share. Freezing
  // flows at the current minimum share can only raise the share other arcs offer, so heap keys
  // are lower bounds: a popped arc whose share has grown is pushed back instead of updating
  // the heap on every change (one push per arc instead of one per flow-hop).
  // Once every flow of the component is frozen, what is left in the heap changes nothing.
  std::size_t unfrozen_flows = n - frozen;
  // When logging, checkpoints fall at n - 64, n - 128, n - 256, ... flows frozen: flows finish
  // roughly in the reverse order of freezing (the fastest first), so resumptions start late.
  std::size_t gap = 0;  // the next checkpoint is at n - gap flows frozen; 0: none
  if (log && kFirstCheckpointGap < unfrozen_flows) {
    gap = kFirstCheckpointGap;
    while (2 * gap < unfrozen_flows) gap *= 2;
  }
  share_heap_.heapify();
  while (unfrozen_flows > 0 && !share_heap_.empty()) {
    if (gap > 0 && unfrozen_flows <= gap) {
      save_checkpoint(*log, n - unfrozen_flows);
      while (gap >= unfrozen_flows && gap > 0) gap = gap > kFirstCheckpointGap ? gap / 2 : 0;
    }
    const ShareHeap::Entry top = share_heap_.pop();
    Arc& arc = arcs_[top.arc];
    if (!(arc.unfrozen > 0)) continue;
    const double share = std::max(0.0, arc.remaining / arc.unfrozen);  // per unit of weight
    if (share > top.share) {
      share_heap_.push(share, top.arc);
      continue;
    }
    freeze_flows_on(top.arc, share, unfrozen_flows, log);
    arc.unfrozen = 0;
  }
}

void FlowNetwork::recompute() {
  if (dirty_flows_.empty() && dirty_arcs_.empty()) return;
  ++recomputations_;
  if (resumable_ && !record_ && !pending_logs_.empty()) {
    // Finishes inside logged components: each such log finds the part they touched from its own
    // adjacency and resumes its filling; the search of the network below handles the rest.
    // (Not while recording link loads: samples follow the order the search reaches arcs.)
    std::erase_if(dirty_arcs_, [&](ArcId a) { return arcs_[a].log != kNoLog; });
    for (std::size_t k = 0; k < pending_logs_.size(); ++k) {
      const std::uint32_t l = pending_logs_[k];
      if (logs_[l].valid && logs_[l].pending) recompute_log(l);
    }
    pending_logs_.clear();
    if (dirty_flows_.empty() && dirty_arcs_.empty()) return;
  }
  ++epoch_;
  const bool only_finishes = dirty_flows_.empty();
  collect_component();
  // When the component is exactly the active flows of one logged filling, resume that filling.
  bool resumed = false;
  if (resumable_ && only_finishes && piece_flows_.size() == 2 && !comp_flows_.empty()) {
    const std::uint32_t l = info_[comp_flows_.front()].log;
    if (l != kNoLog && logs_[l].active == comp_flows_.size() &&
        std::all_of(comp_flows_.begin(), comp_flows_.end(), [&](FlowId id) { return info_[id].log == l; }) &&
        resume_fill(l)) {
      logs_[l].pending = false;
      release_dropped(logs_[l]);
      resumed = true;
    }
  }
  if (!resumed)
    for (std::size_t k = 0; k + 1 < piece_flows_.size(); ++k)
      fill_afresh({comp_flows_.data() + piece_flows_[k], piece_flows_[k + 1] - piece_flows_[k]},
                  {comp_arcs_.data() + piece_arcs_[k], piece_arcs_[k + 1] - piece_arcs_[k]});
  std::erase_if(pending_logs_, [&](std::uint32_t l) { return !(logs_[l].valid && logs_[l].pending); });
  schedule_changed();
  if (record_) {
    for (ArcId a : comp_arcs_) {
      double load = 0;
      for (FlowId id : on_arc_[a]) load += flows_[id].rate;
      samples_.push_back({now_, a, load});
    }
  }
}

double FlowNetwork::next_finish_time() {
  recompute();
  while (!finish_heap_.empty()) {
    const FinishEvent& top = finish_heap_.top();
    const FlowInfo& info = info_[top.flow];
    if (info.active && info.version == top.version) return top.time;
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
    const FlowInfo& info = info_[ev.flow];
    if (!info.active || info.version != ev.version) continue;
    finished.push_back({ev.flow, info.tag});
    detach(ev.flow);
  }
}

double FlowNetwork::rate(FlowId id) {
  recompute();
  return flows_[id].rate;
}

}  // namespace toposweep::sim
