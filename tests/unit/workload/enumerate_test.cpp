#include "toposweep/workload/enumerate.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/memory.hpp"
#include "toposweep/workload/model_library.hpp"
#include "toposweep/workload/strategy_knobs.hpp"

namespace toposweep {
namespace {

TEST(Enumerate, Divisors) {
  EXPECT_EQ(divisors(12), (std::vector<std::uint64_t>{1, 2, 3, 4, 6, 12}));
  EXPECT_EQ(divisors(1), (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(divisors(49), (std::vector<std::uint64_t>{1, 7, 49}));
}

TEST(Enumerate, CountsMatchABruteForceOverTheSpace) {
  // GPT-3 1.3B (16 heads, 24 layers) on 32 GPUs, global batch 64: brute force over all
  // (dp, tp, pp, mu) in 1..64 with the validity rules checked one by one.
  const Workload w = make_workload(builtin_model("gpt3-1.3b"), builtin_device("a100"), "fp16", 64);
  StrategySpace space;
  space.set(&StrategyKnobs::schedule, {PipelineSchedule::OneFOneB});
  space.set(&StrategyKnobs::recompute, {Recompute::None});
  space.set(&StrategyKnobs::zero, {0});
  space.set(&StrategyKnobs::sequence_parallel, {false});
  space.set(&StrategyKnobs::tp_overlap, {TpOverlap::None});
  space.set(&StrategyKnobs::dp_overlap, {true});
  std::set<std::tuple<int, int, int, int>> expected;
  for (int dp = 1; dp <= 32; ++dp)
    for (int tp = 1; tp <= 32; ++tp)
      for (int pp = 1; pp <= 32; ++pp)
        for (int mu = 1; mu <= 64; ++mu)
          if (dp * tp * pp == 32 && 16 % tp == 0 && pp <= 24 && 64 % dp == 0 && (64 / dp) % mu == 0)
            expected.insert({dp, tp, pp, mu});
  std::set<std::tuple<int, int, int, int>> got;
  const auto count = for_each_strategy(w, 32, space, [&](const Strategy& s, double, bool) {
    got.insert({static_cast<int>(s.dp), static_cast<int>(s.tp), static_cast<int>(s.pp),
                static_cast<int>(s.microbatches)});
  });
  EXPECT_EQ(got, expected);
  EXPECT_EQ(count.checked, expected.size());
  EXPECT_EQ(count.feasible + count.infeasible, count.checked);
  // The default space, counted by hand from the canonical rules: schedules only with pp > 1
  // (1F1B, GPipe, and interleaving with v >= 2 chunks, pp * v <= 24 layers, when pp divides the
  // microbatch count), three recompute modes, ZeRO 0-3 and DP overlap on/off only with dp > 1,
  // sequence parallelism on/off and three TP overlaps only with tp > 1.
  std::uint64_t canonical = 0;
  for (const auto& [dp, tp, pp, mu] : expected) {
    std::uint64_t schedules = 1;
    if (pp > 1) {
      schedules = 2;
      if (mu % pp == 0)
        for (int v = 2; pp * v <= 24; ++v) ++schedules;
    }
    canonical += schedules * 3 * (dp > 1 ? 4 * 2 : 1) * (tp > 1 ? 2 * 3 : 1);
  }
  EXPECT_EQ(for_each_strategy(w, 32, StrategySpace{}, {}).checked, canonical);
  // No strategy twice.
  std::set<std::string> seen;
  for_each_strategy(w, 32, StrategySpace{}, [&](const Strategy& s, double, bool) {
    EXPECT_TRUE(seen.insert(strategy_to_json(s).dump()).second) << strategy_to_json(s).dump();
  });
}

TEST(Enumerate, FastMemoryCheckAgreesWithTheFullModel) {
  StrategySpace space;
  space.set(&StrategyKnobs::sequence_parallel, {false, true});
  space.set(&StrategyKnobs::recompute, {Recompute::None, Recompute::Selective, Recompute::Full});
  // Both splits of a transformer's blocks (elsewhere ends is the even split and not tried).
  space.set(&StrategyKnobs::stage_split, {StageSplit::Even, StageSplit::Ends});
  for (const char* name : {"gpt3-13b", "bert-large", "resnet50", "dlrm", "llama-70b"}) {
    const Workload w = make_workload(builtin_model(name), builtin_device("a100"), "fp16", 256);
    const auto count = for_each_strategy(w, 64, space, [&](const Strategy& s, double mem, bool feasible) {
      validate_strategy(s, w, 64);  // every enumerated strategy is valid
      const double full = memory_per_gpu(w, s).total();
      EXPECT_NEAR(mem, full, 1e-9 * full) << name;
      EXPECT_EQ(feasible, full <= w.device.hbm_bytes) << name;
    });
    EXPECT_GT(count.checked, 0u) << name;
  }
  // Block recomputation (one block of each chunk, the space's strategy.recompute_layers): the
  // aggregates the enumerator keeps per chunk count agree with the full model too.
  space.codes(*find_strategy_knob(&StrategyKnobs::recompute_layers)) = {1};
  for (const char* name : {"gpt3-13b", "llama-70b"}) {
    const Workload w = make_workload(builtin_model(name), builtin_device("a100"), "fp16", 256);
    std::size_t partial = 0;
    for_each_strategy(w, 64, space, [&](const Strategy& s, double mem, bool feasible) {
      ASSERT_EQ(s.recompute_layers, 1u);
      const double full = memory_per_gpu(w, s).total();
      EXPECT_NEAR(mem, full, 1e-9 * full) << name;
      EXPECT_EQ(feasible, full <= w.device.hbm_bytes) << name;
      partial += partial_recompute(s) && s.virtual_stages > 1;
    });
    EXPECT_GT(partial, 0u) << name;
  }
}

TEST(Enumerate, Gpt3On1024GpusNeedsModelParallelismToFit) {
  const Workload w = make_workload(builtin_model("gpt3-175b"), builtin_device("a100"), "fp16", 1536);
  StrategyCount count;
  const auto feasible = feasible_strategies(w, 1024, StrategySpace{}, &count);
  EXPECT_GT(count.infeasible, 0u);
  EXPECT_EQ(feasible.size(), count.feasible);
  // 175B x 16 bytes / 80 GB needs >= 35-way model sharding without ZeRO; with ZeRO-1 over
  // dp <= 1024 the weights+grads (4 bytes/param) alone need tp*pp >= 9; with ZeRO-2 the
  // weights (2 bytes/param) need tp*pp >= 5.
  for (const auto& s : feasible) {
    if (s.zero == 0) {
      EXPECT_GE(s.tp * s.pp, 35u);
    }
    if (s.zero == 1) {
      EXPECT_GE(s.tp * s.pp, 9u);
    }
    if (s.zero == 2) {
      EXPECT_GE(s.tp * s.pp, 5u);
    }
  }
}

}  // namespace
}  // namespace toposweep
