#pragma once
// Flow-level network model: flows move bytes along fixed paths of arcs, and arc capacities are
// shared max-min fairly (progressive filling). Rates are recomputed only for the connected
// component of flows that a start or finish touches, and only once per distinct event time,
// so symmetric collectives (thousands of flows starting and finishing together) cost one
// recomputation per stage instead of one per flow. A filling of a component is logged; while
// only finishes happen in that component, the next recomputation finds the component's flows
// from the log instead of searching the network, and resumes the filling from a checkpoint
// taken before it froze the first finished flow (flow_refill.cpp): same arithmetic, same bits,
// less work.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <queue>
#include <span>
#include <vector>

#include "toposweep/sim/flow_share_heap.hpp"
#include "toposweep/topology/network.hpp"

namespace toposweep::sim {

using FlowId = std::uint32_t;

// A change of an arc's total rate, recorded for timelines: from `time_s` on, the arc carries
// `load_Bps` until its next sample.
struct LinkSample {
  double time_s = 0;
  ArcId arc = 0;
  double load_Bps = 0;
};

struct FinishedFlow {
  FlowId id = 0;
  std::uint64_t tag = 0;  // the caller's label, returned untouched
};

class FlowNetwork {
 public:
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  explicit FlowNetwork(std::vector<double> capacities_Bps);
  explicit FlowNetwork(const Network& net);

  // Starts a flow at the current time. A flow with no bytes or an empty path finishes at once
  // (at the next advance_to(now())). A flow of weight w stands for w identical flows on the
  // same path: it gets w fair shares (and should carry w times the bytes).
  FlowId start(std::span<const ArcId> path, double bytes, std::uint64_t tag, double weight = 1.0);

  double now() const { return now_; }
  std::size_t active_count() const { return active_; }
  // Earliest time an active flow finishes transmitting; kNever when none is active.
  double next_finish_time();
  // Moves the clock to t (now() <= t <= next_finish_time()) and appends the flows that
  // finished by t, in finish order.
  void advance_to(double t, std::vector<FinishedFlow>& finished);

  // Current rate of an active flow (bytes/s); recomputes pending changes first.
  double rate(FlowId id);
  // Bytes each arc has carried for flows that have finished.
  const std::vector<double>& arc_bytes() const { return arc_bytes_; }
  std::uint32_t arc_count() const { return static_cast<std::uint32_t>(arcs_.size()); }
  double capacity(ArcId a) const { return arcs_[a].capacity; }
  // How many rate recomputations ran and how many flow-rate assignments they made (for the
  // scaling benchmark: the second should grow like flows, not flows squared).
  std::uint64_t recomputations() const { return recomputations_; }
  std::uint64_t rate_assignments() const { return rate_assignments_; }
  // Recomputations of a logged component that knew from its spanning tree, without a search,
  // that the finishes split nothing.
  std::uint64_t searches_skipped() const { return searches_skipped_; }

  // Resume the logged filling of a component instead of filling afresh when only finishes
  // happened in it since (flow_refill.cpp). On by default; results are the same either way
  // (tested bit for bit), only the work differs.
  void set_resumable(bool on) { resumable_ = on; }

  // Record every arc-load change (costs one pass over the recomputed arcs' flows).
  void record_link_loads(bool on) { record_ = on; }
  const std::vector<LinkSample>& link_samples() const { return samples_; }

 private:
  // Per-flow state read by every recomputation of the flow's component, in one small record
  // (recomputations are memory bound). A flow's path lives in the shared pools hop_arc_ /
  // hop_pos_, at [first_hop, first_hop + hops). The marks that recomputations test once per
  // flow-hop live in separate compact arrays (flow_seen_, flow_frozen_).
  struct Flow {
    double remaining = 0;  // bytes left at time `since`
    double rate = 0;       // -1 until the first recomputation after start() (forces a schedule)
    double since = 0;
    double weight = 1;
    std::uint32_t first_hop = 0, hops = 0;
  };
  static constexpr std::uint32_t kNoLog = std::numeric_limits<std::uint32_t>::max();
  // Per-flow state that recomputations do not read.
  struct FlowInfo {
    double bytes = 0;
    std::uint64_t tag = 0;
    std::uint32_t version = 0;
    std::uint32_t hop_capacity = 0;  // pool slots this id owns at first_hop
    std::uint32_t linked_pos = 0;    // index in linked_ while the flow holds arcs
    std::uint32_t log = kNoLog;      // the valid log whose filling set this flow's rate, if any
    std::uint32_t local = 0;         // its index among that log's flows
    bool active = false;
  };
  // Per-arc state, one record per arc for the same reason.
  struct Arc {
    double capacity = 0;
    // Summed weight of the active flows crossing the arc, kept up to date by start() and
    // detach() so a recomputation does not walk every arc's flows to add them up (weights are
    // small integers, so the running sum is exact).
    double weight = 0;
    double remaining = 0, unfrozen = 0;  // recompute() scratch: capacity left, unfrozen weight
    double dropped = 0;                  // weight of flows finished since the owning log's filling
    std::uint32_t seen = 0;              // recomputation epoch
    std::uint32_t log = kNoLog;          // the valid log that owns the arc, if any
    std::uint32_t slot = 0;              // index among that log's arcs
  };
  struct FinishEvent {
    double time;
    FlowId flow;
    std::uint32_t version;
    bool operator>(const FinishEvent& o) const { return time > o.time || (time == o.time && flow > o.flow); }
  };
  // A saved state of a logged filling: after `frozen` flows of the log's order were frozen, the
  // remaining capacity and unfrozen weight of each of the log's arcs, and the heap.
  struct Checkpoint {
    std::size_t frozen = 0;
    std::vector<double> remaining, unfrozen;
    std::vector<ShareHeap::Key> heap;
  };
  // The logged filling of a set of flows closed under arc sharing (one component or several).
  // While valid: the log owns its arcs (Arc::log), every active flow crossing them is one of its
  // flows (FlowInfo::log), and its order and checkpoints describe a filling of exactly its
  // active flows and the flows finished since (`cut`, Arc::dropped). A start on one of its arcs
  // or another filling that takes in its flows invalidates it (flow_refill.cpp).
  struct Log {
    bool valid = false;
    bool pending = false;                  // flows finished since the last recomputation
    std::vector<FlowId> flows;             // local index -> flow (finished ones too, until compacted)
    std::vector<char> dead;                // per local flow: finished
    std::size_t active = 0;                // flows not dead
    std::size_t busy = 0;                  // arcs that active flows cross
    std::vector<std::uint32_t> arc_alive;  // per local arc: active flows crossing it
    std::vector<ArcId> arcs;               // local index -> arc; the arcs its flows cross
    // Local adjacency for the search of the part that finishes touched (compact, so the search
    // stays in cache): flow -> arcs and arc -> flows, as offsets into flat lists.
    std::vector<std::uint32_t> flow_begin, flow_arcs, arc_begin, arc_flows;
    std::vector<std::uint32_t> flow_mark, arc_mark;  // search epochs, per local flow / arc
    std::uint32_t mark = 0;
    std::vector<FlowId> order;            // flows in the order the filling froze them
    std::vector<Checkpoint> checkpoints;  // ascending `frozen`; first checkpoint_count in use
    std::size_t checkpoint_count = 0;
    std::size_t cut = SIZE_MAX;          // smallest order position of the flows finished since
    std::vector<std::uint32_t> dropped;  // local arcs with a non-zero Arc::dropped
    // A certificate that the log's active flows still form one component (certify()): a
    // spanning tree of its flows and arcs. While no finished flow is the parent of an arc that
    // active flows still cross, every active flow and busy arc hangs from the root through
    // active flows and busy arcs, so a recomputation needs no search to know the finishes split
    // nothing.
    bool certified = false;
    std::vector<std::uint32_t> tree_parent;  // per local arc: the local flow it hangs from
    std::vector<std::uint32_t> died;         // local flows finished since the last check
  };

  void recompute();
  void collect_component();  // fills comp_arcs_ / comp_flows_ and the pieces, settles the flows
  void seed_fill(
      std::span<const ArcId> arcs);  // a fresh filling's start: arcs full, the heap of their shares
  // Progressive filling of `n` flows (the collected component, or a log's active flows) from
  // `frozen` flows frozen on; when `log` is given, records the freezing order and saves
  // checkpoints in it (see flow_refill.cpp).
  void fill(std::size_t n, std::size_t frozen, Log* log);
  void save_checkpoint(Log& log, std::size_t frozen);
  // Resumes log l's filling at its latest checkpoint before the first finished flow; false
  // (nothing done) when there is none.
  bool resume_fill(std::uint32_t l);
  // Fills one component afresh and logs the filling when it is big enough (`flows` and `arcs`
  // are a piece of comp_flows_ / comp_arcs_).
  void fill_afresh(std::span<const FlowId> flows, std::span<const ArcId> arcs);
  // Recomputes the part of log l touched by the flows finished since its filling.
  void recompute_log(std::uint32_t l);
  // Searches the parts of log l that the finished flows' arcs reach (search_ / reached_ /
  // piece_*); true when one part holds every active flow.
  bool search_log(Log& log);
  // Grows log l's spanning tree over its active flows, hanging arcs from the flows its last
  // filling froze first (the slowest, which finish last); certified when it spans them all.
  void certify(std::uint32_t l);
  // A fresh search epoch for the log's flow and arc marks.
  std::uint32_t next_mark(Log& log);
  // False when a flow finished since the last check is the parent of an arc still busy.
  bool still_certified(Log& log);
  std::uint32_t new_log();
  void build_log_adjacency(Log& log);
  void invalidate_log(std::uint32_t l);
  void release_dropped(Log& log);  // clears Arc::dropped and the cut after a recomputation
  // Freezes the unfrozen flows crossing arc a at `share` per unit of weight.
  void freeze_flows_on(ArcId a, double share, std::size_t& unfrozen_flows, Log* log);
  // Brings `remaining` up to now_.
  void settle(Flow& f) {
    f.remaining = std::max(0.0, f.remaining - f.rate * (now_ - f.since));
    f.since = now_;
  }
  void schedule(FlowId id);
  // Settles a flow and adds it to the component being recomputed (comp_flows_, with its rate
  // so far in comp_old_rate_).
  void settle_into_component(FlowId id) {
    Flow& f = flows_[id];
    settle(f);
    comp_flows_.push_back(id);
    comp_old_rate_.push_back(f.rate);
  }
  // Schedules the component's flows whose rate changed (or that have none).
  void schedule_changed();
  void detach(FlowId id);
  std::span<const ArcId> path_of(const Flow& f) const { return {hop_arc_.data() + f.first_hop, f.hops}; }

  std::vector<Arc> arcs_;
  std::vector<std::vector<FlowId>> on_arc_;  // active flows crossing each arc
  std::vector<Flow> flows_;
  std::vector<FlowInfo> info_;
  std::vector<std::uint32_t> flow_seen_, flow_frozen_;  // recomputation epochs, per flow
  std::vector<ArcId> hop_arc_;                          // path pool: the arcs of every flow's path
  std::vector<std::uint32_t> hop_pos_;                  // parallel: index of the flow in on_arc_[arc]
  std::vector<double> arc_bytes_;
  std::vector<FlowId> free_ids_;
  std::vector<FlowId> linked_;       // active flows that hold arcs (non-empty path), any order
  std::vector<FlowId> dirty_flows_;  // started since the last recomputation
  std::vector<ArcId> dirty_arcs_;    // lost a flow since the last recomputation
  std::priority_queue<FinishEvent, std::vector<FinishEvent>, std::greater<>> finish_heap_;
  // Scratch for recompute(), kept to avoid reallocating.
  std::vector<ArcId> comp_arcs_;
  std::vector<FlowId> comp_flows_;
  std::vector<double> comp_old_rate_;  // parallel to comp_flows_: rate before this recomputation
  // Where each separately filled piece (a component, or a union of them) of comp_arcs_ /
  // comp_flows_ starts, and a last entry for the end.
  std::vector<std::size_t> piece_arcs_, piece_flows_;
  std::vector<std::uint32_t> search_;     // recompute_log(): local arcs reached, in order
  std::vector<std::uint32_t> reached_;    // recompute_log(): local flows reached, in order
  std::vector<std::uint64_t> prim_heap_;  // certify(): flows reached, slowest first
  ShareHeap share_heap_;
  std::vector<LinkSample> samples_;
  // Logged fillings (flow_refill.cpp).
  bool resumable_ = true;
  bool whole_ = false;                   // the last search reached every arc that carries flows
  bool integer_weights_ = true;          // every weight so far is an integer
  std::vector<std::uint32_t> fill_pos_;  // per flow: its index in its log's order
  std::vector<Log> logs_;
  std::vector<std::uint32_t> free_logs_;
  std::vector<std::uint32_t> pending_logs_;  // logs with flows finished since the last recomputation
  bool record_ = false;
  std::uint32_t epoch_ = 0;
  double now_ = 0;
  std::size_t active_ = 0;
  std::size_t busy_arcs_ = 0;  // arcs that active flows cross
  std::uint64_t recomputations_ = 0, rate_assignments_ = 0, searches_skipped_ = 0;
};

}  // namespace toposweep::sim
