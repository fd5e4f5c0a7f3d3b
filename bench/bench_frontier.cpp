// Pareto-frontier benchmarks: the O(N log N) two-objective sweep, sort-filter for three
// objectives, and the O(N²) reference for scale.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

#include "toposweep/frontier/pareto.hpp"

namespace {
using namespace toposweep::frontier;

// Random points with a cost/performance trade-off (so the frontier is not trivially tiny) and
// coarse rounding (so there are ties).
ObjectiveMatrix tradeoff_points(std::size_t n, std::size_t dims, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  ObjectiveMatrix m;
  m.rows = n;
  m.dims = dims;
  m.values.resize(n * dims);
  for (std::size_t r = 0; r < n; ++r) {
    const double cost = u(rng);
    for (std::size_t k = 0; k < dims; ++k) {
      const double v = k == 0 ? cost : (1.0 - cost) * (0.5 + u(rng));
      m.values[r * dims + k] = std::round(v * 1e4) / 1e4;
    }
  }
  return m;
}

void BM_Pareto2D(benchmark::State& state) {
  const auto m = tradeoff_points(static_cast<std::size_t>(state.range(0)), 2, 1);
  std::size_t front = 0;
  for (auto _ : state) front = pareto_front_2d(m).size();
  state.counters["frontier"] = static_cast<double>(front);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Pareto2D)->Arg(1000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);

void BM_SortFilter3D(benchmark::State& state) {
  const auto m = tradeoff_points(static_cast<std::size_t>(state.range(0)), 3, 2);
  std::size_t front = 0;
  for (auto _ : state) front = pareto_front_sort_filter(m).size();
  state.counters["frontier"] = static_cast<double>(front);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SortFilter3D)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_BruteForce2D(benchmark::State& state) {
  const auto m = tradeoff_points(static_cast<std::size_t>(state.range(0)), 2, 1);
  for (auto _ : state) benchmark::DoNotOptimize(pareto_front_brute_force(m));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_BruteForce2D)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
