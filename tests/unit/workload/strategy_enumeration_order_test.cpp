// The order, count and memory values of for_each_strategy, pinned: the optimizer's answers (ties,
// top-k lists, MCMC proposals) depend on the visiting order, so a rewrite of the enumerator must
// visit exactly the same strategies in exactly the same order with the same memory per GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "toposweep/workload/devices.hpp"
#include "toposweep/workload/enumerate.hpp"
#include "toposweep/workload/model_library.hpp"
#include "toposweep/workload/spec.hpp"
#include "workload_test_helpers.hpp"

namespace toposweep {
namespace {

// Every visit as one line: the strategy's JSON, the memory per GPU (hex float: exact) and whether
// it fits; the lines' FNV-1a hash and count summarise a long sequence.
struct Visits {
  std::vector<std::string> lines;
  std::uint64_t hash = 14695981039346656037ull;
  StrategyCount count;
};

Visits visits(const Workload& w, std::uint32_t gpus, const StrategySpace& space) {
  Visits v;
  v.count = for_each_strategy(w, gpus, space, [&](const Strategy& s, double memory, bool feasible) {
    char mem[64];
    std::snprintf(mem, sizeof mem, "%a", memory);
    std::string line = strategy_to_json(s).dump() + " " + mem + (feasible ? " fits" : " too big");
    for (char c : line + "\n") {
      v.hash ^= static_cast<unsigned char>(c);
      v.hash *= 1099511628211ull;
    }
    v.lines.push_back(std::move(line));
  });
  return v;
}

std::size_t count_with(const Visits& v, const std::string& text) {
  std::size_t n = 0;
  for (const auto& line : v.lines) n += line.find(text) != std::string::npos;
  return n;
}

TEST(StrategyEnumerationOrder, HandWorkedTwoLayerChainOnTwoGpus) {
  // A 2-layer non-transformer chain on 2 GPUs, global batch 2: tp = 1 only. pp = 1 (dp = 2, one
  // microbatch): recompute none/full (no selective without attention) x ZeRO 0-3 x DP overlap
  // on/off = 16. pp = 2 (dp = 1): microbatches 1 and 2, schedules 1f1b and gpipe (interleaving
  // needs pp x 2 chunks <= 2 layers: none), recompute none/full = 8. 24 in all, in this order.
  const Workload w = make_workload(test::uniform_chain(2), builtin_device("a100"), "fp16", 2);
  std::vector<std::tuple<int, int, std::string, std::string, int, bool>> got;
  const auto count = for_each_strategy(w, 2, StrategySpace{}, [&](const Strategy& s, double, bool) {
    EXPECT_EQ(s.tp, 1u);
    EXPECT_EQ(s.dp * s.pp, 2u);
    got.emplace_back(s.pp, s.microbatches, schedule_name(s.schedule), recompute_name(s.recompute), s.zero,
                     s.dp_overlap);
  });
  std::vector<std::tuple<int, int, std::string, std::string, int, bool>> expected;
  for (const char* r : {"none", "full"})
    for (int zero = 0; zero <= 3; ++zero)
      for (bool dpo : {true, false}) expected.emplace_back(1, 1, "1f1b", r, zero, dpo);
  for (int mu : {1, 2})
    for (const char* sched : {"1f1b", "gpipe"})
      for (const char* r : {"none", "full"}) expected.emplace_back(2, mu, sched, r, 0, true);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(count.checked, 24u);
}

TEST(StrategyEnumerationOrder, SmallTransformerOnEightGpusIsPinned) {
  // GPT-3 125M (12 heads, 14 pipeline units) on 8 V100s, global batch 64, the default space:
  // every knob of the default lists, interleaving included. Recorded before the enumerator was
  // written as a product over the knob table.
  const Workload w = make_workload(builtin_model("gpt3-125m"), builtin_device("v100"), "fp16", 64);
  const Visits v = visits(w, 8, StrategySpace{});
  EXPECT_EQ(v.count.checked, 9474u);
  EXPECT_EQ(v.count.feasible, 8369u);
  EXPECT_EQ(v.lines.size(), 9474u);
  EXPECT_EQ(v.hash, 4986749633352607956ull);
  EXPECT_EQ(
      v.lines.front(),
      R"({"bucket_bytes":26214400.0,"dp":8,"dp_overlap":true,"grad_accum_fusion":true,"microbatches":1,)"
      R"("p2p_overlap":true,"pp":1,"recompute":"none","scatter_gather":true,"schedule":"1f1b",)"
      R"("sequence_parallel":false,"tp":1,"tp_overlap":"none","zero1":false,"zero_stage":0} )" +
          v.lines.front().substr(v.lines.front().rfind('}') + 2));
  EXPECT_EQ(count_with(v, "\"sequence_parallel\":true"), 4068u);
  EXPECT_EQ(count_with(v, "\"schedule\":\"interleaved\""), 4992u);
}

TEST(StrategyEnumerationOrder, MixedServersWithCompressionArePinned) {
  // VGG-16 (dense and conv layers: SFB candidates) on an A100 server and a V100 server of 4 GPUs
  // each, global batch 8192 (a few do not fit), at most 4 microbatches, with the batch split,
  // stage split and compression lists searched.
  WorkloadSpec spec;
  spec.model = "vgg16";
  spec.device = "a100*1,v100*1";
  spec.global_batch = 8192;
  const ServerDevices devices =
      server_devices(spec.device, 2, [](const std::string& name) { return builtin_device(name); });
  const std::uint32_t gpus_of_server[] = {4, 4};
  const Workload w = make_workload(spec, builtin_model("vgg16"), devices, gpus_of_server);
  ASSERT_TRUE(w.mixed());
  StrategySpace space;
  space.set(&StrategyKnobs::batch_split, {BatchSplit::Even, BatchSplit::Proportional});
  space.set(&StrategyKnobs::stage_split, {StageSplit::Even, StageSplit::Speed});
  space.set(&StrategyKnobs::compression, {Compression::None, Compression::Sfb});
  space.max_microbatches = 4;
  const Visits v = visits(w, 8, space);
  EXPECT_EQ(v.count.checked, 2464u);
  EXPECT_EQ(v.count.feasible, 2456u);
  EXPECT_EQ(v.hash, 17553029795132028787ull);
  EXPECT_EQ(count_with(v, "\"batch_split\":\"proportional\""), 1220u);
  EXPECT_EQ(count_with(v, "\"stage_split\":\"speed\""), 1172u);
  EXPECT_EQ(count_with(v, "\"compression\":\"sfb\""), 488u);
}

}  // namespace
}  // namespace toposweep
