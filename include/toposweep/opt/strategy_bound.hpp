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
// With context parallelism the gradient groups are the dp x cp joint groups and every send and
// boundary gather carries a CP rank's s / cp tokens; ring attention's KV traffic runs on its own
// stream and is left out.
// Terms that the model might time differently are left out (0), so the bound stays below the
// simulated time: with the flow model, METIS placement, servers of different kinds, mixed
// devices or uneven splits only the compute bound is used.
// What depends only on where the ranks sit (tp, cp, dp, pp with the placement) is worked out
// once per such layout and kept: a candidate then costs O(chunks), not O(GPUs).
#include <array>
#include <cstdint>
#include <map>
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
  // Where the instances of a send from one stage to another land: some inside one server,
  // some across servers.
  struct SendSpan {
    bool inside = false, across = false;
  };
  // The facts of one layout (tp, cp, dp, pp on the placement).
  struct Layout {
    std::vector<bool> tp_inside;        // per stage: every TP group inside one server
    std::vector<SendSpan> to_next;      // per stage p: its sends to p + 1 (mod pp)
    std::vector<SendSpan> to_previous;  // per stage p: its sends to p - 1 (mod pp)
    // per stage: the dp_cut of one byte for AllReduce, AllGather, ReduceScatter (s / byte)
    std::vector<std::array<double, 3>> cut_per_byte;
  };
  const Layout& layout(const Strategy& s);
  double transfer_floor(const SendSpan& span, double bytes) const;
  std::array<double, 3> cut_per_byte(std::uint32_t first_rank, std::uint32_t tp, std::uint32_t replicas);
  static double dp_cut(const Layout& l, std::uint32_t stage, CollectiveOp op, double bytes);
  const Workload* w_;
  const Network* net_;
  Placement placement_;
  bool comm_ = false;
  double fastest_arc_Bps_ = 0;
  std::vector<double> ingress_Bps_;                         // per vertex: the bandwidth of its incoming arcs
  std::vector<double> node_bytes_;                          // dp_cut's scratch, per vertex
  std::vector<std::uint32_t> members_;                      // dp_cut's scratch
  std::map<std::array<std::uint32_t, 4>, Layout> layouts_;  // by (tp, cp, dp, pp)
  LayerCostCache costs_;
};

}  // namespace toposweep::opt
