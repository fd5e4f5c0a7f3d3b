#pragma once
// A lower bound on a strategy's simulated iteration time that adds, to the compute bound
// (workload/compute_bound.hpp), the communication a strategy cannot avoid, for the exact
// strategy search's branch and bound (docs/optimizers.md, "The bound"):
//  - tensor-parallel collectives on the compute stream (exposed: Megatron's AllReduces, or the
//    ReduceScatter/AllGather pairs of sequence parallelism, and scatter/gather's AllGathers)
//    lengthen every pass; those under a GEMM (strategy.tp_overlap) make a pass at least as long
//    as their stream's share of it;
//  - every pipeline send lies on a microbatch's chain from chunk to chunk (and, blocking, on its
//    device's chain too);
//  - data-parallel collectives across servers: ZeRO-3's weight gathers lengthen every pass, and
//    a device's DP stream runs its gradient reductions (and ZeRO-1/2's weight gathers) in turn.
// Each term is the time the analytical network model gives that task, or less: a TP group
// inside one server takes intra_node_collective_time, the model's own formula; a send takes at
// least its bytes over the fastest link of the network (or the model's time inside a server); a
// DP collective across servers at least what its members on one server must receive from the
// others over that server's incoming links (a cut no algorithm can beat).
// Terms that the model might time differently are left out (0), so the bound stays below the
// simulated time: with the flow model, METIS placement, servers of different kinds, mixed
// devices or uneven splits only the compute bound is used.
#include <cstdint>
#include <vector>

#include "toposweep/opt/strategy_placement.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/topology/network.hpp"
#include "toposweep/util/collective_op.hpp"
#include "toposweep/workload/layer_cost.hpp"
#include "toposweep/workload/strategy.hpp"
#include "toposweep/workload/workload.hpp"

namespace toposweep::opt {

// Compute: the compute bound alone; Communication: with the communication terms where admissible.
enum class BoundKind { Compute, Communication };

class StrategyBound {
 public:
  // `placement`: node of every GPU rank as the scorer places them (rank order, maybe renumbered);
  // communication terms are used only when `kind` is RankOrder.
  StrategyBound(const Workload& w, const Network& net, const sim::SimOptions& options, PlacementKind kind,
                Placement placement, BoundKind bound = BoundKind::Communication);
  // Seconds, scaled a hair down for summation order; 0 for per-layer degrees.
  double operator()(const Strategy& s);
  // Whether communication terms are added (else the compute bound alone).
  bool with_communication() const { return comm_; }

 private:
  double transfer_floor(std::uint32_t from_stage, std::uint32_t to_stage, const Strategy& s,
                        double bytes) const;
  double dp_cut(const Strategy& s, std::uint32_t stage, CollectiveOp op, double bytes);
  const Workload* w_;
  const Network* net_;
  Placement placement_;
  bool comm_ = false;
  double fastest_arc_Bps_ = 0;
  std::vector<double> ingress_Bps_;     // per vertex: the bandwidth of its incoming arcs
  std::vector<double> node_bytes_;      // dp_cut's scratch, per vertex
  std::vector<std::uint32_t> members_;  // dp_cut's scratch
  LayerCostCache costs_;
};

}  // namespace toposweep::opt
