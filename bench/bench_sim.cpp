// Simulator benchmarks: analytical time per design point (GPT-3 175B on 1,024 GPUs), flow-model
// iterations (DLRM on 128 servers of a TopoOpt d=4 100 Gbps fabric; GPT-3 on 1,024 GPUs) with
// peak memory, and flow-model scaling from 64 to 4,096 servers.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "toposweep/cli/command.hpp"
#include "toposweep/point/evaluate.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/util/heap_prefault.hpp"
#include "toposweep/workload/iteration.hpp"

namespace {

using namespace toposweep;

Config make_config(std::vector<std::pair<std::string, std::string>> settings) {
  Config c;
  for (const auto& [k, v] : settings) c.set(k, v, "bench");
  validate_and_default(c, cli::all_config_keys());
  return c;
}

// GPT-3 175B, 3-D strategy tp=8 pp=pp dp=servers*8/(8*pp), 64 microbatches, one per GPU, on a
// servers x 8-GPU fat-tree of 200 Gbps links.
Config gpt3_fattree(std::uint32_t servers, std::uint32_t pp, const std::string& model) {
  return make_config({{"topology.kind", "fattree"},
                      {"topology.servers", std::to_string(servers)},
                      {"server.gpus", "8"},
                      {"topology.link_bandwidth", "200Gbps"},
                      {"model.name", "gpt3-175b"},
                      {"model.batch_per_gpu", "1"},
                      {"strategy.tp", "8"},
                      {"strategy.pp", std::to_string(pp)},
                      {"strategy.microbatches", "64"},
                      {"strategy.recompute", "true"},
                      {"strategy.zero", "1"},
                      {"simulate.network_model", model}});
}

// 1,024 GPUs: 128 servers, tp=8 pp=8 dp=16.
Config gpt3_1024(const std::string& model) {
  return gpt3_fattree(128, 8, model);
}

Config dlrm_topoopt(std::uint32_t servers) {
  return make_config({{"topology.kind", "topoopt"},
                      {"topology.servers", std::to_string(servers)},
                      {"topology.degree", "4"},
                      {"topology.link_bandwidth", "100Gbps"},
                      {"server.gpus", "4"},
                      {"model.name", "dlrm"},
                      {"simulate.network_model", "flow"}});
}

double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;
}

// The simulation alone (network and plan built once): what a sweep pays per point when only
// the network model's inputs change.
void BM_AnalyticalGpt3_SimulateOnly(benchmark::State& state) {
  const Config c = gpt3_1024("analytical");
  const Network net = network_from_config(c);
  const IterationPlan plan = plan_iteration_from_config(c, net.gpu_count());
  const sim::SimOptions o = sim::sim_options_from_config(c);
  for (auto _ : state) {
    const sim::SimResult r = sim::simulate_iteration(net, plan.graph, o);
    benchmark::DoNotOptimize(r.engine.makespan_s);
  }
  state.counters["tasks"] = static_cast<double>(plan.graph.tasks.size());
}
BENCHMARK(BM_AnalyticalGpt3_SimulateOnly)->Unit(benchmark::kMicrosecond);

// The analytical fast path alone with a warm model (plan times, prepared graph and the replay
// itself memoised): the simulator's share of a warm sweep-row evaluation.
void BM_AnalyticalGpt3_PreparedReplay(benchmark::State& state) {
  const Config c = gpt3_1024("analytical");
  const Network net = network_from_config(c);
  const IterationPlan plan = plan_iteration_from_config(c, net.gpu_count());
  sim::AnalyticalModel model(net, sim::sim_options_from_config(c).comm);
  for (auto _ : state) {
    const sim::SimResult r = sim::simulate_analytical(model, plan.graph, net.gpus_per_node());
    benchmark::DoNotOptimize(r.engine.makespan_s);
  }
  state.counters["tasks"] = static_cast<double>(plan.graph.tasks.size());
}
BENCHMARK(BM_AnalyticalGpt3_PreparedReplay)->Unit(benchmark::kMicrosecond);

// The playback pass itself (what a warm point paid before the model memoised whole replays):
// PreparedGraph::run over the graph with the task durations of one simulated iteration.
void BM_AnalyticalGpt3_PlaybackPass(benchmark::State& state) {
  const Config c = gpt3_1024("analytical");
  const Network net = network_from_config(c);
  const IterationPlan plan = plan_iteration_from_config(c, net.gpu_count());
  const sim::SimResult r = sim::simulate_iteration(net, plan.graph, sim::sim_options_from_config(c));
  std::vector<double> durations;
  for (const sim::TaskSpan& s : r.engine.spans[0]) durations.push_back(s.end_s - s.start_s);
  sim::PreparedGraph prepared(plan.graph);
  std::vector<sim::TaskSpan> spans;
  for (auto _ : state) benchmark::DoNotOptimize(prepared.run(plan.graph, durations, spans).iteration_time_s);
}
BENCHMARK(BM_AnalyticalGpt3_PlaybackPass)->Unit(benchmark::kMicrosecond);

// The sweep row evaluation with its caches warm (same network and plan as the last point).
void BM_AnalyticalGpt3_EvaluateCached(benchmark::State& state) {
  const Config c = gpt3_1024("analytical");
  PointCache cache;
  evaluate_config(c, cache, Detail::Row);
  for (auto _ : state) benchmark::DoNotOptimize(evaluate_config(c, cache, Detail::Row).row.iteration_time_s);
}
BENCHMARK(BM_AnalyticalGpt3_EvaluateCached)->Unit(benchmark::kMicrosecond);

// The sweep row evaluation building network and plan afresh every time (two configs alternate).
void BM_AnalyticalGpt3_EvaluateCold(benchmark::State& state) {
  const Config a = gpt3_1024("analytical");
  Config b = a;
  b.set("topology.link_bandwidth", "400Gbps", "bench");
  PointCache cache;
  bool flip = false;
  for (auto _ : state) {
    benchmark::DoNotOptimize(evaluate_config(flip ? a : b, cache, Detail::Row).row.iteration_time_s);
    flip = !flip;
  }
}
BENCHMARK(BM_AnalyticalGpt3_EvaluateCold)->Unit(benchmark::kMicrosecond);

void run_flow(benchmark::State& state, const Config& c) {
  const Network net = network_from_config(c);
  const IterationPlan plan = plan_iteration_from_config(c, net.gpu_count());
  const sim::SimOptions o = sim::sim_options_from_config(c);
  sim::SimResult r;
  for (auto _ : state) {
    r = sim::simulate_iteration(net, plan.graph, o);
    benchmark::DoNotOptimize(r.engine.makespan_s);
  }
  state.counters["iteration_s"] = r.engine.makespan_s;
  state.counters["flows"] = static_cast<double>(r.flows);
  state.counters["flows_represented"] = static_cast<double>(r.flows_represented);
  state.counters["recomputations"] = static_cast<double>(r.rate_recomputations);
  state.counters["rate_assignments"] = static_cast<double>(r.rate_assignments);
  state.counters["peak_rss_MiB"] = peak_rss_bytes() / (1 << 20);
}

void BM_FlowDlrm128Topoopt(benchmark::State& state) {
  run_flow(state, dlrm_topoopt(128));
}
BENCHMARK(BM_FlowDlrm128Topoopt)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_FlowGpt3_1024(benchmark::State& state) {
  run_flow(state, gpt3_1024("flow"));
}
BENCHMARK(BM_FlowGpt3_1024)->Unit(benchmark::kMillisecond)->Iterations(1);

// 16,384 GPUs: 2,048 servers x 8 on a three-tier fat-tree, tp=8 pp=16 dp=128.
void BM_FlowGpt3_16384(benchmark::State& state) {
  run_flow(state, gpt3_fattree(2048, 16, "flow"));
}
BENCHMARK(BM_FlowGpt3_16384)->Unit(benchmark::kMillisecond)->Iterations(1);

// One cold analytical point on 131,072 GPUs (16,384 servers x 8, fat-tree; tp=8 pp=16 dp=1,024):
// the sweep row evaluation with a fresh cache each time (network, cost, plan, simulation).
void BM_AnalyticalGpt3_131072_EvaluateCold(benchmark::State& state) {
  const Config c = gpt3_fattree(16384, 16, "analytical");
  util::HeapPrefault heap;
  double t = 0;
  for (auto _ : state) {
    PointCache cache;
    t = evaluate_config(c, cache, Detail::Row).row.iteration_time_s;
    benchmark::DoNotOptimize(t);
  }
  state.counters["iteration_s"] = t;
  state.counters["peak_rss_MiB"] = peak_rss_bytes() / (1 << 20);
}
BENCHMARK(BM_AnalyticalGpt3_131072_EvaluateCold)->Unit(benchmark::kMillisecond);

// Scaling: one data-parallel iteration of BERT-large over n servers x 1 GPU on a two-tier
// fat-tree (bucketed ring AllReduce; ring flows cross shared spine links), n = 64 .. 4,096.
void BM_FlowScalingBertFattree(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  const Config c = make_config({{"topology.kind", "fattree"},
                                {"topology.fattree_tiers", "2"},
                                {"topology.servers", std::to_string(n)},
                                {"server.gpus", "1"},
                                {"topology.link_bandwidth", "100Gbps"},
                                {"model.name", "bert-large"},
                                {"simulate.network_model", "flow"}});
  run_flow(state, c);
  state.SetComplexityN(static_cast<benchmark::IterationCount>(state.counters["flows"]));
}
BENCHMARK(BM_FlowScalingBertFattree)
    ->RangeMultiplier(4)
    ->Range(64, 4096)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
