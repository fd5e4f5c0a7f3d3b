#pragma once
// Seeded Metropolis search over a discrete state space (FlexFlow / TopoOpt style): propose a
// local change, accept it when it is better or with probability exp(-delta / (T * current)),
// and jump back to the best state after `restart_after` proposals without a new best.
// Reproducible: the same seed gives the same walk.
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>

namespace toposweep::opt {

struct MetropolisSettings {
  std::uint64_t seed = 1;
  std::uint32_t budget = 500;         // proposals scored
  double temperature = 0.05;          // relative: a 5 % worse state is accepted with p = 1/e
  std::uint32_t restart_after = 100;  // proposals without a new best before returning to it
  bool operator==(const MetropolisSettings&) const = default;
};

template <class State>
struct MetropolisResult {
  State best;
  double best_cost = 0;
  std::uint32_t proposals = 0;
  std::uint32_t accepted = 0;
  std::uint32_t rejected_infeasible = 0;
  std::uint32_t restarts = 0;
};

// `propose(state, rng)` returns a neighbour, or nullopt when the move does not apply;
// `cost(state)` returns nullopt for an infeasible state. `start` must be feasible with
// `start_cost`.
template <class State>
MetropolisResult<State> metropolis_search(
    const State& start, double start_cost,
    const std::function<std::optional<State>(const State&, std::mt19937_64&)>& propose,
    const std::function<std::optional<double>(const State&)>& cost, const MetropolisSettings& settings) {
  std::mt19937_64 rng(settings.seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  MetropolisResult<State> r{start, start_cost};
  State current = start;
  double current_cost = start_cost;
  std::uint32_t since_best = 0;
  std::uint32_t attempts = 0;
  // Moves that do not apply cost nothing but must not spin forever.
  const std::uint64_t max_attempts = 20ull * settings.budget + 100;
  while (r.proposals < settings.budget && attempts++ < max_attempts) {
    auto next = propose(current, rng);
    if (!next) continue;
    ++r.proposals;
    const auto c = cost(*next);
    if (!c) {
      ++r.rejected_infeasible;
    } else {
      const double delta = *c - current_cost;
      const bool accept =
          delta <= 0 ||
          uniform(rng) < std::exp(-delta / (settings.temperature * std::max(current_cost, 1e-300)));
      if (accept) {
        current = std::move(*next);
        current_cost = *c;
        ++r.accepted;
        if (current_cost < r.best_cost) {
          r.best = current;
          r.best_cost = current_cost;
          since_best = 0;
          continue;
        }
      }
    }
    if (++since_best >= settings.restart_after) {
      current = r.best;
      current_cost = r.best_cost;
      since_best = 0;
      ++r.restarts;
    }
  }
  return r;
}

}  // namespace toposweep::opt
