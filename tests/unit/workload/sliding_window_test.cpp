// Sliding-window attention (transformer.sliding_window, full_attention_every; block_window.cpp)
// against brute-force pair counts, FLOPs and fused-attention times worked out by hand, the model
// card's sizes of GPT-OSS, and bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/block.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/layer_cost.hpp"
#include "toposweep/workload/model_library.hpp"
#include "workload_test_helpers.hpp"

namespace toposweep {
namespace {

// A small GQA model: hidden 1024, 16 heads of 64 (4 KV heads), seq 512, 6 blocks.
nlohmann::json windowed(nlohmann::json extra) {
  nlohmann::json t = {{"layers", 6},     {"hidden", 1024},           {"heads", 16},
                      {"kv_heads", 4},   {"ffn_hidden", 3072},       {"seq_len", 512},
                      {"vocab", 1000},   {"mlp", "swiglu"},          {"norm", "rmsnorm"},
                      {"biases", false}, {"tied_embeddings", false}, {"position", "rotary"}};
  if (!extra.is_null()) t.update(extra);
  return {{"name", "sw"}, {"transformer", t}};
}

std::vector<const Layer*> blocks(const Model& m) {
  std::vector<const Layer*> out;
  for (const Layer& l : m.layers)
    if (l.kind == LayerKind::TransformerBlock) out.push_back(&l);
  return out;
}

TEST(SlidingWindow, AttendedShareCountsTheWindowsPairs) {
  // Brute force: query i (1-based) attends to keys max(1, i - w + 1) .. i.
  for (const int s : {1, 7, 64, 300})
    for (const int w : {1, 2, 5, 64, 299, 300, 1000}) {
      double pairs = 0;
      for (int i = 1; i <= s; ++i)
        for (int j = 1; j <= i; ++j) pairs += i - j < w ? 1 : 0;
      EXPECT_NEAR(attended_share(s, w) * s * (s + 1) / 2, pairs, 1e-9 * pairs) << s << " " << w;
    }
  EXPECT_EQ(attended_share(4096, 0), 1.0);     // no window
  EXPECT_EQ(attended_share(4096, 4096), 1.0);  // a window the whole sequence long
  // GPT-OSS at 4096 tokens: 128 x 129 / 2 + 3968 x 128 pairs of 4096 x 4097 / 2.
  EXPECT_DOUBLE_EQ(attended_share(4096, 128), (128.0 * 129 / 2 + 3968.0 * 128) / (4096.0 * 4097 / 2));
}

TEST(SlidingWindow, FullAttentionEveryPlacesTheWholeSequenceBlocks) {
  const auto flags = [](const Model& m) {
    std::vector<bool> f;
    for (const Layer* l : blocks(m)) f.push_back(l->windowed);
    return f;
  };
  const std::vector<bool> alternate = {true, false, true, false, true, false};
  const std::vector<bool> thirds = {true, true, false, true, true, false};
  EXPECT_EQ(flags(model_from_json(windowed({{"sliding_window", 128}, {"full_attention_every", 2}}), "sw")),
            alternate);
  EXPECT_EQ(flags(model_from_json(windowed({{"sliding_window", 128}, {"full_attention_every", 3}}), "sw")),
            thirds);
  EXPECT_EQ(flags(model_from_json(windowed({{"sliding_window", 128}}), "sw")), std::vector<bool>(6, true));
  EXPECT_EQ(flags(model_from_json(windowed({}), "sw")), std::vector<bool>(6, false));
  // Built-ins: GPT-OSS alternates, starting windowed (its config.json's layer_types).
  const Model oss = builtin_model("gpt-oss-20b");
  ASSERT_EQ(blocks(oss).size(), 24u);
  for (std::size_t i = 0; i < 24; ++i) EXPECT_EQ(blocks(oss)[i]->windowed, i % 2 == 0) << i;
}

TEST(SlidingWindow, WindowedBlocksDoTheWindowsShareOfTheAttentionFlops) {
  // QK^T and x V count 2 x 2 s^2 (heads x 64) per sequence over the whole score matrix; a window
  // keeps attended_share of them. Everything else, parameters and kept activations, is the same.
  const Model full = model_from_json(windowed({}), "sw");
  const Model win = model_from_json(windowed({{"sliding_window", 100}, {"full_attention_every", 2}}), "sw");
  const double s = 512, q = 1024, attention = 2 * 2 * s * s * q;
  const double share = attended_share(512, 100);
  EXPECT_DOUBLE_EQ(blocks(win)[1]->forward_flops, blocks(full)[1]->forward_flops);
  EXPECT_NEAR(blocks(full)[0]->forward_flops - blocks(win)[0]->forward_flops, attention * (1 - share),
              1e-6 * attention);
  EXPECT_DOUBLE_EQ(blocks(win)[0]->backward_flops, 2 * blocks(win)[0]->forward_flops);
  EXPECT_DOUBLE_EQ(win.parameters(), full.parameters());
  EXPECT_DOUBLE_EQ(blocks(win)[0]->act_sharded, blocks(full)[0]->act_sharded);
  EXPECT_DOUBLE_EQ(blocks(win)[0]->act_replicated, blocks(full)[0]->act_replicated);
}

Workload h100(const Model& m, bool fused) {
  Workload w = make_workload(m, builtin_device("h100"), "bf16", 2);
  w.fused_attention = fused;
  return w;
}

// Seconds of the plan's compute (its one stage's, communication free).
double compute_s(const IterationPlan& p) {
  return test::makespan_without_comm(p.graph);
}

Strategy tp2() {
  Strategy s;
  s.tp = 2;
  s.microbatches = 1;
  return s;
}

TEST(SlidingWindow, FusedAttentionTakesTheWindowsShareOfItsTime) {
  // Flash attention's forward is 2 b (a / t) s^2 d / (peak x forward fraction) over the causal
  // half, its backward 2.5 times that at the backward fraction: a windowed block saves
  // (1 - share) of both and nothing else.
  const Model m = model_from_json(windowed({{"sliding_window", 100}}), "sw");
  const Workload w = h100(m, true);
  const LayerCostKey key = layer_cost_key(w, tp2());
  const TransformerCosts c = transformer_costs(key);
  const double b = 2, at = 16 / 2.0, s = 512, d = 64, cut = 1 - attended_share(512, 100);
  const double fwd = 2 * b * at * s * s * d / (key.device.peak_flops * key.device.flash_forward);
  const double bwd = 2.5 * 2 * b * at * s * s * d / (key.device.peak_flops * key.device.flash_backward);
  EXPECT_NEAR(c.block.forward.compute_s - c.windowed_block.forward.compute_s, cut * fwd, 1e-9 * fwd);
  EXPECT_NEAR(c.block.backward.compute_s - c.windowed_block.backward.compute_s, cut * bwd, 1e-9 * bwd);
  EXPECT_EQ(c.windowed_block.forward.exposed, c.block.forward.exposed);
  EXPECT_EQ(c.windowed_block.tp_bytes, c.block.tp_bytes);
  // The eager chain builds and masks the whole score matrix: a window saves it nothing.
  const TransformerCosts eager = transformer_costs(layer_cost_key(h100(m, false), tp2()));
  EXPECT_EQ(eager.windowed_block, eager.block);
  // Every block of the plan runs at its own variant: the iteration's compute is the sum.
  const IterationPlan plan = plan_iteration(w, tp2());
  const IterationPlan plain = plan_iteration(h100(model_from_json(windowed({}), "sw"), true), tp2());
  EXPECT_NEAR(compute_s(plain) - compute_s(plan), 6 * cut * (fwd + bwd), 1e-9 * compute_s(plain));
}

TEST(SlidingWindow, AWindowAsLongAsTheSequenceIsCausalAttentionBitForBit) {
  const Model none = model_from_json(windowed({}), "sw");
  const Model whole = model_from_json(windowed({{"sliding_window", 512}}), "sw");
  EXPECT_EQ(whole.forward_flops_per_sample(), none.forward_flops_per_sample());
  const TransformerCosts c = transformer_costs(layer_cost_key(h100(whole, true), tp2()));
  EXPECT_EQ(c.windowed_block, c.block);
  EXPECT_EQ(compute_s(plan_iteration(h100(whole, true), tp2())),
            compute_s(plan_iteration(h100(none, true), tp2())));
}

TEST(SlidingWindow, GptOssSizesMatchTheModelCard) {
  // By hand, per block: QKV 2880 x (4096 + 2 x 512) with its bias, output 4096 x 2880 with its
  // bias, two RMSNorm scales, router 2880 x E, E experts of 3 x 2880 x 2880; embedding and untied
  // head 201088 x 2880, final norm. Not counted: the experts' and router's biases, the sinks.
  const double attn = 2880.0 * 5120 + 5120 + 4096.0 * 2880 + 2880, norms = 2 * 2880.0;
  const double expert = 3 * 2880.0 * 2880, vocab = 2 * 201088.0 * 2880 + 2880;
  const Model big = builtin_model("gpt-oss-120b"), small = builtin_model("gpt-oss-20b");
  EXPECT_DOUBLE_EQ(big.parameters(), 36 * (attn + norms + 2880.0 * 128 + 128 * expert) + vocab);
  EXPECT_DOUBLE_EQ(small.parameters(), 24 * (attn + norms + 2880.0 * 32 + 32 * expert) + vocab);
  // The model card (arXiv:2508.10925, Table 1): 116.83B and 20.91B in total; 5.13B and 3.61B
  // active, which count the unembedding but not the embedding.
  EXPECT_NEAR(big.parameters() / 1e9, 116.83, 0.06);
  EXPECT_NEAR(small.parameters() / 1e9, 20.91, 0.02);
  EXPECT_NEAR((big.active_parameters() - 201088.0 * 2880) / 1e9, 5.13, 0.01);
  EXPECT_NEAR((small.active_parameters() - 201088.0 * 2880) / 1e9, 3.61, 0.01);
}

TEST(SlidingWindow, Mistral7bWindowsEveryBlock) {
  // The Llama closed form 2 V h + L (h (h + 2 kv) + h^2 + 3 h f + 2 h) + h with the paper's shapes:
  // 7,241,732,096 parameters (the released checkpoint's count); every block windowed, 4096 of 8192.
  const Model m = builtin_model("mistral-7b");
  const double h = 4096, kv = 1024, f = 14336;
  EXPECT_DOUBLE_EQ(m.parameters(), 2 * 32000 * h + 32 * (h * (h + 2 * kv) + h * h + 3 * h * f + 2 * h) + h);
  EXPECT_DOUBLE_EQ(m.parameters(), 7241732096.0);
  ASSERT_EQ(blocks(m).size(), 32u);
  for (const Layer* l : blocks(m)) EXPECT_TRUE(l->windowed);
  EXPECT_DOUBLE_EQ(attended_share(8192, 4096), (4096.0 * 4097 / 2 + 4096.0 * 4096) / (8192.0 * 8193 / 2));
}

TEST(SlidingWindow, BadInputNamesItsKey) {
  const auto where = [](nlohmann::json extra) {
    try {
      model_from_json(windowed(extra), "sw.json");
    } catch (const BadInput& e) {
      return e.where();
    }
    return std::string("no error");
  };
  EXPECT_NE(where({{"full_attention_every", 2}}).find("full_attention_every"), std::string::npos);
  EXPECT_NE(where({{"sliding_window", 0}}).find("sliding_window"), std::string::npos);
  EXPECT_NE(where({{"sliding_window", 128}, {"full_attention_every", 1}}).find("full_attention_every"),
            std::string::npos);
  EXPECT_EQ(where({{"sliding_window", 128}, {"full_attention_every", 2}}), "no error");
}

}  // namespace
}  // namespace toposweep
