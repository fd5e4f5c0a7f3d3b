// Resumable progressive filling for FlowNetwork.
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
// weight counts the identical flows it stands for), and the component must be the whole
// network both times, so that the filling covers the same flows as the recomputation settles.
#include "toposweep/sim/flow_network.hpp"

namespace toposweep::sim {

void FlowNetwork::save_checkpoint(std::size_t frozen) {
  if (checkpoint_count_ == checkpoints_.size()) checkpoints_.emplace_back();
  Checkpoint& ck = checkpoints_[checkpoint_count_++];
  ck.frozen = frozen;
  ck.remaining.resize(logged_arcs_.size());
  ck.unfrozen.resize(logged_arcs_.size());
  for (std::size_t j = 0; j < logged_arcs_.size(); ++j) {
    const Arc& arc = arcs_[logged_arcs_[j]];
    ck.remaining[j] = arc.remaining;
    ck.unfrozen[j] = arc.unfrozen;
  }
  ck.heap = share_heap_.keys();
}

bool FlowNetwork::resume_fill() {
  if (!log_valid_ || !whole_ || !integer_weights_) return false;
  // The latest checkpoint at which every finished flow was still unfrozen.
  std::size_t kept = checkpoint_count_;
  while (kept > 0 && checkpoints_[kept - 1].frozen > cut_) --kept;
  if (kept == 0) return false;
  for (ArcId a : dropped_arcs_)
    if (arcs_[a].slot >= logged_arcs_.size() || logged_arcs_[arcs_[a].slot] != a) return false;
  // The finished flows' weights leave the arcs they crossed, in every checkpoint kept (they
  // were unfrozen in all of them). Integer sums: exact.
  for (std::size_t k = 0; k < kept; ++k)
    for (ArcId a : dropped_arcs_) checkpoints_[k].unfrozen[arcs_[a].slot] -= arcs_[a].dropped;
  checkpoint_count_ = kept;
  const Checkpoint& ck = checkpoints_[kept - 1];
  for (std::size_t j = 0; j < logged_arcs_.size(); ++j) {
    Arc& arc = arcs_[logged_arcs_[j]];
    arc.remaining = ck.remaining[j];
    arc.unfrozen = ck.unfrozen[j];
  }
  share_heap_.assign(ck.heap);
  // Flows frozen before the checkpoint keep their rates.
  fill_log_.resize(ck.frozen);
  for (FlowId id : fill_log_) flow_frozen_[id] = epoch_;
  fill(ck.frozen, true);
  return true;
}

}  // namespace toposweep::sim
