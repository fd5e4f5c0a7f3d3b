#include "toposweep/opt/compression.hpp"

#include <algorithm>

#include "toposweep/workload/hetero.hpp"
#include "toposweep/workload/ranks.hpp"

namespace toposweep::opt {
namespace {

// One collective on the stage's DP groups, alone on an idle network, with the plan's placement.
double collective_seconds(const Network& net, const sim::SimOptions& options, const Placement& placement,
                          const GroupSet& groups, std::uint32_t gpus, CollectiveOp op, double bytes) {
  TaskGraph g;
  g.gpus = gpus;
  Task t;
  t.kind = TaskKind::Collective;
  t.purpose = CommPurpose::DataParallel;
  t.op = op;
  t.is_mutable = true;
  t.bytes = bytes;
  t.stream = g.add_stream("dp");
  t.group_set = g.add_group_set(groups);
  g.add(t);
  return sim::simulate_iteration(net, g, options, placement).job(0).iteration_time_s;
}

double ring_share(double n) {
  return (n - 1) / n;
}

}  // namespace

SfbChoice choose_sfb_layers(const Network& net, const Workload& w, const IterationPlan& plain,
                            const Placement& placement, const sim::SimOptions& options) {
  SfbChoice out;
  const Strategy& s = plain.strategy;
  if (s.dp < 2 || s.cp > 1 || s.zero > 0 || s.per_layer() || w.model.has_tables()) return out;
  const DeviceShares shares = device_shares(w, s);
  const AxisGrid grid = axis_grid(s);
  const double shard = w.model.transformer ? s.tp : 1;
  const double G = w.grad_bytes_per_element, n = s.dp;
  std::vector<double> before(s.pp, 0), after(s.pp, 0);
  for (std::uint32_t c = 0; c < shares.chunks.size(); ++c) {
    const std::uint32_t p = c % s.pp;
    const GroupSet groups = grid.groups(Axis::Dp, {{Axis::Pp, p}});
    for (std::uint32_t i = shares.chunks[c].first; i < shares.chunks[c].last; ++i) {
      const Layer& l = w.model.layers[i];
      const double grad = (l.params_sharded / shard + l.params_replicated) * G;
      before[p] += 2 * grad * ring_share(n);
      if (!(l.sfb_elements > 0) || !(l.params_sharded > 0)) {
        after[p] += 2 * grad * ring_share(n);
        continue;
      }
      SfbLayerChoice x;
      x.layer = i;
      x.name = l.name;
      x.stage = p;
      x.allreduce_bytes = l.params_sharded / shard * G;
      x.allgather_bytes = sfb_gather_bytes(w, s, shares, l);
      x.allreduce_s = collective_seconds(net, options, placement, groups, plain.graph.gpus,
                                         CollectiveOp::AllReduce, x.allreduce_bytes);
      x.allgather_s = collective_seconds(net, options, placement, groups, plain.graph.gpus,
                                         CollectiveOp::AllGather, x.allgather_bytes);
      x.rebuild_s = sfb_rebuild(w, s, shares, l, p).seconds;
      x.chosen = x.allgather_s + x.rebuild_s < x.allreduce_s;
      const double bias = l.params_replicated * G;
      after[p] +=
          x.chosen ? 2 * bias * ring_share(n) + x.allgather_bytes * ring_share(n) : 2 * grad * ring_share(n);
      if (x.chosen) out.chosen.push_back(i);
      out.layers.push_back(std::move(x));
    }
  }
  std::sort(out.chosen.begin(), out.chosen.end());
  out.dp_bytes_per_rank_before = *std::max_element(before.begin(), before.end());
  out.dp_bytes_per_rank_after = *std::max_element(after.begin(), after.end());
  return out;
}

IterationPlan plan_on(const Network& net, const Workload& w, const Strategy& s, const Placement& placement,
                      const sim::SimOptions& options, LayerCostCache* cache, SfbChoice* choice) {
  IterationPlan plan = plan_iteration(w, s, cache);
  if (s.compression != Compression::Sfb || !s.sfb_layers.empty() || !plan.feasible) return plan;
  SfbChoice chosen = choose_sfb_layers(net, w, plan, placement, options);
  if (!chosen.chosen.empty()) {
    Strategy with = s;
    with.sfb_layers = chosen.chosen;
    plan = plan_iteration(w, with, cache);
  }
  if (choice) *choice = std::move(chosen);
  return plan;
}

}  // namespace toposweep::opt
