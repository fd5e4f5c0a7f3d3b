// Sweep engine benchmarks: per-point throughput (analytical model and engine-only), the cost of
// one scheduling step (MPI one-sided fetch-and-add; a chunk's claim and progress update through
// ChunkScheduler) and of one journal commit, and HDF5 output size and write time for 1e6 points.
//   build/bench/bench_sweep                                   (one rank)
//   mpirun -n 2 build/bench/bench_sweep --benchmark_filter=FetchAndOp   (contended counter)
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <benchmark/benchmark.h>
#include <mpi.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "toposweep/cli/command.hpp"
#include "toposweep/point/evaluate.hpp"
#include "toposweep/sweep/engine.hpp"
#include "toposweep/sweep/journal.hpp"
#include "toposweep/sweep/results_file.hpp"
#include "toposweep/sweep/scheduler.hpp"
#include "toposweep/sweep/synthetic.hpp"

namespace {
using namespace toposweep;

const sweep::Space& reference_space() {
  static const sweep::Space space = [] {
    Config c;
    load_ini_file(c, std::string(TOPOSWEEP_SOURCE_DIR) + "/inputs/sweeps/reference-100k.ini");
    validate_and_default(c, cli::all_config_keys());
    return sweep::parse_space(c, cli::all_config_keys());
  }();
  return space;
}

// A fixed pseudo-random walk over the space so every benchmark sees the same mix of points.
std::uint64_t nth_point(std::uint64_t i, std::uint64_t size) {
  return (i * 0x9E3779B97F4A7C15ULL) % size;
}

void BM_EvaluatePoint_AnalyticalModel(benchmark::State& state) {
  const auto& space = reference_space();
  PointCache cache;
  const sweep::Evaluator eval = [&](const Config& p) { return evaluate_row(p, cache); };
  std::uint64_t i = 0, failed = 0;
  Config scratch = space.base();
  for (auto _ : state) {
    const auto r = sweep::evaluate_point(space, nth_point(i++, space.size()), eval, scratch);
    failed += r.result.status == PointStatus::Failed;
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(i));
  state.counters["failed_fraction"] = static_cast<double>(failed) / static_cast<double>(i);
}
BENCHMARK(BM_EvaluatePoint_AnalyticalModel)->MinTime(3);

sweep::Space load_space(const char* file) {
  Config c;
  load_ini_file(c, std::string(TOPOSWEEP_SOURCE_DIR) + "/inputs/sweeps/" + file);
  validate_and_default(c, cli::all_config_keys());
  return sweep::parse_space(c, cli::all_config_keys());
}

const sweep::Space& perf_space() {
  static const sweep::Space space = load_space("perf-1024.ini");
  return space;
}

// The 1,024-GPU performance space (GPT-3 175B, 128 servers x 8, 1,728 points, 78 % of them not
// fitting in memory) evaluated cold, in index order, as one sweep rank meets it: a fresh
// PointCache per pass, so every network, plan and collective plan is built again.
// Every point of `space` in index order with a fresh PointCache per pass; returns the points
// evaluated (the rest do not fit or are impossible) and adds the points to `points`.
std::uint64_t cold_passes(benchmark::State& state, const sweep::Space& space, std::uint64_t& points) {
  std::uint64_t evaluated = 0;
  Config scratch = space.base();
  for (auto _ : state) {
    PointCache cache;
    const sweep::Evaluator eval = [&](const Config& p) { return evaluate_row(p, cache); };
    evaluated = 0;
    for (std::uint64_t i = 0; i < space.size(); ++i) {
      const auto r = sweep::evaluate_point(space, i, eval, scratch);
      evaluated += r.result.status == PointStatus::Evaluated;
    }
    points += space.size();
  }
  return evaluated;
}

void BM_Perf1024_ColdPass(benchmark::State& state) {
  std::uint64_t points = 0;
  const std::uint64_t evaluated = cold_passes(state, perf_space(), points);
  state.SetItemsProcessed(static_cast<std::int64_t>(points));
  state.counters["points_per_s"] =
      benchmark::Counter(static_cast<double>(points), benchmark::Counter::kIsRate);
  state.counters["evaluated"] = static_cast<double>(evaluated);
}
BENCHMARK(BM_Perf1024_ColdPass)->Unit(benchmark::kMillisecond)->MinTime(2);

// Issue 29 ("cold networks"): perf-1024.ini widened to 162 networks (3 degrees, 6 bandwidths,
// 3 latencies; 23,328 points), so most points meet a network no earlier point of their plan
// built; and a 16,384-GPU space (perf-16k.ini: 36 networks, 2,592 points). Cold, in index order,
// a fresh PointCache per pass. Goals: >= 10,000 and >= 1,000 points/s per core.
void cold_space_pass(benchmark::State& state, const sweep::Space& space) {
  std::uint64_t points = 0;
  const std::uint64_t evaluated = cold_passes(state, space, points);
  state.SetItemsProcessed(static_cast<std::int64_t>(points));
  state.counters["points_per_s"] =
      benchmark::Counter(static_cast<double>(points), benchmark::Counter::kIsRate);
  state.counters["evaluated"] = static_cast<double>(evaluated);
}

void BM_Perf1024Wide_ColdPass(benchmark::State& state) {
  static const sweep::Space space = load_space("perf-1024-wide.ini");
  cold_space_pass(state, space);
}
BENCHMARK(BM_Perf1024Wide_ColdPass)->Unit(benchmark::kMillisecond)->MinTime(4);

void BM_Perf16k_ColdPass(benchmark::State& state) {
  static const sweep::Space space = load_space("perf-16k.ini");
  cold_space_pass(state, space);
}
BENCHMARK(BM_Perf16k_ColdPass)->Unit(benchmark::kMillisecond)->MinTime(4);

// Issue 18: the same space cold on homogeneous servers (arg 0: server.device = a100) and on mixed
// ones (arg 1: a100*4,h100*4, both 80 GiB so the same points fit, with a proportional batch split),
// per point. Goal: mixed <= 2x.
sweep::Space load_hetero_space(bool mixed) {
  Config c;
  load_ini_file(c, std::string(TOPOSWEEP_SOURCE_DIR) + "/inputs/sweeps/hetero-bench.ini");
  if (mixed) {
    c.set("server.device", "a100*4,h100*4", "bench");
    c.set("strategy.batch_split", "proportional", "bench");
  }
  validate_and_default(c, cli::all_config_keys());
  return sweep::parse_space(c, cli::all_config_keys());
}

const sweep::Space& hetero_space(bool mixed) {
  static const sweep::Space spaces[2] = {load_hetero_space(false), load_hetero_space(true)};
  return spaces[mixed ? 1 : 0];
}

void BM_HeteroPoint_ColdPass(benchmark::State& state) {
  std::uint64_t points = 0;
  const std::uint64_t evaluated = cold_passes(state, hetero_space(state.range(0) != 0), points);
  state.SetItemsProcessed(static_cast<std::int64_t>(points));
  state.counters["us_per_point"] = benchmark::Counter(
      static_cast<double>(points), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["evaluated"] = static_cast<double>(evaluated);
}
BENCHMARK(BM_HeteroPoint_ColdPass)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->MinTime(2);

// Engine-side cost of a point without the model: decode the index, build the point's Config,
// run the synthetic closed form, catch its exceptions.
void BM_EvaluatePoint_EngineOnly(benchmark::State& state) {
  const auto& space = reference_space();
  const sweep::Evaluator eval = [](const Config& p) { return sweep::synthetic_point(p); };
  std::uint64_t i = 0;
  Config scratch = space.base();
  for (auto _ : state)
    benchmark::DoNotOptimize(sweep::evaluate_point(space, nth_point(i++, space.size()), eval, scratch));
  state.SetItemsProcessed(static_cast<std::int64_t>(i));
}
BENCHMARK(BM_EvaluatePoint_EngineOnly);

void BM_DecodeIndex(benchmark::State& state) {
  const auto& space = reference_space();
  std::uint64_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(space.decode(nth_point(i++, space.size())));
  state.SetItemsProcessed(static_cast<std::int64_t>(i));
}
BENCHMARK(BM_DecodeIndex);

// One scheduling step: what each chunk costs in distribution overhead.
void BM_FetchAndOp(benchmark::State& state) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::int64_t* base = nullptr;
  MPI_Win win;
  MPI_Win_allocate(rank == 0 ? sizeof(std::int64_t) : 0, sizeof(std::int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  if (rank == 0) *base = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  const std::int64_t one = 1;
  std::int64_t got = 0;
  for (auto _ : state) {
    MPI_Fetch_and_op(&one, &got, MPI_INT64_T, 0, 0, MPI_SUM, win);
    MPI_Win_flush(0, win);
    benchmark::DoNotOptimize(got);
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FetchAndOp)->Iterations(20000);

// What run_sweep pays per chunk for scheduling: ChunkScheduler::claim (a read of its block's slot
// and of the stop and error slots, then one compare-and-swap) and add_done (progress counts).
// A claim and a done count, one rank, with each slot store (0: shared memory, 1: one-sided).
void BM_ClaimChunk(benchmark::State& state) {
  const auto store =
      state.range(0) == 0 ? sweep::SlotStoreKind::SharedMemory : sweep::SlotStoreKind::OneSided;
  sweep::ChunkScheduler scheduler(MPI_COMM_WORLD, std::int64_t{1} << 40, store);
  for (auto _ : state) {
    benchmark::DoNotOptimize(scheduler.claim(1));
    scheduler.add_done({1, 0, 0});
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(sweep::spell(store));
}
BENCHMARK(BM_ClaimChunk)->Arg(0)->Arg(1)->Iterations(20000);

// One journal commit of a chunk of `range(0)` points: encode + write + fdatasync.
void BM_JournalCommit(benchmark::State& state) {
  const std::string dir = "/tmp/bench_sweep_journal_" + std::to_string(::getpid());
  sweep::create_journal(dir, {1, 2, 0, 2}, "");
  {
    sweep::JournalWriter w(dir, 0, 0);
    sweep::PointRecord r;
    r.result = sweep::synthetic_point(Config{});
    for (auto _ : state) {
      for (std::int64_t k = 0; k < state.range(0); ++k) {
        r.index = static_cast<std::uint64_t>(k);
        w.add(r);
      }
      w.commit();
    }
  }
  sweep::remove_journal(dir);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_JournalCommit)->Arg(1)->Arg(64)->Arg(4096);

// HDF5 output: write 1e6 points (synthetic values) of a 1e6-point space; bytes per point.
void BM_WriteResults(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  // 100 degrees x n/100 server counts = n points.
  auto one_to = [](std::uint64_t k) {
    std::string v;
    for (std::uint64_t i = 1; i <= k; ++i) v.append(i > 1 ? "," : "").append(std::to_string(i));
    return v;
  };
  std::string ini = "[space.w]\ntopology.degree = ";
  ini.append(one_to(100)).append("\ntopology.servers = ").append(one_to(n / 100)).append("\n");
  Config c;
  load_ini_text(c, ini, "bench.ini");
  const auto space = sweep::parse_space(c, cli::all_config_keys());
  std::vector<sweep::PointRecord> rows(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    rows[i].index = i;
    rows[i].result = sweep::synthetic_point(Config{});
    rows[i].result.iteration_time_s = 1.0 + static_cast<double>((i * 2654435761u) % 100000) / 1e5;
    rows[i].result.cost_usd = 1e4 + static_cast<double>((i * 40503u) % 100000);
  }
  sweep::ResultsMeta meta;
  meta.objectives = {{"cost_usd", false}, {"iteration_time_s", false}};
  meta.end = n;
  meta.compression = static_cast<int>(state.range(1));
  const std::string path = "/tmp/bench_sweep_" + std::to_string(::getpid()) + ".h5";
  for (auto _ : state) sweep::write_results_file(path, space, rows, {}, meta);
  const auto bytes = std::filesystem::file_size(path);
  std::filesystem::remove(path);
  state.counters["bytes_per_point"] = static_cast<double>(bytes) / static_cast<double>(n);
  state.counters["file_MB"] = static_cast<double>(bytes) / 1e6;
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
BENCHMARK(BM_WriteResults)
    ->Args({1000000, 0})
    ->Args({1000000, 1})
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  benchmark::Initialize(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    // Other ranks run the same benchmarks (they must: MPI windows are collective) but stay quiet.
    benchmark::ConsoleReporter quiet;
    std::ostringstream sink;
    quiet.SetOutputStream(&sink);
    quiet.SetErrorStream(&sink);
    benchmark::RunSpecifiedBenchmarks(&quiet);
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}
