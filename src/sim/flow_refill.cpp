// Logged, resumable progressive fillings for FlowNetwork.
//
// When flows only finish, the filling of the rest agrees with the last one up to the moment
// that one froze the first finished flow: until then the finished flows were unfrozen, so the
// arcs they crossed offered shares no smaller than the current one and froze nothing, and every
// other arc saw the same flows, in the same order, with the same rates. So instead of filling
// from scratch, the network restores the last filling's state at a checkpoint taken before
// that moment (arc capacities left, unfrozen weights, the share heap), takes the finished
// flows' weights off the arcs they crossed, and carries on from there: the same arithmetic in
// the same order as a fresh filling, applied only to the flows frozen after the checkpoint.
// Weights must be integers for the unfrozen weights to come out exact (they are: a flow's
// weight counts the identical flows it stands for).
//
// Every filling of a component of at least kMinLoggedFlows flows is logged: the flows and arcs
// it covered, the freezing order and the checkpoints. While only finishes happen in it, a log
// stays valid and knows its component without a search of the network: a recomputation looks
// for the part the finishes touched in the log's own compact adjacency (that part is what a
// search from the finished flows' arcs would reach, and only its flows are settled, as a
// search would settle them), then resumes the filling over all the log's active flows. Parts
// the finishes did not touch are disjoint from the rest, so the filling gives them the rates
// they already have, bit for bit, and their finish events stay. A start on one of the log's
// arcs, or a filling that takes in its flows or arcs, invalidates it.
//
// Most such searches only find that the finishes split nothing. So a log also keeps a spanning
// tree of its active flows and busy arcs (certify(): Prim's way, slowest flows first). While no
// finished flow is the parent of an arc that active flows still cross, the tree still connects
// every active flow and busy arc (walk up from any of them: a busy arc's parent cannot have
// finished), so the part the finishes touched is the whole log and no search is needed; the
// recomputation then does what the search's one-part outcome does. When the tree broke it is
// grown afresh, and only when it cannot span the active flows does the search run to find the
// parts.
#include <algorithm>
#include <limits>

#include "toposweep/sim/flow_network.hpp"

namespace toposweep::sim {
namespace {

// Fillings of at least this many flows are logged for resumption.
constexpr std::size_t kMinLoggedFlows = 64;

// Arcs left unreached by a log's search below which it looks at them directly.
constexpr std::size_t kShortcutArcs = 16;

}  // namespace

void FlowNetwork::save_checkpoint(Log& log, std::size_t frozen) {
  if (log.checkpoint_count == log.checkpoints.size()) log.checkpoints.emplace_back();
  Checkpoint& ck = log.checkpoints[log.checkpoint_count++];
  ck.frozen = frozen;
  ck.remaining.resize(log.arcs.size());
  ck.unfrozen.resize(log.arcs.size());
  for (std::size_t j = 0; j < log.arcs.size(); ++j) {
    const Arc& arc = arcs_[log.arcs[j]];
    ck.remaining[j] = arc.remaining;
    ck.unfrozen[j] = arc.unfrozen;
  }
  ck.heap = share_heap_.keys();
}

bool FlowNetwork::resume_fill(std::uint32_t l) {
  Log& log = logs_[l];
  // The latest checkpoint at which every finished flow was still unfrozen.
  std::size_t kept = log.checkpoint_count;
  while (kept > 0 && log.checkpoints[kept - 1].frozen > log.cut) --kept;
  if (kept == 0) return false;
  // The finished flows' weights leave the arcs they crossed, in every checkpoint kept (they
  // were unfrozen in all of them). Integer sums: exact.
  for (std::size_t k = 0; k < kept; ++k)
    for (std::uint32_t j : log.dropped) log.checkpoints[k].unfrozen[j] -= arcs_[log.arcs[j]].dropped;
  log.checkpoint_count = kept;
  const Checkpoint& ck = log.checkpoints[kept - 1];
  for (std::size_t j = 0; j < log.arcs.size(); ++j) {
    Arc& arc = arcs_[log.arcs[j]];
    arc.remaining = ck.remaining[j];
    arc.unfrozen = ck.unfrozen[j];
  }
  share_heap_.assign(ck.heap);
  // Flows frozen before the checkpoint keep their rates.
  log.order.resize(ck.frozen);
  for (FlowId id : log.order) flow_frozen_[id] = epoch_;
  fill(log.active, ck.frozen, &log);
  return true;
}

void FlowNetwork::release_dropped(Log& log) {
  for (std::uint32_t j : log.dropped) arcs_[log.arcs[j]].dropped = 0;
  log.dropped.clear();
  log.cut = std::numeric_limits<std::size_t>::max();
}

std::uint32_t FlowNetwork::new_log() {
  if (!free_logs_.empty()) {
    const std::uint32_t l = free_logs_.back();
    free_logs_.pop_back();
    return l;
  }
  logs_.emplace_back();
  return static_cast<std::uint32_t>(logs_.size() - 1);
}

void FlowNetwork::invalidate_log(std::uint32_t l) {
  Log& log = logs_[l];
  if (!log.valid) return;
  for (ArcId a : log.arcs) {
    arcs_[a].log = kNoLog;
    arcs_[a].dropped = 0;
  }
  for (std::size_t i = 0; i < log.flows.size(); ++i)
    if (!log.dead[i]) info_[log.flows[i]].log = kNoLog;
  log.valid = false;
  log.pending = false;
  log.dropped.clear();
  free_logs_.push_back(l);
}

void FlowNetwork::build_log_adjacency(Log& log) {
  // Local indices: flows by their place in log.flows, arcs by Arc::slot.
  const std::size_t n = log.flows.size(), m = log.arcs.size();
  log.flow_begin.assign(n + 1, 0);
  log.flow_arcs.clear();
  log.arc_begin.assign(m + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (ArcId a : path_of(flows_[log.flows[i]])) {
      log.flow_arcs.push_back(arcs_[a].slot);
      ++log.arc_begin[arcs_[a].slot + 1];
    }
    log.flow_begin[i + 1] = static_cast<std::uint32_t>(log.flow_arcs.size());
  }
  for (std::size_t j = 0; j < m; ++j) log.arc_begin[j + 1] += log.arc_begin[j];
  log.arc_flows.resize(log.flow_arcs.size());
  search_.assign(log.arc_begin.begin(), log.arc_begin.end() - 1);  // next free place per arc
  for (std::size_t i = 0; i < n; ++i)
    for (std::uint32_t k = log.flow_begin[i]; k < log.flow_begin[i + 1]; ++k)
      log.arc_flows[search_[log.flow_arcs[k]]++] = static_cast<std::uint32_t>(i);
  log.flow_mark.assign(n, 0);
  log.arc_mark.assign(m, 0);
  log.mark = 0;
  log.dead.assign(n, 0);
  log.active = n;
  log.arc_alive.resize(m);
  for (std::size_t j = 0; j < m; ++j) log.arc_alive[j] = log.arc_begin[j + 1] - log.arc_begin[j];
  log.busy = 0;
  for (std::size_t j = 0; j < m; ++j) log.busy += log.arc_alive[j] > 0 ? 1 : 0;
  log.certified = false;
  log.died.clear();
}

std::uint32_t FlowNetwork::next_mark(Log& log) {
  if (++log.mark == 0) {  // wrapped: stale marks could alias, so clear once every 2^32 uses
    std::fill(log.flow_mark.begin(), log.flow_mark.end(), 0);
    std::fill(log.arc_mark.begin(), log.arc_mark.end(), 0);
    log.mark = 1;
  }
  return log.mark;
}

void FlowNetwork::certify(std::uint32_t l) {
  Log& log = logs_[l];
  // Prim's way: from the flow frozen first, take the reached flows slowest first (smallest
  // freezing position); each arc hangs from the flow that reached it first. A flow that
  // finishes early is then mostly a leaf, or the parent only of arcs no one else crosses.
  log.died.clear();
  log.certified = false;
  const std::uint32_t mark = next_mark(log);
  log.tree_parent.resize(log.arcs.size());
  // (freezing position << 32 | local flow), smallest first.
  std::vector<std::uint64_t>& heap = prim_heap_;
  heap.clear();
  auto queue_flow = [&](std::uint32_t i) {
    log.flow_mark[i] = mark;
    heap.push_back(std::uint64_t{fill_pos_[log.flows[i]]} << 32 | i);
    std::push_heap(heap.begin(), heap.end(), std::greater<>{});
  };
  // The root: the first flow of the freezing order still active in the log (a finished flow's
  // id may belong to a new flow by now).
  std::size_t first = 0;
  while (first < log.order.size() && info_[log.order[first]].log != l) ++first;
  if (first == log.order.size()) return;
  queue_flow(info_[log.order[first]].local);
  std::size_t taken = 0;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
    const auto i = static_cast<std::uint32_t>(heap.back());
    heap.pop_back();
    ++taken;
    for (std::uint32_t h = log.flow_begin[i]; h < log.flow_begin[i + 1]; ++h) {
      const std::uint32_t a = log.flow_arcs[h];
      if (log.arc_mark[a] == mark) continue;
      log.arc_mark[a] = mark;
      log.tree_parent[a] = i;
      for (std::uint32_t k = log.arc_begin[a]; k < log.arc_begin[a + 1]; ++k) {
        const std::uint32_t g = log.arc_flows[k];
        if (!log.dead[g] && log.flow_mark[g] != mark) queue_flow(g);
      }
    }
  }
  log.certified = taken == log.active;
}

bool FlowNetwork::still_certified(Log& log) {
  if (!log.certified) return false;
  for (std::uint32_t i : log.died)
    for (std::uint32_t h = log.flow_begin[i]; h < log.flow_begin[i + 1]; ++h) {
      const std::uint32_t a = log.flow_arcs[h];
      if (log.tree_parent[a] == i && log.arc_alive[a] > 0) {
        log.certified = false;
        log.died.clear();
        return false;
      }
    }
  log.died.clear();
  return true;
}

void FlowNetwork::fill_afresh(std::span<const FlowId> flows, std::span<const ArcId> arcs) {
  // Logged fillings that covered any of these flows or arcs no longer describe them.
  for (FlowId id : flows)
    if (info_[id].log != kNoLog) invalidate_log(info_[id].log);
  for (ArcId a : arcs)
    if (arcs_[a].log != kNoLog) invalidate_log(arcs_[a].log);
  Log* log = nullptr;
  if (resumable_ && integer_weights_ && flows.size() >= kMinLoggedFlows) {
    const std::uint32_t l = new_log();
    log = &logs_[l];
    // In id order, so that passes over the log's flows walk the flow store forwards.
    log->flows.assign(flows.begin(), flows.end());
    std::sort(log->flows.begin(), log->flows.end());
    log->arcs.clear();
    for (ArcId a : arcs)
      if (arcs_[a].weight > 0) {
        arcs_[a].log = l;
        arcs_[a].slot = static_cast<std::uint32_t>(log->arcs.size());
        log->arcs.push_back(a);
      }
    for (std::size_t i = 0; i < log->flows.size(); ++i) {
      info_[log->flows[i]].log = l;
      info_[log->flows[i]].local = static_cast<std::uint32_t>(i);
    }
    build_log_adjacency(*log);
    log->valid = true;
    log->pending = false;
    log->order.clear();
    log->checkpoint_count = 0;
    log->cut = std::numeric_limits<std::size_t>::max();
    log->dropped.clear();
  }
  seed_fill(arcs);
  fill(flows.size(), 0, log);
}

bool FlowNetwork::search_log(Log& log) {
  // The parts of the log reached from the arcs the finished flows crossed, searched in the log's
  // compact adjacency one part after the other (reached_ holds the local flows of each part in
  // turn, from piece_flows_[k] on).
  const std::uint32_t mark = next_mark(log);
  // Raw views: the search is the hot loop of a recomputation and pushes to member vectors, which
  // would otherwise make the compiler reload every vector's data pointer after each push.
  const std::size_t m = log.arcs.size();
  search_.resize(m);
  reached_.resize(log.flows.size());
  std::uint32_t* const queue = search_.data();
  std::uint32_t* const taken = reached_.data();
  std::size_t queued = 0, taken_count = 0;
  std::uint32_t* const arc_mark = log.arc_mark.data();
  std::uint32_t* const flow_mark = log.flow_mark.data();
  const std::uint32_t* const arc_begin = log.arc_begin.data();
  const std::uint32_t* const arc_flows = log.arc_flows.data();
  const std::uint32_t* const flow_begin = log.flow_begin.data();
  const std::uint32_t* const flow_arcs = log.flow_arcs.data();
  const std::uint32_t* const arc_alive = log.arc_alive.data();
  const char* const dead = log.dead.data();
  const std::size_t busy = log.busy;
  piece_arcs_.clear();
  piece_flows_.clear();
  std::size_t busy_reached = 0;  // reached arcs that carry flows
  auto reach = [&](std::uint32_t j) {
    arc_mark[j] = mark;
    queue[queued++] = j;
    busy_reached += arc_alive[j] > 0 ? 1 : 0;
  };
  auto take = [&](std::uint32_t i) {
    flow_mark[i] = mark;
    taken[taken_count++] = i;
    for (std::uint32_t h = flow_begin[i]; h < flow_begin[i + 1]; ++h)
      if (arc_mark[flow_arcs[h]] != mark) reach(flow_arcs[h]);
  };
  std::size_t scanned = 0, last_shortcut = busy;
  for (std::uint32_t seed : log.dropped) {
    // An arc no flow crosses any more links nothing.
    if (arc_mark[seed] == mark || arc_alive[seed] == 0) continue;
    piece_arcs_.push_back(queued);
    piece_flows_.push_back(taken_count);
    const std::size_t first = queued;
    reach(seed);
    for (std::size_t q = first; q < queued && busy_reached < busy; ++q) {
      const std::uint32_t j = queue[q];
      // An arc that only one active flow crosses links nothing more: that flow reached it.
      if (arc_alive[j] == 1 && q != first) continue;
      scanned += arc_begin[j + 1] - arc_begin[j];
      for (std::uint32_t k = arc_begin[j]; k < arc_begin[j + 1]; ++k) {
        const std::uint32_t i = arc_flows[k];
        if (!dead[i] && flow_mark[i] != mark) take(i);
      }
      // As in the network search: when only a few arcs that carry flows are unreached, look at
      // them directly (one of their flows crossing a reached arc brings it into this part).
      const std::size_t unreached = busy - busy_reached;
      if (unreached <= kShortcutArcs && unreached != last_shortcut && scanned >= m) {
        last_shortcut = unreached;
        for (std::uint32_t x = 0; x < m && busy_reached < busy; ++x) {
          if (arc_mark[x] == mark || arc_alive[x] == 0) continue;
          for (std::uint32_t k = arc_begin[x]; k < arc_begin[x + 1] && arc_mark[x] != mark; ++k) {
            const std::uint32_t i = arc_flows[k];
            if (dead[i] || flow_mark[i] == mark) continue;
            for (std::uint32_t h = flow_begin[i]; h < flow_begin[i + 1]; ++h)
              if (arc_mark[flow_arcs[h]] == mark) {
                take(i);
                break;
              }
          }
        }
      }
    }
    if (busy_reached == busy) break;  // the rest of the flows belong to this part
  }
  search_.resize(queued);
  reached_.resize(taken_count);
  piece_arcs_.push_back(queued);
  piece_flows_.push_back(taken_count);
  const bool all = busy_reached == log.busy;
  if (all && piece_flows_.size() == 2) return true;
  if (all) {
    // The first part took every busy arc; the active flows it did not take belong to it too.
    for (std::uint32_t i = 0; i < log.flows.size(); ++i)
      if (!log.dead[i] && log.flow_mark[i] != mark) reached_.push_back(i);
    piece_flows_.back() = reached_.size();
  }
  return false;
}

void FlowNetwork::recompute_log(std::uint32_t l) {
  Log& log = logs_[l];
  log.pending = false;
  ++epoch_;
  comp_flows_.clear();
  comp_old_rate_.clear();
  // Finished flows leave the log's adjacency once they are the majority (local arc indices, and
  // so the checkpoints, stay).
  if (2 * log.active < log.flows.size()) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < log.flows.size(); ++i)
      if (!log.dead[i]) {
        info_[log.flows[i]].local = static_cast<std::uint32_t>(kept);
        log.flows[kept++] = log.flows[i];
      }
    log.flows.resize(kept);
    build_log_adjacency(log);
  }
  // The finishes split nothing when a spanning tree of the active flows exists (kept from an
  // earlier recomputation while no finished flow held busy arcs of it, else grown afresh) and
  // one of their arcs still carries flows: a search from that arc would reach every active
  // flow. Otherwise search for the parts.
  if (!still_certified(log)) certify(l);
  const bool whole = log.certified && std::any_of(log.dropped.begin(), log.dropped.end(),
                                                  [&](std::uint32_t j) { return log.arc_alive[j] > 0; });
  searches_skipped_ += whole ? 1 : 0;
  if (!whole && !search_log(log)) {
    // The finishes split the log's component. Settle and fill each part they touched afresh on
    // its own (each gets a log of its own); parts they did not touch keep their rates, unlogged.
    comp_arcs_.clear();
    for (std::uint32_t j : search_) comp_arcs_.push_back(log.arcs[j]);
    for (std::uint32_t i : reached_) settle_into_component(log.flows[i]);
    release_dropped(log);
    invalidate_log(l);
    for (std::size_t k = 0; k + 1 < piece_flows_.size(); ++k)
      fill_afresh({comp_flows_.data() + piece_flows_[k], piece_flows_[k + 1] - piece_flows_[k]},
                  {comp_arcs_.data() + piece_arcs_[k], piece_arcs_[k + 1] - piece_arcs_[k]});
    schedule_changed();
    return;
  }
  // One part holding every active flow (the usual case): settle them in one pass in id order
  // and resume the filling of the log.
  for (std::uint32_t i = 0; i < log.flows.size(); ++i)
    if (!log.dead[i]) settle_into_component(log.flows[i]);
  if (!resume_fill(l)) {
    // No checkpoint before the first finished flow: fill all the log's flows afresh.
    log.order.clear();
    log.checkpoint_count = 0;
    seed_fill(log.arcs);
    fill(log.active, 0, &log);
  }
  release_dropped(log);
  schedule_changed();
}

}  // namespace toposweep::sim
