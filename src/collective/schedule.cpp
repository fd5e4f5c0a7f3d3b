#include "toposweep/collective/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <utility>

#include "toposweep/util/error.hpp"

namespace toposweep {

namespace {

// Chunk count of a pipeline of `depth` hops that minimises (depth - 1 + c)(T/c + alpha).
double pipelined_time(double depth, double T, double alpha) {
  if (alpha <= 0 || depth <= 1) return T + (depth > 0 ? depth : 1) * alpha;
  const double d = depth - 1;
  auto cost = [&](double c) { return (d + c) * (T / c + alpha); };
  const double c_star = std::sqrt(d * T / alpha);
  double best = cost(1);
  for (double c : {std::floor(c_star), std::ceil(c_star)})
    if (c >= 1) best = std::min(best, cost(c));
  return best;
}

// The cost of a phase's most loaded arc and slowest path, from per-arc loads.
PhaseCost finish_cost(const Phase& phase, double step_bandwidth_s, double max_latency) {
  PhaseCost cost;
  if (phase.pipeline_depth > 0) {
    const double total = pipelined_time(phase.pipeline_depth, step_bandwidth_s, max_latency);
    cost.bandwidth_s = step_bandwidth_s;
    cost.latency_s = total - step_bandwidth_s;
  } else {
    cost.bandwidth_s = phase.repeat * step_bandwidth_s;
    cost.latency_s = phase.latency_steps * max_latency;
  }
  return cost;
}

[[noreturn]] void unreachable(const Transfer& t) {
  throw BadInput(
      "compute node " + std::to_string(t.dst) + " is unreachable from compute node " + std::to_string(t.src),
      "collective members");
}

// Routing::Ecmp: loads are the expected ones (even split per hop), added into a per-arc array in
// transfer order; flows take one hashed path each.
PhaseCost ecmp_phase_cost(RouteCache& routes, const Phase& phase, std::vector<Flow>* flows,
                          std::uint32_t stage) {
  const Network& net = routes.network();
  std::span<double> arc_bytes = routes.zeroed_arc_scratch();
  std::vector<ArcId> touched;
  struct Rezero {
    std::span<double> bytes;
    const std::vector<ArcId>& touched;
    ~Rezero() {
      for (ArcId a : touched) bytes[a] = 0;
    }
  } rezero{arc_bytes, touched};
  double max_latency = 0;
  std::vector<PairBytes> valiant;
  for (const Transfer& t : phase.transfers) {
    if (t.src == t.dst || t.bytes <= 0) continue;
    const auto direct = parallel_arcs(net, t.src, t.dst);
    if (!direct.empty()) {
      // Neighbours: the transfer spreads over parallel links in proportion to their bandwidth.
      double total_bw = 0;
      for (ArcId a : direct) total_bw += net.arc(a).bandwidth_Bps;
      for (ArcId a : direct) {
        const double share = t.bytes * net.arc(a).bandwidth_Bps / total_bw;
        if (arc_bytes[a] == 0) touched.push_back(a);
        arc_bytes[a] += share;
        max_latency = std::max(max_latency, net.arc(a).latency_s);
        if (flows) flows->push_back(Flow{{a}, share * phase.repeat, stage});
      }
      continue;
    }
    if (routes.intermediate_groups(t.src, t.dst) > 0) {
      // Valiant: split together after the loop (RouteCache::valiant_split), one walk per source
      // and intermediate group instead of one per transfer and intermediate group.
      valiant.push_back({t.src, t.dst, t.bytes});
      if (flows) {
        auto path = routes.hashed_path(t.src, t.dst);
        if (!path) unreachable(t);
        flows->push_back(Flow{std::move(*path), t.bytes * phase.repeat, stage});
      }
      continue;
    }
    const auto latency = routes.ecmp_split(t.src, t.dst, t.bytes, arc_bytes, touched);
    if (!latency) unreachable(t);
    max_latency = std::max(max_latency, *latency);
    if (flows) flows->push_back(Flow{*routes.hashed_path(t.src, t.dst), t.bytes * phase.repeat, stage});
  }
  if (!valiant.empty()) {
    const RouteCache::ValiantSplit v = routes.valiant_split(valiant, arc_bytes, touched);
    if (v.unreachable) unreachable(Transfer{valiant[*v.unreachable].src, valiant[*v.unreachable].dst, 0});
    max_latency = std::max(max_latency, v.latency);
  }
  double step_bandwidth_s = 0;
  for (ArcId a : touched)
    step_bandwidth_s = std::max(step_bandwidth_s, arc_bytes[a] / net.arc(a).bandwidth_Bps);
  return finish_cost(phase, step_bandwidth_s, max_latency);
}

}  // namespace

PhaseCost phase_cost(RouteCache& routes, const Phase& phase, std::vector<Flow>* flows, std::uint32_t stage) {
  if (phase.routing == Routing::Ecmp) return ecmp_phase_cost(routes, phase, flows, stage);
  const Network& net = routes.network();
  std::vector<std::pair<ArcId, double>> loads;
  loads.reserve(phase.transfers.size());
  double max_latency = 0;
  // Spreading: multi-hop transfers take the equal-cost path whose arcs are least busy so far,
  // like ECMP with flowlet balancing.
  const bool spread = phase.routing == Routing::Spread;
  // Every arc made busy is also in `loads`: those entries go back to 0 on the way out, whether
  // the phase is costed or a transfer is unreachable.
  std::span<double> arc_busy_s;
  if (spread) arc_busy_s = routes.zeroed_arc_scratch();
  struct Rezero {
    std::span<double> busy;
    const std::vector<std::pair<ArcId, double>>& touched;
    ~Rezero() {
      if (!busy.empty())
        for (const auto& [a, load] : touched) busy[a] = 0;
    }
  } rezero{arc_busy_s, loads};
  // pass 0: transfers between neighbours; pass 1: routed ones. When spreading, the routed
  // transfers go second so that they see the fixed load of the direct ones.
  auto place = [&](const Transfer& t, int pass) {
    if (t.src == t.dst || t.bytes <= 0) return;
    const auto direct = parallel_arcs(net, t.src, t.dst);
    if (pass == 0 && !direct.empty()) {
      // Neighbours: the transfer spreads over parallel links in proportion to their bandwidth.
      double total_bw = 0;
      for (ArcId a : direct) total_bw += net.arc(a).bandwidth_Bps;
      for (ArcId a : direct) {
        const double share = t.bytes * net.arc(a).bandwidth_Bps / total_bw;
        loads.emplace_back(a, share);
        if (spread) arc_busy_s[a] += share / net.arc(a).bandwidth_Bps;
        max_latency = std::max(max_latency, net.arc(a).latency_s);
        if (flows) flows->push_back(Flow{{a}, share * phase.repeat, stage});
      }
      return;
    }
    if (pass == 0 || !direct.empty()) return;
    auto path = spread ? routes.spread_path(t.src, t.dst, arc_busy_s) : routes.shortest_path(t.src, t.dst);
    if (!path) unreachable(t);
    for (ArcId a : *path) {
      loads.emplace_back(a, t.bytes);
      if (spread) arc_busy_s[a] += t.bytes / net.arc(a).bandwidth_Bps;
    }
    max_latency = std::max(max_latency, path_latency(net, *path));
    if (flows) flows->push_back(Flow{std::move(*path), t.bytes * phase.repeat, stage});
  };
  if (spread) {
    for (const Transfer& t : phase.transfers) place(t, 0);
    for (const Transfer& t : phase.transfers) place(t, 1);
  } else {
    for (const Transfer& t : phase.transfers) place(t, 0), place(t, 1);  // flows in transfer order
  }
  std::sort(loads.begin(), loads.end());
  double step_bandwidth_s = 0;
  for (std::size_t i = 0; i < loads.size();) {
    const ArcId a = loads[i].first;
    double sum = 0;
    for (; i < loads.size() && loads[i].first == a; ++i) sum += loads[i].second;
    step_bandwidth_s = std::max(step_bandwidth_s, sum / net.arc(a).bandwidth_Bps);
  }
  return finish_cost(phase, step_bandwidth_s, max_latency);
}

void cost_phases(RouteCache& routes, const std::vector<Phase>& phases, bool with_flows,
                 CollectivePlan& plan) {
  for (const Phase& phase : phases) {
    const PhaseCost c = phase_cost(routes, phase, with_flows ? &plan.flows : nullptr, plan.stages);
    plan.time_s += c.total();
    plan.latency_s += c.latency_s;
    ++plan.stages;
  }
}

}  // namespace toposweep
