// Collective planning speed: the forest optimum + packing on a 64-node heterogeneous graph, and
// time-only ring / hierarchical plans for 16,384 NPUs (the simulator calls these per point).
#include <benchmark/benchmark.h>

#include <random>

#include "toposweep/collective/forest.hpp"
#include "toposweep/collective/plan.hpp"

namespace toposweep {
namespace {

// 64 compute nodes, a bidirectional ring backbone plus random links: 500 links (1000 arcs) at
// TopoOpt's port speeds (10 to 200 Gbps).
Network heterogeneous64() {
  std::mt19937_64 rng(64);
  const double speeds[] = {10e9 / 8, 25e9 / 8, 40e9 / 8, 100e9 / 8, 200e9 / 8};
  std::uniform_int_distribution<int> pick(0, 4), node(0, 63);
  NetworkBuilder b(64);
  int links = 0;
  for (VertexId i = 0; i < 64; ++i, ++links) b.add_link(i, (i + 1) % 64, speeds[pick(rng)], 1e-6);
  while (links < 500) {
    const auto u = static_cast<VertexId>(node(rng)), v = static_cast<VertexId>(node(rng));
    if (u == v) continue;
    b.add_link(u, v, speeds[pick(rng)], 1e-6);
    ++links;
  }
  return std::move(b).build();
}

// 16,384 NPUs: ring:8 x fc:8 x switch:256 (one switch per dimension-2 line).
Network multidim16k() {
  const std::vector<Dimension> dims{{DimensionType::Ring, 8, 400e9, 100e-9},
                                    {DimensionType::FullyConnected, 8, 200e9, 500e-9},
                                    {DimensionType::Switch, 256, 50e9, 2e-6}};
  const std::uint32_t n = 8 * 8 * 256;
  NetworkBuilder b(n);
  for (VertexId v = 0; v < n; ++v) {
    const std::uint32_t c0 = v % 8, c1 = (v / 8) % 8;
    b.add_link(v, v - c0 + (c0 + 1) % 8, dims[0].bandwidth_Bps, dims[0].latency_s);
    for (std::uint32_t j = c1 + 1; j < 8; ++j)
      b.add_link(v, v + (j - c1) * 8, dims[1].bandwidth_Bps, dims[1].latency_s);
  }
  const VertexId first_switch = b.add_switches(64);
  for (VertexId v = 0; v < n; ++v)
    b.add_link(v, first_switch + v % 64, dims[2].bandwidth_Bps, dims[2].latency_s);
  b.info().kind = "multidim";
  b.info().dims = dims;
  return std::move(b).build();
}

CollectiveRequest all_nodes(CollectiveOp op, std::uint32_t n, double bytes) {
  CollectiveRequest r;
  r.op = op;
  r.bytes = bytes;
  for (VertexId v = 0; v < n; ++v) r.nodes.push_back(v);
  return r;
}

void BM_ForestAllGather64(benchmark::State& state) {
  const Network net = heterogeneous64();
  const ArcGraph g = arc_graph(net);
  std::vector<std::uint32_t> w(64, 1);
  std::vector<VertexId> members(64);
  for (VertexId v = 0; v < 64; ++v) members[v] = v;
  double gap = 0, trees = 0, flows = 0;
  for (auto _ : state) {
    const ForestOptimum opt = forest_optimum(g, w, members);
    const ForestPacking pack = pack_forest(g, w, members, opt, 1e9 / 64);
    gap = pack.time_s / (1e9 / 64 / opt.rate_Bps());
    trees = static_cast<double>(pack.trees.size());
    flows = opt.max_flow_calls;
    benchmark::DoNotOptimize(pack);
  }
  state.counters["built_over_optimal"] = gap;
  state.counters["trees"] = trees;
  state.counters["max_flows"] = flows;
  state.counters["arcs"] = net.arc_count();
}
BENCHMARK(BM_ForestAllGather64)->Unit(benchmark::kMillisecond);

void BM_ForestAllReducePlan64(benchmark::State& state) {
  const Network net = heterogeneous64();
  const auto req = all_nodes(CollectiveOp::AllReduce, 64, 1e9);
  for (auto _ : state) benchmark::DoNotOptimize(plan_collective(net, req, "forest"));
}
BENCHMARK(BM_ForestAllReducePlan64)->Unit(benchmark::kMillisecond);

void BM_RingTime16k(benchmark::State& state) {
  const Network net = multidim16k();
  const auto req = all_nodes(CollectiveOp::AllReduce, net.compute_count(), 1e9);
  for (auto _ : state) benchmark::DoNotOptimize(plan_collective(net, req, "ring"));
  state.counters["npus"] = net.compute_count();
  state.counters["arcs"] = net.arc_count();
}
BENCHMARK(BM_RingTime16k)->Unit(benchmark::kMillisecond);

void BM_HierarchicalTime16k(benchmark::State& state) {
  const Network net = multidim16k();
  const auto req = all_nodes(CollectiveOp::AllReduce, net.compute_count(), 1e9);
  for (auto _ : state) benchmark::DoNotOptimize(plan_collective(net, req, "hierarchical"));
}
BENCHMARK(BM_HierarchicalTime16k)->Unit(benchmark::kMillisecond);

void BM_HierarchicalFlows16k(benchmark::State& state) {
  const Network net = multidim16k();
  const auto req = all_nodes(CollectiveOp::AllReduce, net.compute_count(), 1e9);
  CollectiveOptions opt;
  opt.with_flows = true;
  std::size_t flows = 0;
  for (auto _ : state) flows = plan_collective(net, req, "hierarchical", opt).flows.size();
  state.counters["flows"] = static_cast<double>(flows);
}
BENCHMARK(BM_HierarchicalFlows16k)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace toposweep

BENCHMARK_MAIN();
