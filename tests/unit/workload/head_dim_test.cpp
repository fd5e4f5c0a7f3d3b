// transformer.head_dim: attention heads whose total width is not the hidden size (Qwen3: 64 heads
// of 128 over hidden 4096), against parameter and FLOP counts worked out by hand from the shapes
// and against the released models' published sizes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/layer_cost.hpp"
#include "toposweep/workload/model_library.hpp"

namespace toposweep {
namespace {

nlohmann::json dense(std::uint32_t hidden, std::uint32_t heads, std::uint32_t head_dim) {
  nlohmann::json t = {{"layers", 2},          {"hidden", hidden},   {"heads", heads},
                      {"kv_heads", 4},        {"ffn_hidden", 3072}, {"seq_len", 512},
                      {"vocab", 1000},        {"mlp", "swiglu"},    {"norm", "rmsnorm"},
                      {"position", "rotary"}, {"biases", false},    {"tied_embeddings", false}};
  if (head_dim > 0) t["head_dim"] = head_dim;
  return {{"name", "hd"}, {"transformer", t}};
}

const Layer& first_block(const Model& m) {
  for (const Layer& l : m.layers)
    if (l.kind == LayerKind::TransformerBlock) return l;
  throw std::logic_error("no block");
}

TEST(HeadDim, ParametersAndFlopsFollowTheHeadsWidth) {
  // hidden 1024, 16 heads of 128: queries 2048 wide, K and V 4 x 128 = 512 each.
  const Model m = model_from_json(dense(1024, 16, 128), "hd");
  const Layer& b = first_block(m);
  const double h = 1024, q = 2048, kv = 512, f = 3072, s = 512;
  // QKV h x (q + 2 kv), output q x h, SwiGLU 3 h f, two RMSNorm scales.
  EXPECT_DOUBLE_EQ(b.parameters(), h * (q + 2 * kv) + q * h + 3 * h * f + 2 * h);
  // Per sequence: 2 s x (the weights' products) + QK^T and x V over s x s x 128 per head.
  EXPECT_DOUBLE_EQ(b.forward_flops, 2 * s * (h * (q + 2 * kv) + q * h + 3 * h * f) + 2 * 2 * s * s * q);
  // Megatron's kept bytes with the query width: K, V and the rotary Q are q and kv wide, the output
  // projection's input q wide.
  const Model narrow = model_from_json(dense(1024, 16, 0), "hd");  // heads of 64: q = h
  EXPECT_DOUBLE_EQ(first_block(m).act_sharded - first_block(narrow).act_sharded,
                   s * (q - h) * 2 + s * (2 * kv - 2 * 256));  // Q and the projection input; K and V
}

TEST(HeadDim, HiddenOverHeadsIsTheDefaultBitForBit) {
  const Model implicit = model_from_json(dense(1024, 8, 0), "hd");
  const Model explicit_ = model_from_json(dense(1024, 8, 128), "hd");
  EXPECT_EQ(implicit.parameters(), explicit_.parameters());
  EXPECT_EQ(implicit.forward_flops_per_sample(), explicit_.forward_flops_per_sample());
  for (std::size_t i = 0; i < implicit.layers.size(); ++i) {
    EXPECT_EQ(implicit.layers[i].act_sharded, explicit_.layers[i].act_sharded);
    EXPECT_EQ(implicit.layers[i].act_replicated, explicit_.layers[i].act_replicated);
  }
  // The JSON round trip keeps it.
  EXPECT_EQ(model_to_json(explicit_)["transformer"]["head_dim"], 128);
  EXPECT_FALSE(model_to_json(implicit)["transformer"].contains("head_dim"));
}

TEST(HeadDim, HiddenNeedNotDivideByHeadsWhenGiven) {
  EXPECT_THROW(model_from_json(dense(1000, 16, 0), "hd"), BadInput);
  EXPECT_NO_THROW(model_from_json(dense(1000, 16, 64), "hd"));
}

TEST(HeadDim, Qwen3SizesMatchTheReleasedModels) {
  // By hand, per layer: QKV 4096 x (8192 + 1024), output 8192 x 4096, two RMSNorm scales, router
  // 4096 x 128, 128 experts of 3 x 4096 x 1536; embedding and untied head 151936 x 4096, final norm.
  const double attn = 4096.0 * 9216 + 8192.0 * 4096, norms = 2 * 4096.0, router = 4096.0 * 128;
  const double expert = 3 * 4096.0 * 1536, vocab = 2 * 151936.0 * 4096 + 4096;
  const Model m = builtin_model("qwen3-235b-a22b");
  EXPECT_DOUBLE_EQ(m.parameters(), 94 * (attn + norms + router + 128 * expert) + vocab);
  EXPECT_DOUBLE_EQ(m.active_parameters(), 94 * (attn + norms + router + 8 * expert) + vocab);
  // Published: 235B total, 22B activated (arXiv:2505.09388, Table 2).
  EXPECT_NEAR(m.parameters() / 1e9, 235, 0.5);
  EXPECT_NEAR(m.active_parameters() / 1e9, 22, 0.5);
  const Model small = builtin_model("qwen3-30b-a3b");
  EXPECT_NEAR(small.parameters() / 1e9, 30.5, 0.5);  // published 30.5B total, 3.3B activated
  EXPECT_NEAR(small.active_parameters() / 1e9, 3.3, 0.1);
}

}  // namespace
}  // namespace toposweep
