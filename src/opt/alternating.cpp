#include "toposweep/opt/alternating.hpp"

#include <chrono>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/traffic.hpp"

namespace toposweep::opt {
namespace {

RoundRecord record(std::uint32_t round, double time, double best, const Strategy& s, const TopologyDesign& d,
                   std::uint64_t simulations) {
  RoundRecord r;
  r.round = round;
  r.iteration_time_s = time;
  r.best_time_s = best;
  r.strategy = s;
  r.strides = d.strides;
  r.mp_links = d.mp_links;
  r.ring_ports = d.ring_ports;
  r.mp_ports = d.mp_ports;
  r.simulations = simulations;
  return r;
}

}  // namespace

TrafficDemand strategy_traffic(const Workload& workload, const Strategy& strategy, std::uint32_t servers,
                               std::uint32_t gpus_per_server) {
  const IterationPlan plan = plan_iteration(workload, strategy);
  return derive_traffic(plan.graph, rank_order_placement(strategy.gpus(), gpus_per_server), servers);
}

AlternatingResult alternating_optimize(const Workload& w, const AlternatingSettings& st) {
  const auto started = std::chrono::steady_clock::now();
  auto budget_spent = [&] {
    return st.time_budget_s > 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() >=
               st.time_budget_s;
  };
  const std::uint32_t gpn = std::max<std::uint32_t>(1, st.finder.server.gpus);
  const std::uint32_t gpus = st.servers * gpn;
  // Round 0: pure data parallelism; a model it does not fit (a MoE model's experts) starts from
  // the first pure data-parallel strategy that fits with its experts split (optimize.ep), its
  // states sharded (optimize.zero_stages) and its activations recomputed (optimize.recompute),
  // in that order of preference, each list in its order. Each start carries what the space fixes
  // (the bucket, the configured recomputation modules and blocks), as every strategy searched does.
  std::vector<Strategy> starts{st.space.fixed(pure_data_parallel(gpus))};
  validate_strategy(starts.front(), w, gpus);
  const bool moe = w.model.transformer && w.model.transformer->moe.has_value();
  for (const std::uint32_t ep : moe ? st.space.values(&StrategyKnobs::ep) : std::vector<std::uint32_t>{})
    for (const std::uint8_t zero : st.space.values(&StrategyKnobs::zero))
      for (const Recompute recompute : st.space.values(&StrategyKnobs::recompute)) {
        Strategy s = starts.front();
        s.ep = ep;
        s.zero = zero;
        s.recompute = recompute;
        if (s == starts.front()) continue;
        try {
          validate_strategy(s, w, gpus);
        } catch (const BadInput&) {
          continue;  // ep not dividing the GPUs or the experts
        }
        starts.push_back(s);
      }
  AlternatingResult out;
  Strategy current;
  TopologyDesign design;
  bool found_start = false;
  for (const Strategy& s : starts) {
    design = find_topology(strategy_traffic(w, s, st.servers, gpn), st.finder);
    StrategyScorer scorer(w, design.network, st.sim, design.position_of_node);
    const auto t = scorer.iteration_time(s);
    if (!t) continue;
    current = s;
    out.baseline_time_s = out.best_time_s = *t;
    out.best_strategy = current;
    out.rounds.push_back(record(0, *t, *t, current, design, scorer.simulations()));
    found_start = true;
    break;
  }
  if (!found_start)
    throw BadInput(
        "pure data parallelism of " + w.model.name + " does not fit in device memory" +
            (moe ? " at any ep, ZeRO stage and recomputation of optimize.ep, zero_stages and recompute" : ""),
        "model.name");
  out.best_design = design;

  std::uint32_t stale = 0;
  out.stop_reason = "max_rounds";
  for (std::uint32_t round = 1; round <= st.max_rounds; ++round) {
    if (stale >= st.patience) {
      out.stop_reason = "converged";
      break;
    }
    if (budget_spent()) {
      out.stop_reason = "time_budget";
      break;
    }
    // Strategy step on the current network.
    StrategyScorer scorer(w, design.network, st.sim, design.position_of_node);
    StrategySearchResult found;
    if (st.search == SearchMethod::Exhaustive) {
      found = exhaustive_strategy_search(scorer, w, st.space);
      // The walk so far may hold a finer strategy (per-layer, tables) than the global space.
      if (const auto t = scorer.iteration_time(current); t && *t < found.iteration_time_s) {
        found.best = current;
        found.iteration_time_s = *t;
      }
    } else {
      McmcStrategySettings ms = st.mcmc;
      ms.metropolis.seed = st.mcmc.metropolis.seed + round;
      found = mcmc_strategy_search(scorer, w, current, ms, st.space);
    }
    // Topology step for the strategy found; keep the old network if the new one is slower.
    TopologyDesign next = find_topology(strategy_traffic(w, found.best, st.servers, gpn), st.finder);
    StrategyScorer next_scorer(w, next.network, st.sim, next.position_of_node);
    const auto t_next = next_scorer.iteration_time(found.best);
    double time = found.iteration_time_s;
    if (t_next && *t_next <= time) {
      design = std::move(next);
      time = *t_next;
    }
    current = found.best;
    if (time < out.best_time_s) {
      out.best_time_s = time;
      out.best_strategy = current;
      out.best_design = design;
      stale = 0;
    } else {
      ++stale;
    }
    out.rounds.push_back(record(round, time, out.best_time_s, current, design,
                                scorer.simulations() + next_scorer.simulations()));
  }
  if (out.stop_reason == "max_rounds" && stale >= st.patience) out.stop_reason = "converged";
  return out;
}

}  // namespace toposweep::opt
