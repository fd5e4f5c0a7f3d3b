// Collective planning speed: the forest optimum + packing on a 64-node heterogeneous graph and on
// DGX/MI250-like fabrics, and time-only ring / hierarchical plans for 16,384 NPUs (the simulator
// calls these per point).
#include <benchmark/benchmark.h>

#include <random>

#include "../tests/unit/collective/test_networks.hpp"
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

// The forest AllGather as plans use it: optimum, greedy packing, and (the greedy falls short
// here) the exact packing. collective.forest = greedy: optimum and greedy only.
void forest_allgather64(benchmark::State& state, ForestAlgorithm algorithm) {
  const Network net = heterogeneous64();
  std::vector<VertexId> members(64);
  for (VertexId v = 0; v < 64; ++v) members[v] = v;
  ForestSchedule fs;
  for (auto _ : state) {
    fs = forest_schedule(net, CollectiveOp::AllGather, members, 1e9, 0, false, algorithm);
    benchmark::DoNotOptimize(fs);
  }
  state.counters["built_over_optimal"] = fs.built_time_s / fs.optimal_time_s;
  state.counters["trees"] = fs.trees;
  state.counters["arcs"] = net.arc_count();
}
void BM_ForestAllGather64(benchmark::State& state) {
  forest_allgather64(state, ForestAlgorithm::Exact);
}
BENCHMARK(BM_ForestAllGather64)->Unit(benchmark::kMillisecond);
void BM_ForestAllGather64Greedy(benchmark::State& state) {
  forest_allgather64(state, ForestAlgorithm::Greedy);
}
BENCHMARK(BM_ForestAllGather64Greedy)->Unit(benchmark::kMillisecond);

// The exact packing alone (splitting off + Edmonds' branchings) on the 64-node graph and on
// ForestColl's fabrics: DGX-A100-like 2 and 4 boxes, MI250-like 2 and 4 boxes.
void BM_ForestExactPacking(benchmark::State& state) {
  const int which = static_cast<int>(state.range(0));
  const Network net = which == 0   ? heterogeneous64()
                      : which <= 2 ? testnet::dgx_a100(which == 1 ? 2 : 4)
                                   : testnet::mi250(which == 3 ? 2 : 4);
  const ArcGraph g = arc_graph(net);
  std::vector<VertexId> members(net.compute_count());
  for (VertexId v = 0; v < members.size(); ++v) members[v] = v;
  std::vector<std::uint32_t> w(net.vertex_count(), 0);
  for (VertexId v : members) w[v] = 1;
  const ForestOptimum opt = forest_optimum(g, w, members);
  const double unit = 1e9 / static_cast<double>(members.size());
  ExactForestStats stats;
  double gap = 0;
  for (auto _ : state) {
    const auto pack = pack_forest_exact(g, w, members, opt, unit, &stats);
    gap = pack ? pack->time_s / (unit / opt.rate_Bps()) : 0;
    benchmark::DoNotOptimize(pack);
  }
  state.SetLabel(which == 0 ? "64 nodes / 500 links"
                            : net.info().kind + " " + std::to_string(members.size()));
  state.counters["built_over_optimal"] = gap;
  state.counters["k"] = static_cast<double>(stats.trees_per_unit);
  state.counters["trees"] = static_cast<double>(stats.distinct_trees);
  state.counters["max_flows"] = static_cast<double>(stats.max_flows);
  state.counters["work"] = static_cast<double>(stats.work);
  state.counters["relays_split"] = stats.relays_split;
}
BENCHMARK(BM_ForestExactPacking)->DenseRange(0, 4)->Unit(benchmark::kMillisecond);

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
