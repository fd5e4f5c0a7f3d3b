// Build + all metrics (hops, bisection, ports, cost) for large topologies. Peak memory is the
// process's ru_maxrss, so run one benchmark per process for a per-case figure:
//   build-topo/bench/bench_topology --benchmark_filter=TopoOpt4096
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <sstream>
#include <vector>

#include "toposweep/topology/build.hpp"
#include "toposweep/topology/config_keys.hpp"
#include "toposweep/topology/cost.hpp"
#include "toposweep/topology/edge_list.hpp"
#include "toposweep/topology/perm_sets.hpp"
#include "toposweep/topology/report.hpp"

namespace {

using namespace toposweep;

Config config(std::initializer_list<std::pair<const char*, const char*>> kv) {
  Config c;
  for (const auto& [k, v] : kv) c.set(k, v, "bench");
  validate_and_default(c, KeyRegistry(topology::config_keys()));
  return c;
}

double peak_rss_MiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;  // Linux reports KiB
}

void build_and_measure(benchmark::State& state, const Config& c) {
  const topology::PriceTable table = topology::builtin_price_table();
  for (auto _ : state) {
    const Network net = network_from_config(c);
    const topology::TopologyReport r = topology::describe_topology(net, table);
    benchmark::DoNotOptimize(r.hops.mean_hops);
    state.counters["arcs"] = net.arc_count();
    state.counters["diameter"] = r.hops.diameter;
    state.counters["mean_hops"] = r.hops.mean_hops;
    state.counters["bisection_GBps"] = r.bisection.bandwidth_Bps / 1e9;
  }
  state.counters["peak_rss_MiB"] = peak_rss_MiB();
}

void BM_TopoOpt4096_d8(benchmark::State& state) {
  build_and_measure(
      state, config({{"topology.kind", "topoopt"}, {"topology.servers", "4096"}, {"topology.degree", "8"}}));
}
BENCHMARK(BM_TopoOpt4096_d8)->Unit(benchmark::kMillisecond);

void BM_MultiDim16384(benchmark::State& state) {
  build_and_measure(state, config({{"topology.kind", "multidim"},
                                   {"topology.dims", "ring:4,fc:8,ring:16,switch:32"},
                                   {"topology.dim_bandwidth", "400GB/s,200GB/s,100GB/s,50GB/s"}}));
}
BENCHMARK(BM_MultiDim16384)->Unit(benchmark::kMillisecond);

void BM_Expander4096_d8(benchmark::State& state) {
  build_and_measure(
      state, config({{"topology.kind", "expander"}, {"topology.servers", "4096"}, {"topology.degree", "8"}}));
}
BENCHMARK(BM_Expander4096_d8)->Unit(benchmark::kMillisecond);

void BM_FatTree8192(benchmark::State& state) {
  build_and_measure(
      state, config({{"topology.kind", "fattree"}, {"topology.servers", "8192"}, {"topology.degree", "1"}}));
}
BENCHMARK(BM_FatTree8192)->Unit(benchmark::kMillisecond);

// All-pairs hop counts without the vertex-transitivity shortcut: the topoopt network read
// back from its edge list (same arcs, no family knowledge), 64 sources per BFS sweep.
void BM_AllPairsHops_TopoOpt4096_d8(benchmark::State& state) {
  const Network original = network_from_config(
      config({{"topology.kind", "topoopt"}, {"topology.servers", "4096"}, {"topology.degree", "8"}}));
  std::stringstream ss;
  topology::write_edge_list(ss, original);
  const Network net = topology::read_edge_list(ss, "bench", {});
  for (auto _ : state) {
    const topology::HopStats h = topology::hop_stats(net);
    benchmark::DoNotOptimize(h.mean_hops);
    state.counters["mean_hops"] = h.mean_hops;
  }
  state.counters["peak_rss_MiB"] = peak_rss_MiB();
}
BENCHMARK(BM_AllPairsHops_TopoOpt4096_d8)->Unit(benchmark::kMillisecond);

// The sweep's "permutation sets" axis: one stride set per multiplier class.
void BM_EnumerateStrideSets(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0)), d = static_cast<std::uint32_t>(state.range(1));
  for (auto _ : state) {
    const auto sets = topology::enumerate_stride_sets(n, d);
    benchmark::DoNotOptimize(sets.data());
    state.counters["classes"] = static_cast<double>(sets.size());
  }
}
BENCHMARK(BM_EnumerateStrideSets)->Args({64, 8})->Args({128, 8})->Unit(benchmark::kMillisecond);

// What each sweep rank pays once per network of inputs/sweeps/perf-1024.ini (issue 20): the 18
// networks (topoopt / fattree / switch x degree 4, 8 x 100, 200, 400 Gbps on 128 servers of 8
// GPUs) built and priced with the built-in table, as PointCache::network_for does. Every rank
// of a sweep pays it again, so it bounds how well ranks scale on a short sweep.
void BM_Perf1024Networks(benchmark::State& state) {
  std::vector<Config> configs;
  for (const char* kind : {"topoopt", "fattree", "switch"})
    for (const char* degree : {"4", "8"})
      for (const char* bw : {"100Gbps", "200Gbps", "400Gbps"})
        configs.push_back(config({{"topology.kind", kind},
                                  {"topology.servers", "128"},
                                  {"topology.degree", degree},
                                  {"topology.link_bandwidth", bw},
                                  {"topology.link_latency", "1us"},
                                  {"server.gpus", "8"}}));
  const topology::PriceTable table = topology::builtin_price_table();
  double usd = 0;
  for (auto _ : state)
    for (const Config& c : configs) usd += topology::network_cost(network_from_config(c), table).total_usd;
  benchmark::DoNotOptimize(usd);
  state.counters["networks"] = static_cast<double>(configs.size());
}
BENCHMARK(BM_Perf1024Networks)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
