// Workload benchmarks: enumerating and memory-checking every global strategy of GPT-3 175B on
// 1,024 A100s (target >= 1e6 strategies/s per core), planning one iteration's task graph, and
// deriving its node-level traffic.
#include <benchmark/benchmark.h>

#include "toposweep/workload/enumerate.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/model_library.hpp"
#include "toposweep/workload/traffic.hpp"

namespace toposweep {
namespace {

Workload gpt3_175b() {
  return make_workload(builtin_model("gpt3-175b"), builtin_device("a100"), "fp16", 1536);
}

Strategy megatron_like() {
  Strategy s;
  s.dp = 8;
  s.tp = 8;
  s.pp = 16;
  s.microbatches = 96;  // 2 sequences per microbatch
  s.recompute = Recompute::Full;
  return s;
}

void BM_EnumerateGpt3On1024(benchmark::State& state) {
  const Workload w = gpt3_175b();
  std::uint64_t checked = 0, feasible = 0;
  for (auto _ : state) {
    const StrategyCount c = for_each_strategy(w, 1024, StrategySpace{}, {});
    checked += c.checked;
    feasible = c.feasible;
    benchmark::DoNotOptimize(c);
  }
  state.counters["strategies_per_s"] =
      benchmark::Counter(static_cast<double>(checked), benchmark::Counter::kIsRate);
  state.counters["strategies"] = static_cast<double>(checked) / static_cast<double>(state.iterations());
  state.counters["feasible"] = static_cast<double>(feasible);
}
BENCHMARK(BM_EnumerateGpt3On1024)->Unit(benchmark::kMicrosecond);

void BM_EnumerateGpt3On1024WithVisitor(benchmark::State& state) {
  const Workload w = gpt3_175b();
  std::uint64_t checked = 0;
  for (auto _ : state) {
    double best = 1e300;
    const StrategyCount c =
        for_each_strategy(w, 1024, StrategySpace{}, [&](const Strategy&, double mem, bool ok) {
          if (ok && mem < best) best = mem;
        });
    checked += c.checked;
    benchmark::DoNotOptimize(best);
  }
  state.counters["strategies_per_s"] =
      benchmark::Counter(static_cast<double>(checked), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EnumerateGpt3On1024WithVisitor)->Unit(benchmark::kMicrosecond);

void BM_PlanIterationGpt3(benchmark::State& state) {
  const Workload w = gpt3_175b();
  const Strategy s = megatron_like();
  std::size_t tasks = 0;
  for (auto _ : state) {
    const IterationPlan plan = plan_iteration(w, s);
    tasks = plan.graph.tasks.size();
    benchmark::DoNotOptimize(plan.graph.tasks.data());
  }
  state.counters["tasks"] = static_cast<double>(tasks);
}
BENCHMARK(BM_PlanIterationGpt3)->Unit(benchmark::kMillisecond);

void BM_DeriveTrafficGpt3(benchmark::State& state) {
  const Workload w = gpt3_175b();
  const IterationPlan plan = plan_iteration(w, megatron_like());
  const Placement placement = rank_order_placement(1024, 8);
  for (auto _ : state) {
    const TrafficDemand d = derive_traffic(plan.graph, placement, 128);
    benchmark::DoNotOptimize(d.mp.data());
  }
}
BENCHMARK(BM_DeriveTrafficGpt3)->Unit(benchmark::kMillisecond);

void BM_PlanIterationDlrm(benchmark::State& state) {
  const Workload w = make_workload(builtin_model("dlrm"), builtin_device("a100"), "fp16", 512 * 128);
  Strategy s;
  s.dp = 512;
  for (auto _ : state) {
    const IterationPlan plan = plan_iteration(w, s);
    benchmark::DoNotOptimize(plan.graph.tasks.data());
  }
}
BENCHMARK(BM_PlanIterationDlrm)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace toposweep

BENCHMARK_MAIN();
