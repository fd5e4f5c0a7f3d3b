#include "toposweep/opt/strategy_search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <nlohmann/json.hpp>

#include "toposweep/opt/compression.hpp"
#include "toposweep/opt/workload_on.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/workload/compute_bound.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/strategy_knobs.hpp"

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

namespace {

// The k best so far as (time, enumeration index), ascending: the brute force's order.
using TopList = std::vector<std::pair<double, std::uint32_t>>;

double kth_time(const TopList& best, std::uint32_t top) {
  return best.size() < top ? std::numeric_limits<double>::infinity() : best.back().first;
}

void offer(TopList& best, std::uint32_t top, double time, std::uint32_t index) {
  const std::pair<double, std::uint32_t> entry{time, index};
  if (best.size() < top || entry < best.back()) {
    best.insert(std::upper_bound(best.begin(), best.end(), entry), entry);
    if (best.size() > top) best.pop_back();
  }
}

// The serial branch and bound: walks the bound-sorted order, taking each candidate's time from
// `outcome(position)` (nullopt: its plan does not fit), until the next bound is above the k-th
// best time. Strictly above: a candidate whose bound equals the k-th time may tie it and come
// first in enumeration order.
struct Walk {
  TopList best;
  std::size_t stop = 0;  // positions [0, stop) were taken
  std::uint64_t evaluated = 0, infeasible = 0;
};

template <class Outcome>
Walk serial_walk(const std::vector<std::uint32_t>& order, const std::vector<double>& bound, std::uint32_t top,
                 Outcome&& outcome) {
  Walk w;
  for (; w.stop < order.size(); ++w.stop) {
    const std::uint32_t i = order[w.stop];
    if (bound[i] > kth_time(w.best, top)) break;
    const std::optional<double> t = outcome(w.stop);
    if (!t) {
      ++w.infeasible;
      continue;
    }
    ++w.evaluated;
    offer(w.best, top, *t, i);
  }
  return w;
}

// Per-candidate cost estimate for balancing a round: a plan's tasks grow with its passes.
double estimated_cost(const Strategy& s) {
  const double chunks = s.pp * (s.schedule == PipelineSchedule::Interleaved ? s.virtual_stages : 1);
  return 64 + chunks * s.microbatches;
}

// The search split over the ranks of `team`, in rounds. Round r takes the next positions of the
// bound-sorted order whose bounds are not above K_r, the k-th best time of everything simulated
// so far (the same on every rank); those are split over the ranks (largest estimated cost to the
// least loaded rank), simulated, and every rank gathers every outcome, so the top-k and K are
// the same everywhere. The rounds stop at the first position whose bound is above K.
//
// Why the answer is the serial one, bit for bit: the rounds simulate a prefix [0, n_p) of the
// order (within a round the bounds not above K are a prefix, and a round that stops short ends
// the search). The serial walk simulates a prefix [0, n_s) with n_s <= n_p: it takes position j
// when bound_j <= kth([0, j)), and kth([0, j)) <= kth([0, a)) = K of j's round (start a <= j; more
// candidates can only lower the k-th time), so the rounds took j too. The result is then the
// serial walk itself, replayed over the gathered times (serial_walk with a lookup), so the top
// list, the counts and the tie order are the serial search's by construction; times are equal
// because every rank simulates a candidate with the same code and inputs. A lookup of a
// position the rounds did not simulate would contradict n_s <= n_p and fails loudly.
struct Rounds {
  std::vector<double> time;         // per position, NaN: does not fit (or not simulated)
  std::vector<std::uint8_t> taken;  // per position: simulated by some rank
  std::vector<std::uint8_t> fresh;  // per position: a new simulation (not memoised before)
  std::uint64_t simulated = 0;      // by all ranks together
};

constexpr std::uint64_t kFailed = 2;  // SearchOutcome::fresh of a candidate whose simulation threw

Rounds search_rounds(StrategyScorer& scorer, const std::vector<Strategy>& feasible,
                     const std::vector<std::uint32_t>& order, const std::vector<double>& bound,
                     std::uint32_t top, SearchTeam& team, const SearchProgress& progress) {
  const std::size_t n = order.size();
  const std::uint32_t ranks = team.size(), me = team.rank();
  Rounds out;
  out.time.assign(n, std::numeric_limits<double>::quiet_NaN());
  out.taken.assign(n, 0);
  out.fresh.assign(n, 0);
  TopList best;
  // A round of 50 to 200 ms of simulation on the slowest rank: long enough that the two
  // collectives per round cost nothing, short enough that K stays fresh.
  constexpr double kShortRound = 0.05, kLongRound = 0.2;
  std::size_t batch = 2 * std::size_t{ranks};
  const auto started = std::chrono::steady_clock::now();
  auto last_report = started;
  std::vector<std::pair<double, std::size_t>> work;
  std::vector<double> load(ranks);
  std::vector<SearchOutcome> mine;
  std::size_t next = 0;
  while (next < n) {
    const double K = kth_time(best, top);
    if (bound[order[next]] > K) break;
    const std::size_t end = std::min(n, next + batch);
    std::size_t last = next;
    while (last < end && bound[order[last]] <= K) ++last;
    // Longest first to the least loaded rank (lowest rank on ties): the same split everywhere.
    work.clear();
    for (std::size_t pos = next; pos < last; ++pos)
      work.emplace_back(-estimated_cost(feasible[order[pos]]), pos);
    std::sort(work.begin(), work.end());
    std::fill(load.begin(), load.end(), 0.0);
    mine.clear();
    for (const auto& [cost, pos] : work) {
      const auto r = static_cast<std::uint32_t>(std::min_element(load.begin(), load.end()) - load.begin());
      load[r] -= cost;
      if (r == me) mine.push_back({pos, 0, 0});
    }
    const auto round_start = std::chrono::steady_clock::now();
    // A failure on one rank ends the search on every rank at the same round (fresh = kFailed),
    // so no rank is left waiting in a collective; the failing rank rethrows its own error.
    std::exception_ptr failure;
    for (SearchOutcome& o : mine) {
      try {
        const std::uint64_t before = scorer.simulations();
        const auto t = scorer.iteration_time(feasible[order[o.position]]);
        o.time_s = t ? *t : std::numeric_limits<double>::quiet_NaN();
        o.fresh = scorer.simulations() > before ? 1 : 0;
      } catch (...) {
        failure = std::current_exception();
        o.fresh = kFailed;
        break;
      }
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - round_start).count();
    const std::vector<SearchOutcome> all = team.all_gather(mine);
    const double slowest = team.all_max(seconds);
    for (const SearchOutcome& o : all)
      if (o.fresh == kFailed) {
        if (failure) std::rethrow_exception(failure);
        throw RuntimeFailure("strategy search: another rank failed to simulate candidate " +
                             strategy_to_json(feasible[order[o.position]]).dump());
      }
    for (const SearchOutcome& o : all) {
      out.taken[o.position] = 1;
      out.time[o.position] = o.time_s;
      out.fresh[o.position] = static_cast<std::uint8_t>(o.fresh);
      out.simulated += o.fresh;
      if (!std::isnan(o.time_s)) offer(best, top, o.time_s, order[o.position]);
    }
    next = last;
    if (slowest < kShortRound)
      batch *= 2;
    else if (slowest > kLongRound)
      batch = std::max<std::size_t>(ranks, batch / 2);
    if (progress && me == 0) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_report > std::chrono::seconds(5)) {
        last_report = now;
        progress(out.simulated, n - next, std::chrono::duration<double>(now - started).count());
      }
    }
  }
  return out;
}

}  // namespace

StrategySearchResult exhaustive_strategy_search(StrategyScorer& scorer, const Workload& w,
                                                const StrategySpace& space, std::uint32_t top,
                                                const SearchProgress& progress, SearchTeam* team,
                                                BoundKind bound_kind) {
  if (top == 0) throw BadInput("optimize.top must be at least 1", "optimize.top");
  StrategyCount counts;
  const auto feasible = feasible_strategies(w, scorer.gpus(), space, &counts);
  StrategySearchResult r;
  r.method = "exhaustive";
  r.candidates = counts.checked;
  r.infeasible = counts.infeasible;
  // Bounds, then candidates in bound order (stable: enumeration order among equal bounds).
  StrategyBound lower(w, scorer.network(), scorer.options(), scorer.placement_kind(),
                      scorer.placement_for(scorer.gpus()), bound_kind);
  std::vector<double> bound(feasible.size());
  const bool split = team && team->size() > 1;
  if (split) {
    // Each rank bounds every size()-th candidate and all gather them: the same function of the
    // same inputs, so the same bits as one process computing them all.
    std::vector<SearchOutcome> mine;
    for (std::size_t i = team->rank(); i < feasible.size(); i += team->size())
      mine.push_back({i, lower(feasible[i]), 0});
    for (const SearchOutcome& o : team->all_gather(mine)) bound[o.position] = o.time_s;
  } else {
    for (std::size_t i = 0; i < feasible.size(); ++i) bound[i] = lower(feasible[i]);
  }
  std::vector<std::uint32_t> order(feasible.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return bound[a] < bound[b]; });
  Walk walk;
  if (split) {
    const Rounds rounds = search_rounds(scorer, feasible, order, bound, top, *team, progress);
    walk = serial_walk(order, bound, top, [&](std::size_t pos) -> std::optional<double> {
      if (!rounds.taken[pos])
        throw RuntimeFailure("strategy search: the serial walk needs position " + std::to_string(pos) +
                             ", which the ranks did not simulate");
      r.simulations += rounds.fresh[pos];
      if (std::isnan(rounds.time[pos])) return std::nullopt;
      return rounds.time[pos];
    });
    r.simulated_by_team = rounds.simulated;
  } else {
    const auto started = std::chrono::steady_clock::now();
    auto last_report = started;
    const std::uint64_t before = scorer.simulations();
    std::uint64_t done = 0;
    walk = serial_walk(order, bound, top, [&](std::size_t pos) {
      const auto t = scorer.iteration_time(feasible[order[pos]]);
      ++done;
      if (progress) {
        const auto now = std::chrono::steady_clock::now();
        if (now - last_report > std::chrono::seconds(5)) {
          last_report = now;
          progress(done, order.size() - pos - 1, std::chrono::duration<double>(now - started).count());
        }
      }
      return t;
    });
    r.simulations = scorer.simulations() - before;
    r.simulated_by_team = r.simulations;
  }
  r.evaluated = walk.evaluated;
  r.infeasible += walk.infeasible;
  r.pruned = order.size() - walk.stop;
  if (walk.best.empty())
    throw BadInput("no parallelization strategy of " + w.model.name + " fits in device memory on " +
                       std::to_string(scorer.gpus()) + " GPUs",
                   "model.name");
  for (const auto& [t, i] : walk.best) r.top.push_back({feasible[i], t});
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
        // Half the time a FlexFlow-style local move (one knob changes, the degrees or the
        // schedule with its chunks counting as one: knob_moves), else a jump anywhere in the
        // global space.
        const Strategy* pick = &globals[rng() % globals.size()];
        if (rng() % 2 == 0) {
          std::vector<const Strategy*> near;
          for (const auto& g : globals)
            if (knob_moves(g, s) == 1) near.push_back(&g);
          if (!near.empty()) pick = near[rng() % near.size()];
        }
        const Strategy& g = *pick;
        copy_move_knobs(g, next);
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
