#include "toposweep/opt/strategy_search.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <nlohmann/json.hpp>

#include "toposweep/opt/compression.hpp"
#include "toposweep/opt/workload_on.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/workload/compute_bound.hpp"
#include "toposweep/workload/iteration.hpp"

namespace toposweep::opt {

StrategyScorer::StrategyScorer(const Workload& workload, const Network& network, sim::SimOptions options,
                               std::vector<std::uint32_t> position_of_node)
    : workload_(&workload),
      network_(&network),
      options_(std::move(options)),
      position_of_node_(std::move(position_of_node)),
      device_of_server_(device_of_servers(workload, network)) {}

Placement StrategyScorer::placement_for(std::uint32_t gpus) const {
  Placement p = sim::rank_order_on(*network_, gpus);
  if (!position_of_node_.empty())
    for (auto& node : p.node_of_gpu) node = position_of_node_.at(node);
  return p;
}

Placement StrategyScorer::placement_of(const Strategy& s) const {
  if (placement_kind_ == PlacementKind::Metis && position_of_node_.empty())
    return place_strategy(*network_, s.gpus(), s.tp, s.pp, PlacementKind::Metis, 1, device_of_server_)
        .placement;
  return placement_for(s.gpus());
}

std::optional<double> StrategyScorer::iteration_time(const Strategy& s) {
  const std::string key = strategy_to_json(s).dump();
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  if (s.gpus() > network_->gpu_count())
    throw BadInput("strategy needs " + std::to_string(s.gpus()) + " GPUs but the network has " +
                       std::to_string(network_->gpu_count()),
                   "strategy.dp");
  const Placement placement = placement_of(s);
  // plan_on: with compression = sfb the layers are chosen here, as `simulate` would.
  const IterationPlan plan = plan_on(*network_, *workload_, s, placement, options_, &layer_costs_);
  std::optional<double> time;
  if (plan.feasible) {
    ++simulations_;
    const auto result = sim::simulate_iteration(*network_, plan.graph, options_, placement);
    time = result.job(0).iteration_time_s;
  }
  memo_.emplace(key, time);
  return time;
}

SearchMethod resolve_search_method(SearchMethod method, const Workload& w, std::uint32_t gpus,
                                   const StrategySpace& space) {
  if (method != SearchMethod::Auto) return method;
  if (w.model.has_tables() || (!w.model.transformer && !w.model.layers.empty())) return SearchMethod::Mcmc;
  const StrategyCount count = for_each_strategy(w, gpus, space, {});
  return count.feasible <= kAutoExhaustiveLimit ? SearchMethod::Exhaustive : SearchMethod::Mcmc;
}

StrategySearchResult exhaustive_strategy_search(StrategyScorer& scorer, const Workload& w,
                                                const StrategySpace& space, std::uint32_t top,
                                                const SearchProgress& progress) {
  if (top == 0) throw BadInput("optimize.top must be at least 1", "optimize.top");
  StrategyCount counts;
  const auto feasible = feasible_strategies(w, scorer.gpus(), space, &counts);
  StrategySearchResult r;
  r.method = "exhaustive";
  r.candidates = counts.checked;
  r.infeasible = counts.infeasible;
  // Bounds, then candidates in bound order (stable: enumeration order among equal bounds).
  LayerCostCache costs;
  std::vector<double> bound(feasible.size());
  for (std::size_t i = 0; i < feasible.size(); ++i) bound[i] = compute_lower_bound(w, feasible[i], &costs);
  std::vector<std::uint32_t> order(feasible.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return bound[a] < bound[b]; });
  // The k best so far as (time, enumeration index): the brute force's order.
  std::vector<std::pair<double, std::uint32_t>> best;
  const auto kth = [&] {
    return best.size() < top ? std::numeric_limits<double>::infinity() : best.back().first;
  };
  const auto started = std::chrono::steady_clock::now();
  auto last_report = started;
  std::size_t next = 0;
  for (; next < order.size(); ++next) {
    const std::uint32_t i = order[next];
    // Strictly above: a candidate whose bound equals the k-th time may tie it and come first in
    // enumeration order.
    if (bound[i] > kth()) break;
    const auto t = scorer.iteration_time(feasible[i]);
    if (!t) {
      ++r.infeasible;
      continue;
    }
    ++r.evaluated;
    const std::pair<double, std::uint32_t> entry{*t, i};
    if (best.size() < top || entry < best.back()) {
      best.insert(std::upper_bound(best.begin(), best.end(), entry), entry);
      if (best.size() > top) best.pop_back();
    }
    if (progress) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_report > std::chrono::seconds(5)) {
        last_report = now;
        progress(r.evaluated, order.size() - next - 1, std::chrono::duration<double>(now - started).count());
      }
    }
  }
  r.pruned = order.size() - next;
  if (best.empty())
    throw BadInput("no parallelization strategy of " + w.model.name + " fits in device memory on " +
                       std::to_string(scorer.gpus()) + " GPUs",
                   "model.name");
  for (const auto& [t, i] : best) r.top.push_back({feasible[i], t});
  r.best = r.top.front().strategy;
  r.iteration_time_s = r.top.front().iteration_time_s;
  return r;
}

StrategySearchResult mcmc_strategy_search(StrategyScorer& scorer, const Workload& w, const Strategy& start,
                                          const McmcStrategySettings& settings, const StrategySpace& space) {
  if (settings.metropolis.budget == 0)
    throw BadInput("the MCMC budget must be at least 1", "optimize.mcmc_budget");
  const std::uint32_t gpus = scorer.gpus();
  const auto start_time = scorer.iteration_time(start);
  if (!start_time) throw BadInput("the starting strategy does not fit in device memory", "strategy.dp");

  std::vector<Strategy> globals;
  StrategyCount counts;
  if (settings.global_moves) globals = feasible_strategies(w, gpus, space, &counts);
  const auto degree_choices = divisors(gpus);
  const bool layers_ok = settings.layer_moves && !w.model.transformer && !w.model.layers.empty();
  const bool tables_ok = settings.table_moves && w.model.has_tables();

  std::function<std::optional<Strategy>(const Strategy&, std::mt19937_64&)> propose =
      [&](const Strategy& s, std::mt19937_64& rng) -> std::optional<Strategy> {
    std::vector<int> moves;
    if (globals.size() > 1) moves.push_back(0);
    if (layers_ok && s.tp == 1 && s.pp == 1 && s.zero == 0) moves.push_back(1);
    if (tables_ok) moves.push_back(2);
    if (moves.empty()) return std::nullopt;
    Strategy next = s;
    switch (moves[rng() % moves.size()]) {
      case 0: {
        // Half the time a FlexFlow-style local move (one of tp/pp, microbatches, schedule,
        // recompute, ZeRO stage changes), else a jump anywhere in the global space.
        const Strategy* pick = &globals[rng() % globals.size()];
        if (rng() % 2 == 0) {
          std::vector<const Strategy*> near;
          for (const auto& g : globals) {
            const int changed = (g.tp != s.tp || g.pp != s.pp) + (g.microbatches != s.microbatches) +
                                (g.schedule != s.schedule || g.virtual_stages != s.virtual_stages) +
                                (g.recompute != s.recompute) + (g.zero != s.zero) +
                                (g.sequence_parallel != s.sequence_parallel) +
                                (g.tp_overlap != s.tp_overlap) + (g.dp_overlap != s.dp_overlap) +
                                (g.batch_split != s.batch_split) + (g.stage_split != s.stage_split) +
                                (g.compression != s.compression);
            if (changed == 1) near.push_back(&g);
          }
          if (!near.empty()) pick = near[rng() % near.size()];
        }
        const Strategy& g = *pick;
        next.dp = g.dp, next.tp = g.tp, next.pp = g.pp, next.microbatches = g.microbatches;
        next.schedule = g.schedule, next.virtual_stages = g.virtual_stages, next.recompute = g.recompute;
        next.zero = g.zero, next.sequence_parallel = g.sequence_parallel, next.tp_overlap = g.tp_overlap;
        next.dp_overlap = g.dp_overlap;
        next.batch_split = g.batch_split, next.stage_split = g.stage_split, next.compression = g.compression;
        if (next.tp != 1 || next.pp != 1) next.layer_degree.clear();
        break;
      }
      case 1: {
        if (next.layer_degree.empty()) next.layer_degree.assign(w.model.layers.size(), 1);
        next.layer_degree[rng() % next.layer_degree.size()] =
            static_cast<std::uint32_t>(degree_choices[rng() % degree_choices.size()]);
        break;
      }
      case 2: {
        if (next.table_owner.empty()) next.table_owner = table_owners(s, w.model.tables.size(), gpus);
        next.table_owner[rng() % next.table_owner.size()] = static_cast<std::uint32_t>(rng() % gpus);
        break;
      }
    }
    if (next == s) return std::nullopt;
    // Every move keeps the strategy valid (globals come from the enumeration, degrees are
    // divisors of the GPU count, owners are ranks) except what validate_strategy refuses with
    // per-layer degrees: a ZeRO stage, a proportional batch split. Such proposals are not made.
    if (next.per_layer() && (next.zero != 0 || next.batch_split != BatchSplit::Even)) return std::nullopt;
    return next;
  };
  std::function<std::optional<double>(const Strategy&)> cost = [&](const Strategy& s) {
    return scorer.iteration_time(s);
  };
  const auto r = metropolis_search<Strategy>(start, *start_time, propose, cost, settings.metropolis);
  StrategySearchResult out;
  out.method = "mcmc";
  out.best = r.best;
  out.iteration_time_s = r.best_cost;
  out.evaluated = r.proposals - r.rejected_infeasible;
  out.infeasible = r.rejected_infeasible + counts.infeasible;
  return out;
}

Strategy pure_data_parallel(std::uint32_t gpus) {
  Strategy s;
  s.dp = gpus;
  return s;
}

}  // namespace toposweep::opt
