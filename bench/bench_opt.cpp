// Optimizer benchmarks: TopoOpt's alternating loop on DLRM (128 servers, d = 4, 100 Gbps,
// analytical network model) and one 4-D bandwidth allocation solve (target <= 1 ms).
#include <benchmark/benchmark.h>

#include "toposweep/collective/config_keys.hpp"
#include "toposweep/opt/alternating.hpp"
#include "toposweep/opt/bandwidth_allocation.hpp"
#include "toposweep/sim/config_keys.hpp"
#include "toposweep/topology/config_keys.hpp"
#include "toposweep/workload/config_keys.hpp"

namespace {

using namespace toposweep;

Config dlrm_config() {
  KeyRegistry r;
  r.add(workload::config_keys());
  r.add(topology::config_keys());
  r.add(collective::config_keys());
  r.add(sim::config_keys());
  Config c;
  c.set("model.name", "dlrm", "bench");
  validate_and_default(c, r);
  return c;
}

void BM_AlternatingDlrm128(benchmark::State& state) {
  const Config c = dlrm_config();
  const Workload w = workload_from_config(c, 128 * 4);
  opt::AlternatingSettings s;
  s.servers = 128;
  s.finder.degree = 4;
  s.finder.link_bandwidth_Bps = 100e9 / 8;
  s.finder.link_latency_s = 1e-6;
  s.finder.server.gpus = 4;
  s.finder.server.intra_bandwidth_Bps = 300e9;
  s.sim = sim::sim_options_from_config(c);
  s.mcmc.metropolis.budget = static_cast<std::uint32_t>(state.range(0));
  s.patience = 2;
  s.max_rounds = 10;
  opt::AlternatingResult r;
  for (auto _ : state) r = opt::alternating_optimize(w, s);
  state.counters["rounds"] = static_cast<double>(r.rounds.size());
  state.counters["baseline_ms"] = r.baseline_time_s * 1e3;
  state.counters["best_ms"] = r.best_time_s * 1e3;
  double sims = 0;
  for (const auto& round : r.rounds) sims += static_cast<double>(round.simulations);
  state.counters["simulations"] = sims;
}
BENCHMARK(BM_AlternatingDlrm128)->Arg(100)->Unit(benchmark::kMillisecond)->Iterations(1);

opt::BandwidthProblem four_dim_problem(opt::CommTimeModel model, opt::AllocationObjective objective) {
  opt::BandwidthProblem p;
  p.dim_count = 4;
  p.npus = 4 * 8 * 4 * 32;
  p.unit_price = {2e-9, 4e-9 + 13e-9, 4e-9, 7.8e-9 + 18e-9 + 31.6e-9};
  opt::HierarchicalComm tp;  // GPT-3 style: TP = [4,4,-,-], DP = [-,2,4,32]
  tp.bytes = 64e6;
  tp.count = 96;
  tp.dims = {{0, 4}, {1, 4}};
  opt::HierarchicalComm dp;
  dp.bytes = 2.7e9;
  dp.dims = {{1, 2}, {2, 4}, {3, 32}};
  opt::HierarchicalComm a2a;
  a2a.op = CollectiveOp::AllToAll;
  a2a.bytes = 16e6;
  a2a.count = 8;
  a2a.dims = {{0, 4}, {1, 8}, {2, 4}, {3, 32}};
  p.workload = {tp, dp, a2a};
  p.model = model;
  p.objective = objective;
  p.total_bandwidth_Bps = 1e12;
  p.cost_budget_usd = 2e6;
  p.descending = true;
  return p;
}

void BM_BandwidthAllocation4D(benchmark::State& state) {
  const auto p = four_dim_problem(
      state.range(0) ? opt::CommTimeModel::Sequential : opt::CommTimeModel::Pipelined,
      state.range(1) ? opt::AllocationObjective::TimeTimesCost : opt::AllocationObjective::Time);
  opt::BandwidthAllocation a;
  for (auto _ : state) benchmark::DoNotOptimize(a = opt::allocate_bandwidth(p));
  state.counters["solver_iterations"] = a.iterations;
  state.counters["gain"] = a.gain;
  state.counters["gap"] = a.certified_gap;
}
BENCHMARK(BM_BandwidthAllocation4D)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->ArgNames({"sequential", "time_x_cost"})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
