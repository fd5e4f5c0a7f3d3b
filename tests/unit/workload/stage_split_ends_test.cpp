// strategy.stage_split = ends (Megatron-Core's account_for_embedding_in_pipeline_split and
// account_for_loss_in_pipeline_split): a transformer's embedding and head each take one of L + 2
// even slots. Stage ranges worked by hand, the stage that runs the head relieved in a whole
// iteration, and models without blocks unchanged.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/hetero.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/memory.hpp"
#include "toposweep/workload/model_library.hpp"
#include "workload_test_helpers.hpp"

namespace toposweep {
namespace {

// Model::layers of a transformer: [embedding, block 0 .. L-1, head], so block b is layer b + 1.
std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges(const Model& m, std::uint32_t pp,
                                                            StageSplit split) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  for (const StageRange& r : partition_stages(m, pp, split)) out.emplace_back(r.first, r.last);
  return out;
}

TEST(StageSplitEnds, RangesByHand) {
  // DeepSeek-V3: 61 blocks and the multi-token-prediction layer (layers: embedding, 61 blocks, MTP,
  // head); 16 stages of 64 / 16 = 4 slots: the first holds the embedding and blocks 0-2, the last
  // blocks 59-60, the MTP layer and the head, the others four blocks each. Even: blocks
  // [p 61 / 16, (p + 1) 61 / 16), the last stage blocks 57-60, the MTP layer and the head.
  const Model ds = builtin_model("deepseek-v3");
  ASSERT_EQ(ds.layers.size(), 64u);
  const auto ends = ranges(ds, 16, StageSplit::Ends);
  EXPECT_EQ(ends.front(), (std::pair<std::uint32_t, std::uint32_t>{0, 4}));
  EXPECT_EQ(ends.back(), (std::pair<std::uint32_t, std::uint32_t>{60, 64}));
  for (std::uint32_t p = 1; p + 1 < 16; ++p)
    EXPECT_EQ(ends[p], (std::pair<std::uint32_t, std::uint32_t>{4 * p, 4 * p + 4})) << p;
  EXPECT_EQ(ranges(ds, 16, StageSplit::Even).back(), (std::pair<std::uint32_t, std::uint32_t>{58, 64}));
  // Megatron-Bridge's 32 virtual stages `Et|(tt|)*30mL`: 64 / 32 = 2 slots each.
  const auto mb = ranges(ds, 32, StageSplit::Ends);
  EXPECT_EQ(mb.front(), (std::pair<std::uint32_t, std::uint32_t>{0, 2}));   // E t
  EXPECT_EQ(mb.back(), (std::pair<std::uint32_t, std::uint32_t>{62, 64}));  // m L
  for (std::uint32_t p = 1; p + 1 < 32; ++p)
    EXPECT_EQ(mb[p], (std::pair<std::uint32_t, std::uint32_t>{2 * p, 2 * p + 2})) << p;
  // 24 blocks over 5 stages: 26 slots, boundaries after slot floor(26 p / 5): blocks 0-3 with the
  // embedding, 4-8, 9-13, 14-18, 19-23 with the head.
  TransformerShape t;
  t.layers = 24, t.hidden = 1024, t.heads = 16, t.seq_len = 1024, t.vocab = 32000;
  const Model m = transformer_model("t24", t);
  EXPECT_EQ(ranges(m, 5, StageSplit::Ends), (std::vector<std::pair<std::uint32_t, std::uint32_t>>{
                                                {0, 5}, {5, 10}, {10, 15}, {15, 20}, {20, 26}}));
  EXPECT_EQ(ranges(m, 5, StageSplit::Even), (std::vector<std::pair<std::uint32_t, std::uint32_t>>{
                                                {0, 5}, {5, 10}, {10, 15}, {15, 20}, {20, 26}}));
  // 26 slots over 13 stages: the embedding alone with block 0, the head with block 23.
  const auto thirteen = ranges(m, 13, StageSplit::Ends);
  EXPECT_EQ(thirteen.front(), (std::pair<std::uint32_t, std::uint32_t>{0, 2}));
  EXPECT_EQ(thirteen.back(), (std::pair<std::uint32_t, std::uint32_t>{24, 26}));
  // One stage, and models without blocks: as even.
  EXPECT_EQ(ranges(m, 1, StageSplit::Ends), ranges(m, 1, StageSplit::Even));
  const Model resnet = builtin_model("resnet50");
  EXPECT_EQ(ranges(resnet, 4, StageSplit::Ends), ranges(resnet, 4, StageSplit::Even));
}

TEST(StageSplitEnds, ThePlanRunsTheSplit) {
  // GPT-3 1.3B (24 blocks) on 4 stages: 26 slots, boundaries after slots 6, 13 and 19: blocks 0-4
  // with the embedding, 5-11, 12-17, 18-23 with the head; even: blocks 0-5, 6-11, 12-17, 18-23.
  const Workload w = make_workload(builtin_model("gpt3-1.3b"), builtin_device("a100"), "fp16", 8);
  const auto even = partition_stages(w.model, 4, StageSplit::Even);
  const auto ends = partition_stages(w.model, 4, StageSplit::Ends);
  EXPECT_EQ(ends[0].last, 6u);
  EXPECT_EQ(ends[1].last, 13u);
  EXPECT_EQ(ends[2].last, 19u);
  EXPECT_EQ(even[0].last, 7u);
  EXPECT_EQ(even[1].last, 13u);
  EXPECT_EQ(even[2].last, 19u);
  // The iteration plan's stages (device_shares) are the split's, per chunk with interleaving: 8
  // chunks of 26 / 8 slots.
  Strategy s;
  s.pp = 4;
  s.microbatches = 8;
  s.stage_split = StageSplit::Ends;
  for (const std::uint32_t v : {1u, 2u}) {
    s.schedule = v > 1 ? PipelineSchedule::Interleaved : PipelineSchedule::OneFOneB;
    s.virtual_stages = v;
    const auto want = partition_stages(w.model, 4 * v, StageSplit::Ends);
    const DeviceShares shares = device_shares(w, s);
    ASSERT_EQ(shares.chunks.size(), want.size());
    for (std::size_t c = 0; c < want.size(); ++c) {
      EXPECT_EQ(shares.chunks[c].first, want[c].first) << c;
      EXPECT_EQ(shares.chunks[c].last, want[c].last) << c;
    }
  }
  // Memory per GPU follows the split's stages: a stage's blocks differ, so does the worst stage.
  Strategy e = s;
  e.stage_split = StageSplit::Even;
  EXPECT_NE(memory_per_gpu(w, s).total(), memory_per_gpu(w, e).total());
}

// L + 2 chunks for L blocks (Megatron-Core's layout with one layer a virtual stage and the ends
// counted, as Megatron-MoE-ModelZoo's Qwen3-235B PP 32 x VPP 3 runs 94 blocks): the first chunk
// holds the embedding alone, the last the head alone, every other one block. GPT-3 125M, 12
// blocks: pp 14 (or pp 2 x 7 virtual stages) is a valid design with the ends counted, not without
// them, and pp 15 is not.
TEST(StageSplitEnds, AChunkMayHoldAnEndAlone) {
  const Workload w = make_workload(builtin_model("gpt3-125m"), builtin_device("a100"), "fp16", 14);
  ASSERT_EQ(w.model.layers.size(), 14u);
  const auto r = ranges(w.model, 14, StageSplit::Ends);
  for (std::uint32_t p = 0; p < 14; ++p)
    EXPECT_EQ(r[p], (std::pair<std::uint32_t, std::uint32_t>{p, p + 1}))
        << p;  // layer p: embedding, blocks, head
  Strategy s;
  s.pp = 14;
  s.microbatches = 14;
  s.stage_split = StageSplit::Ends;
  const IterationPlan plan = plan_iteration(w, s);
  EXPECT_EQ(plan.pp, 14u);
  Strategy even = s;
  even.stage_split = StageSplit::Even;
  EXPECT_THROW(plan_iteration(w, even), InvalidDesign);
  Strategy fifteen = s;
  fifteen.pp = 15;
  fifteen.microbatches = 15;
  EXPECT_THROW(
      plan_iteration(make_workload(builtin_model("gpt3-125m"), builtin_device("a100"), "fp16", 15), fifteen),
      InvalidDesign);
  Strategy v = s;
  v.pp = 2;
  v.schedule = PipelineSchedule::Interleaved;
  v.virtual_stages = 7;
  EXPECT_EQ(device_shares(w, v).chunks.size(), 14u);
  EXPECT_EQ(plan_iteration(w, v).pp, 2u);
}

}  // namespace
}  // namespace toposweep
