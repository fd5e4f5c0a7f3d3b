#include "toposweep/opt/strategy_bound.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include "toposweep/sim/comm_groups.hpp"
#include "toposweep/workload/block.hpp"
#include "toposweep/workload/block_recompute.hpp"
#include "toposweep/workload/compute_bound.hpp"
#include "toposweep/workload/memory.hpp"
#include "toposweep/workload/ranks.hpp"

namespace toposweep::opt {

StrategyBound::StrategyBound(const Workload& w, const Network& net, const sim::SimOptions& options,
                             PlacementKind kind, Placement placement, BoundKind bound)
    : w_(&w), net_(&net), placement_(std::move(placement)) {
  comm_ = bound == BoundKind::Communication && options.model == sim::NetworkModelKind::Analytical &&
          kind == PlacementKind::RankOrder && net.uniform_servers() && !w.mixed() && w.model.transformer &&
          !w.model.has_tables();
  for (const Arc& a : net.arcs()) fastest_arc_Bps_ = std::max(fastest_arc_Bps_, a.bandwidth_Bps);
  ingress_Bps_.assign(net.vertex_count(), 0);
  for (const Arc& a : net.arcs()) ingress_Bps_[a.dst] += a.bandwidth_Bps;
  node_bytes_.assign(net.vertex_count(), 0);
  if (!(fastest_arc_Bps_ > 0)) fastest_arc_Bps_ = std::numeric_limits<double>::infinity();
}

// The ranks of stage p are the block [p S, (p + 1) S), S = tp cp dp, in Megatron-Core's order
// t + tp (c + cp d) (workload/ranks.hpp; ep = 1): a TP group is tp consecutive ranks, a
// gradient group (dp x cp) the ranks of one t, a send goes to the same offset of another block.
const StrategyBound::Layout& StrategyBound::layout(const Strategy& s) {
  const std::array<std::uint32_t, 4> key{s.tp, s.cp, s.dp, s.pp};
  if (const auto it = layouts_.find(key); it != layouts_.end()) return it->second;
  const std::uint32_t block = s.tp * s.cp * s.dp;
  const auto node = [&](std::uint32_t rank) { return placement_.node_of_gpu.at(rank); };
  Layout l;
  l.tp_inside.assign(s.pp, true);
  l.to_next.assign(s.pp, {});
  l.to_previous.assign(s.pp, {});
  l.cut_per_byte.assign(s.pp, {0, 0, 0});
  for (std::uint32_t p = 0; p < s.pp; ++p) {
    const std::uint32_t base = p * block;
    for (std::uint32_t g = base; g < base + block && l.tp_inside[p]; g += s.tp)
      for (std::uint32_t r = 1; r < s.tp && l.tp_inside[p]; ++r) l.tp_inside[p] = node(g + r) == node(g);
    const auto span = [&](std::uint32_t to) {
      SendSpan out;
      for (std::uint32_t o = 0; o < block && !(out.inside && out.across); ++o)
        (node(base + o) == node(to * block + o) ? out.inside : out.across) = true;
      return out;
    };
    l.to_next[p] = span((p + 1) % s.pp);
    l.to_previous[p] = span((p + s.pp - 1) % s.pp);
    l.cut_per_byte[p] = cut_per_byte(base, s.tp, s.cp * s.dp);
  }
  return layouts_.emplace(key, std::move(l)).first->second;
}

// The least time any instance of a send can take: inside a server the model's own time, across
// servers its bytes over the fastest link (a transfer follows one path; its latency and
// narrowest link only add). The model times a set of sends as its slowest sampled instance or
// more, never below this. (Servers are uniform where the bound has communication terms.)
double StrategyBound::transfer_floor(const SendSpan& span, double bytes) const {
  if (bytes <= 0) return 0;
  double least = std::numeric_limits<double>::infinity();
  if (span.inside) least = sim::intra_node_transfer_time(bytes, net_->intra_link());
  if (span.across) least = std::min(least, bytes / fastest_arc_Bps_);
  return least;
}

// The least time a collective of the gradient groups of a stage can take on any network model
// that respects link capacities, per byte: every instance runs at once, and what a node's
// members need from members on other nodes enters through the node's links (ingress_Bps_). Per
// group with k_v of its k members on node v (k_v < k): an AllReduce brings in the outside
// members' sum (bytes), an AllGather their shards ((k - k_v) / k of its output), a
// ReduceScatter one partial sum per local shard (k_v / k of its input). Groups inside one node:
// 0. The groups: for each t < tp the `replicas` ranks first_rank + t + tp j.
std::array<double, 3> StrategyBound::cut_per_byte(std::uint32_t first_rank, std::uint32_t tp,
                                                  std::uint32_t replicas) {
  std::array<double, 3> worst{0, 0, 0};
  if (replicas < 2) return worst;
  const double k = replicas;
  for (const CollectiveOp op :
       {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    std::fill(node_bytes_.begin(), node_bytes_.end(), 0.0);
    for (std::uint32_t t = 0; t < tp; ++t) {
      members_.clear();
      for (std::uint32_t j = 0; j < replicas; ++j)
        members_.push_back(placement_.node_of_gpu.at(first_rank + t + tp * j));
      std::sort(members_.begin(), members_.end());
      for (std::size_t i = 0; i < members_.size();) {
        std::size_t j = i;
        while (j < members_.size() && members_[j] == members_[i]) ++j;
        const double kv = static_cast<double>(j - i);
        if (kv < k)
          node_bytes_.at(members_[i]) += op == CollectiveOp::AllReduce   ? 1.0
                                         : op == CollectiveOp::AllGather ? (k - kv) / k
                                                                         : kv / k;
        i = j;
      }
    }
    double& w = worst[op == CollectiveOp::AllReduce ? 0 : op == CollectiveOp::AllGather ? 1 : 2];
    for (std::size_t v = 0; v < node_bytes_.size(); ++v)
      if (node_bytes_[v] > 0) w = std::max(w, node_bytes_[v] / ingress_Bps_[v]);
  }
  return worst;
}

double StrategyBound::dp_cut(const Layout& l, std::uint32_t stage, CollectiveOp op, double bytes) {
  if (bytes <= 0) return 0;
  const auto& per_byte = l.cut_per_byte[stage];
  return bytes * (op == CollectiveOp::AllReduce   ? per_byte[0]
                  : op == CollectiveOp::AllGather ? per_byte[1]
                                                  : per_byte[2]);
}

double StrategyBound::operator()(const Strategy& s) {
  if (s.per_layer()) return 0;
  const bool even = s.batch_split == BatchSplit::Even && s.stage_split == StageSplit::Even;
  if (!comm_ || !even) return compute_lower_bound(*w_, s, &costs_);
  const Model& m = w_->model;
  // The collective counts and message size plan_iteration uses (any device gives the counts).
  LayerCostKey key = layer_cost_key(*w_, s);
  if (!w_->per_operator) key.device = KernelDevice{1, 1, 1, 0, 1, {{1, 1}}, 1, 1, {}, 0, 1, 1};
  const TransformerCosts costs = costs_.get(key);  // a copy: the cache may move its entries
  // Block recomputation (strategy.recompute_layers): the skipped blocks' collectives as without it.
  std::optional<TransformerCosts> kept_costs;
  if (partial_recompute(s)) kept_costs = costs_.get(skipped_blocks_key(key));
  ChunkTimes t = chunk_compute_times(*w_, s, &costs_);
  const std::uint32_t chunks = static_cast<std::uint32_t>(t.forward.size());
  const auto ranges = partition_stages(m, chunks);
  const double B = w_->bytes_per_element;
  const double mb = microbatch_size(s, *w_);
  const Layout& where = layout(s);
  // A CP rank's share of a stage boundary's tokens.
  const double cp_share = 1.0 / s.cp;
  // Per device: whether every TP group lies inside one server (then the model times its
  // collectives with intra_node_collective_time on that server's fabric), and that fabric.
  std::vector<const LinkClass*> tp_link(s.pp, nullptr);
  if (s.tp > 1)
    for (std::uint32_t p = 0; p < s.pp; ++p)
      if (where.tp_inside[p]) tp_link[p] = &net_->intra_link();
  // `ranks`: the TP group's, or the expert tensor-parallel sub-group's (its consecutive ranks, so
  // inside the same server as the TP group).
  const auto tp_time = [&](const LinkClass* link, const TpCollectives& n, double bytes, std::uint32_t ranks) {
    if (!link) return 0.0;
    return n.allreduce * sim::intra_node_collective_time(CollectiveOp::AllReduce, ranks, bytes, *link) +
           n.reducescatter *
               sim::intra_node_collective_time(CollectiveOp::ReduceScatter, ranks, bytes, *link) +
           n.allgather * sim::intra_node_collective_time(CollectiveOp::AllGather, ranks, bytes, *link);
  };
  // comm_: a transformer.
  const StageBoundary boundary = stage_boundary(s, true);
  const bool gathers = boundary.gathered;
  t.send_forward.assign(chunks, 0);
  t.send_backward.assign(chunks, 0);
  t.blocking_sends = !s.p2p_overlap;
  const bool split = boundary.split;
  // Parameters of each chunk on one GPU that reduce over the dp x cp group, as the plan counts
  // them (local_params): with ep > 1 (or etp < tp) the routed experts' reduce over their replica groups
  // instead, left out here (admissible: the bound only drops time).
  const double shard = s.tp;
  std::vector<double> chunk_params(chunks, 0);
  for (std::uint32_t c = 0; c < chunks; ++c)
    for (std::uint32_t i = ranges[c].first; i < ranges[c].last; ++i) {
      const Layer& l = m.layers[i];
      chunk_params[c] += l.params_sharded / shard + l.params_replicated +
                         (s.experts_apart() ? 0.0 : l.params_expert / shard);
      if (l.kind == LayerKind::Head) chunk_params[c] += tied_embedding_copy(m, shard, s.pp);
    }
  // Each device's DP stream runs its gradient reductions one after another: the whole
  // gradient once (ZeRO-0: AllReduce, ZeRO-1: ReduceScatter), or every backward pass's
  // (ZeRO-2/3: a ReduceScatter per pass); ZeRO-1/2 then gather the updated weights. SFB
  // compression sends other bytes: no DP term.
  double dp_busy = 0;
  const bool zero3_prefetch = param_gather_overlap(s, m) == ParamGatherOverlap::Prefetch;
  if (s.grad_replicas() > 1 && s.compression == Compression::None)
    for (std::uint32_t p = 0; p < s.pp; ++p) {
      double grads = 0, params = 0;
      for (std::uint32_t c = p; c < chunks; c += s.pp) {
        grads += chunk_params[c] * w_->grad_bytes_per_element;
        params += chunk_params[c];
      }
      double busy = s.zero == 0   ? dp_cut(where, p, CollectiveOp::AllReduce, grads)
                    : s.zero == 1 ? dp_cut(where, p, CollectiveOp::ReduceScatter, grads)
                                  : s.microbatches * dp_cut(where, p, CollectiveOp::ReduceScatter, grads);
      if (s.zero == 1 || s.zero == 2) busy += dp_cut(where, p, CollectiveOp::AllGather, params * B);
      // ZeRO-3 with strategy.param_gather_overlap: every pass's gathers on the DP stream too.
      if (zero3_prefetch)
        for (std::uint32_t c = p; c < chunks; c += s.pp)
          busy += 2.0 * s.microbatches * dp_cut(where, p, CollectiveOp::AllGather, chunk_params[c] * B);
      dp_busy = std::max(dp_busy, busy);
    }
  for (std::uint32_t c = 0; c < chunks; ++c) {
    const std::uint32_t p = c % s.pp;
    const LinkClass* link = tp_link[p];
    double exposed_f = 0, exposed_b = 0, hidden_f = 0, hidden_b = 0;
    ChunkRecompute blocks(s);
    for (std::uint32_t i = ranges[c].first; i < ranges[c].last; ++i) {
      const bool skips = blocks.skips(m.layers[i]);
      const LayerCost* cost = cost_of_layer(skips ? *kept_costs : costs, m.layers[i]);
      if (!cost) continue;
      exposed_f += tp_time(link, cost->forward.exposed, cost->tp_bytes, s.tp);
      exposed_b += tp_time(link, cost->backward.exposed, cost->tp_bytes, s.tp);
      exposed_f += tp_time(link, cost->forward.expert, cost->expert_tp_bytes, s.expert_tp());
      exposed_b += tp_time(link, cost->backward.expert, cost->expert_tp_bytes, s.expert_tp());
      hidden_f += tp_time(link, cost->forward.hidden, cost->tp_bytes, s.tp);
      hidden_b += tp_time(link, cost->backward.hidden, cost->tp_bytes, s.tp);
    }
    // Scatter/gather: the received boundary tensor is gathered before the pass uses it.
    if (gathers && link && c > 0)
      exposed_f += sim::intra_node_collective_time(
          CollectiveOp::AllGather, s.tp, mb * m.layers[ranges[c - 1].last - 1].output_elements * B * cp_share,
          *link);
    if (gathers && link && c + 1 < chunks)
      exposed_b += sim::intra_node_collective_time(
          CollectiveOp::AllGather, s.tp, mb * m.layers[ranges[c].last - 1].output_elements * B * cp_share,
          *link);
    // ZeRO-3: every pass first gathers the chunk's weights over the DP group, on the compute
    // stream (iteration.cpp, add_zero3_gathers); with strategy.param_gather_overlap on the DP
    // stream (dp_busy above), of which the bound keeps nothing on the compute path.
    if (s.zero >= 3 && !zero3_prefetch) {
      const double gather = dp_cut(where, p, CollectiveOp::AllGather, chunk_params[c] * B);
      exposed_f += gather;
      exposed_b += gather;
    }
    // The pass's collectives under its GEMMs start with it on their own stream; the pass's send
    // and the device's next pass wait for them.
    t.forward[c] = std::max(t.forward[c] + exposed_f, hidden_f);
    t.backward[c] = std::max(t.backward[c] + exposed_b, hidden_b);
    // The boundary activations (forward) or their gradients (backward), 1/tp each when split.
    const double elements = m.layers[ranges[c].last - 1].output_elements;
    const double bytes = mb * elements * B / (split ? s.tp : 1) * cp_share;
    if (c + 1 < chunks) t.send_forward[c] = transfer_floor(where.to_next[p], bytes);
    if (c > 0) {
      const double back =
          mb * m.layers[ranges[c - 1].last - 1].output_elements * B / (split ? s.tp : 1) * cp_share;
      t.send_backward[c] = transfer_floor(where.to_previous[p], back);
    }
  }
  // Sums in another order than the simulator's: stay safely below it.
  return std::max(pipeline_lower_bound(s, t), dp_busy) * (1 - 1e-10);
}

}  // namespace toposweep::opt
