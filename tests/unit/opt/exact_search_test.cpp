// The exact strategy search (branch and bound on the compute lower bound) against brute force:
// on random small transformers, clusters and knob lists, every memory-feasible candidate is
// simulated independently, and the search's top k must be the brute force's (same strategies,
// same order, same times); the bound must never exceed a simulated time; the answer replays.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "test_config.hpp"
#include "toposweep/opt/strategy_search.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/workload/compute_bound.hpp"
#include "toposweep/workload/device.hpp"
#include "toposweep/workload/devices.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/model_library.hpp"

namespace toposweep::opt {
namespace {

template <class T>
std::vector<T> random_subset(const std::vector<T>& all, std::mt19937_64& rng) {
  std::vector<T> out;
  while (out.empty())
    for (const T& x : all)
      if (rng() % 2) out.push_back(x);
  return out;
}

struct Case {
  Network net;
  Workload workload;
  sim::SimOptions options;
  StrategySpace space;
  std::uint32_t top = 1;
  std::string label;
};

Case random_case(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  TransformerShape shape;
  const std::uint32_t heads[] = {2, 4, 8};
  shape.heads = heads[rng() % 3];
  shape.kv_heads = shape.heads;
  shape.hidden = shape.heads * (32u << (rng() % 3));
  shape.ffn_hidden = 4 * shape.hidden;
  shape.layers = 2 + static_cast<std::uint32_t>(rng() % 11);
  shape.seq_len = 128u << (rng() % 3);
  shape.vocab = 1000 + static_cast<std::uint32_t>(rng() % 4000);
  shape.max_positions = shape.seq_len;
  const char* servers[] = {"2", "4"};
  const char* gpus[] = {"2", "4"};
  const char* bandwidth[] = {"10Gbps", "25Gbps", "100Gbps"};
  const char* kinds[] = {"switch", "fattree"};
  Case c;
  const Config config = testing::make_config({{"topology.kind", kinds[rng() % 2]},
                                              {"topology.servers", servers[rng() % 2]},
                                              {"server.gpus", gpus[rng() % 2]},
                                              {"topology.link_bandwidth", bandwidth[rng() % 3]}});
  c.net = network_from_config(config);
  c.options = sim::sim_options_from_config(config);
  const double batches[] = {8, 16, 32};
  const double batch = batches[rng() % 3];
  if (seed % 3 == 0) {
    // Mixed servers: the first half A100, the rest V100; the splits by speed are searched too.
    WorkloadSpec spec;
    spec.global_batch = static_cast<std::int64_t>(batch);
    ServerDevices devices;
    devices.kinds = {builtin_device("a100"), builtin_device("v100")};
    for (std::uint32_t v = 0; v < c.net.compute_count(); ++v)
      devices.kind_of_server.push_back(v < c.net.compute_count() / 2 ? 0 : 1);
    const auto gpus = c.net.gpus_of_nodes();
    c.workload = make_workload(spec, transformer_model("random", shape), devices, gpus);
    c.space.set(&StrategyKnobs::batch_split, {BatchSplit::Even, BatchSplit::Proportional});
    c.space.set(&StrategyKnobs::stage_split, {StageSplit::Even, StageSplit::Speed});
  } else {
    c.workload = make_workload(transformer_model("random", shape), builtin_device("a100"), "fp16", batch);
    c.space.set(&StrategyKnobs::stage_split,
                random_subset<StageSplit>({StageSplit::Even, StageSplit::Ends}, rng));
  }
  c.space.set(&StrategyKnobs::schedule,
              random_subset<PipelineSchedule>(
                  {PipelineSchedule::OneFOneB, PipelineSchedule::GPipe, PipelineSchedule::Interleaved}, rng));
  c.space.set(&StrategyKnobs::recompute,
              random_subset<Recompute>({Recompute::None, Recompute::Selective, Recompute::Full}, rng));
  c.space.set(&StrategyKnobs::zero, random_subset<std::uint8_t>({0, 1, 2, 3}, rng));
  c.space.set(&StrategyKnobs::sequence_parallel, random_subset<bool>({false, true}, rng));
  c.space.set(&StrategyKnobs::tp_overlap,
              random_subset<TpOverlap>({TpOverlap::None, TpOverlap::Backward, TpOverlap::Full}, rng));
  c.space.set(&StrategyKnobs::dp_overlap, random_subset<bool>({true, false}, rng));
  c.space.max_microbatches = 8;
  c.top = 1 + static_cast<std::uint32_t>(rng() % 4);
  c.label = "seed " + std::to_string(seed) + (c.workload.mixed() ? " (A100 + V100)" : "") + ": " +
            std::to_string(shape.layers) + " layers, hidden " + std::to_string(shape.hidden) + ", " +
            std::to_string(c.net.gpu_count()) + " GPUs, top " + std::to_string(c.top);
  return c;
}

TEST(ExactStrategySearch, EqualsBruteForceOnRandomModelsAndClusters) {
  std::uint64_t total_pruned = 0, total_candidates = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    Case c = random_case(seed);
    // Brute force: every candidate that fits, simulated from a fresh plan (no scorer, no memo),
    // ranked by (time, enumeration order).
    struct Timed {
      double time;
      std::size_t index;
      Strategy s;
    };
    std::vector<Timed> all;
    const auto candidates = feasible_strategies(c.workload, c.net.gpu_count(), c.space);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const IterationPlan plan = plan_iteration(c.workload, candidates[i]);
      if (!plan.feasible) continue;
      const double t = sim::simulate_iteration(c.net, plan.graph, c.options).job(0).iteration_time_s;
      // The bound is admissible on every candidate.
      const double bound = compute_lower_bound(c.workload, candidates[i], nullptr);
      EXPECT_LE(bound, t) << c.label << " candidate " << i;
      EXPECT_GT(bound, 0) << c.label;
      all.push_back({t, i, candidates[i]});
    }
    ASSERT_FALSE(all.empty()) << c.label;
    std::sort(all.begin(), all.end(), [](const Timed& a, const Timed& b) {
      return a.time < b.time || (a.time == b.time && a.index < b.index);
    });

    StrategyScorer scorer(c.workload, c.net, c.options);
    const auto r = exhaustive_strategy_search(scorer, c.workload, c.space, c.top);
    const std::size_t k = std::min<std::size_t>(c.top, all.size());
    ASSERT_EQ(r.top.size(), k) << c.label;
    for (std::size_t i = 0; i < k; ++i) {
      EXPECT_EQ(r.top[i].iteration_time_s, all[i].time) << c.label << " rank " << i;
      EXPECT_TRUE(r.top[i].strategy == all[i].s) << c.label << " rank " << i;
    }
    EXPECT_EQ(r.evaluated + r.pruned, all.size()) << c.label;
    EXPECT_EQ(scorer.simulations(), r.evaluated) << c.label;
    // The answer replays on a fresh scorer.
    StrategyScorer replay(c.workload, c.net, c.options);
    EXPECT_EQ(*replay.iteration_time(r.best), r.iteration_time_s) << c.label;
    total_pruned += r.pruned;
    total_candidates += all.size();
  }
  // The bound must also do something: across the cases, some candidates are never simulated.
  EXPECT_GT(total_pruned, total_candidates / 10);
}

TEST(ExactStrategySearch, BoundOfOneStageIsTheBatchCompute) {
  // One stage: the bound is the batch's forward and backward FLOPs at the sustained rate.
  TransformerShape shape;
  shape.layers = 8, shape.hidden = 256, shape.heads = 4, shape.kv_heads = 4, shape.ffn_hidden = 1024;
  shape.seq_len = 256, shape.vocab = 1000, shape.max_positions = 256;
  Workload w = make_workload(transformer_model("t", shape), builtin_device("a100"), "fp16", 32);
  w.per_operator = false;  // FLOPs at the sustained rate: the closed form below
  Strategy s;
  s.dp = 1, s.tp = 1, s.pp = 1, s.microbatches = 4;
  const double one_stage = compute_lower_bound(w, s, nullptr);
  // pp = 1: the whole model's forward and backward FLOPs for the batch at the sustained rate.
  const double flops = (w.model.forward_flops_per_sample() + w.model.backward_flops_per_sample()) * 32;
  EXPECT_NEAR(one_stage, flops / w.flops_per_s, 1e-9 * one_stage);
  // Recomputation adds a forward to the backward of every block.
  s.recompute = Recompute::Full;
  EXPECT_GT(compute_lower_bound(w, s, nullptr), one_stage);
}

}  // namespace
}  // namespace toposweep::opt
