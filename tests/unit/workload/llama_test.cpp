// Llama-3-class transformers: the built-ins' parameter counts against the published sizes and a
// closed form worked out by hand, their forward FLOPs, grouped-query attention's kept
// activations (Korthikanti's terms re-derived), the RMSNorm and rotary-embedding parts of the
// block table, their model-JSON fields, and the model.seq_len override.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/block.hpp"
#include "toposweep/workload/layer_cost.hpp"
#include "toposweep/workload/memory.hpp"
#include "toposweep/workload/model_library.hpp"
#include "toposweep/workload/spec.hpp"

namespace toposweep {
namespace {

using nlohmann::json;

struct Llama3 {
  const char* name;
  double layers, hidden, heads, ffn;
  double published;  // Dubey et al. 2024, Table 3 / the model cards
};
const Llama3 kLlama3[] = {{"llama3-8b", 32, 4096, 32, 14336, 8.03e9},
                          {"llama3-70b", 80, 8192, 64, 28672, 70.6e9},
                          {"llama3-405b", 126, 16384, 128, 53248, 405e9}};
constexpr double kVocab = 128256, kKvHeads = 8, kSeq = 8192;

// Parameters by hand: input embedding V h and the untied output projection V h; per layer Q and
// O (h x h each), K and V (h x kv_dim each), SwiGLU's gate, up and down (3 h ffn), two RMSNorm
// scales (h each); the final RMSNorm (h). No biases, no position table.
double closed_form_parameters(const Llama3& c) {
  const double h = c.hidden, kv = h / c.heads * kKvHeads;
  const double layer = h * (h + 2 * kv) + h * h + 3 * h * c.ffn + 2 * h;
  return kVocab * h + kVocab * h + c.layers * layer + h;
}

TEST(Llama3, ParameterCountsAreTheClosedFormAndThePublishedSizes) {
  for (const Llama3& c : kLlama3) {
    SCOPED_TRACE(c.name);
    const Model m = builtin_model(c.name);
    EXPECT_EQ(m.parameters(), closed_form_parameters(c));
    EXPECT_NEAR(m.parameters(), c.published, 0.005 * c.published);
  }
  // The sums written out: 8,030,261,248; 70,553,706,496; 405,853,388,800.
  EXPECT_EQ(builtin_model("llama3-8b").parameters(), 8030261248.0);
  EXPECT_EQ(builtin_model("llama3-70b").parameters(), 70553706496.0);
  EXPECT_EQ(builtin_model("llama3-405b").parameters(), 405853388800.0);
}

TEST(Llama3, ShapesAreTheLlama3Papers) {
  for (const Llama3& c : kLlama3) {
    SCOPED_TRACE(c.name);
    const TransformerShape t = *builtin_model(c.name).transformer;
    EXPECT_EQ(t.layers, c.layers);
    EXPECT_EQ(t.kv_heads, 8u);
    EXPECT_EQ(t.vocab, 128256u);
    EXPECT_EQ(t.seq_len, 8192u);
    EXPECT_EQ(t.max_positions, 0u);
    EXPECT_TRUE(t.gated_mlp);
    EXPECT_EQ(t.norm, NormKind::RMSNorm);
    EXPECT_EQ(t.position, PositionKind::Rotary);
    EXPECT_FALSE(t.tied_embeddings);
    EXPECT_FALSE(t.biases);
    EXPECT_NE(builtin_model(c.name).description.find("arXiv:2407.21783"), std::string::npos);
  }
  const TransformerShape l2 = *builtin_model("llama-70b").transformer;  // Llama 2: RMSNorm + RoPE too
  EXPECT_EQ(l2.norm, NormKind::RMSNorm);
  EXPECT_EQ(l2.position, PositionKind::Rotary);
}

// Forward FLOPs per token: 2 x the matmul parameters a token passes through (every block's
// projections, h (h + 2 kv_dim) + h^2 + 3 h ffn, and the output projection V h; the embedding
// lookup and the norms do no multiply-adds) plus the attention core, QK^T and scores x V at
// 2 s h each per layer: 4 s h L. RoPE is memory-bound (no FLOPs). Backward is twice forward.
TEST(Llama3, ForwardFlopsPerTokenAreTwiceTheMatmulParametersPlusAttention) {
  for (const Llama3& c : kLlama3) {
    SCOPED_TRACE(c.name);
    const Model m = builtin_model(c.name);
    const double h = c.hidden, kv = h / c.heads * kKvHeads, L = c.layers, s = kSeq;
    const double matmul = L * (h * (h + 2 * kv) + h * h + 3 * h * c.ffn) + kVocab * h;
    const double per_token = 2 * matmul + 4 * s * h * L;
    EXPECT_EQ(m.forward_flops_per_sample(), s * per_token);
    EXPECT_EQ(m.backward_flops_per_sample(), 2 * s * per_token);
  }
}

// A small GQA shape: s = 16, h = 64, 8 heads of 8, 2 KV heads (kv_dim = 16), GeLU MLP (f = 4h),
// LayerNorm, learned positions.
TransformerShape small_gqa() {
  TransformerShape t;
  t.layers = 2;
  t.hidden = 64;
  t.heads = 8;
  t.kv_heads = 2;
  t.seq_len = 16;
  t.vocab = 100;
  t.max_positions = 16;
  return t;
}

// Korthikanti et al. 2022 Sec. 4.1 re-derived for GQA, bytes per layer and sequence at 2 bytes
// per element. Attention: QKV input 2sh, Q 2sh, K 2 s kv, softmax output 2as^2, dropout mask
// as^2, dropout output 2as^2, V 2 s kv, output projection input 2sh, residual mask sh: 7sh +
// 4 s kv + 5as^2. MLP: norm input 2sh, FFN-in input 2sh, GeLU input 8sh, FFN-out input 8sh,
// residual mask sh: 19sh. Attention norm input 2sh. In all 30sh + 4 s kv + 5as^2 (kv = h: 34sh).
TEST(Llama3, GqaKeepsKAndVAtKvDim) {
  const TransformerShape t = small_gqa();
  const Model m = transformer_model("small", t);
  Workload w = make_workload(m, builtin_device("a100"), "fp16", 8);
  w.fused_attention = false;
  const double s = 16, h = 64, a = 8, kv = 16;
  const LayerActivations one = layer_activations(w, m.layers[1], ActivationSplit{1, 1});
  EXPECT_EQ(one.none, 30 * s * h + 4 * s * kv + 5 * a * s * s);  // 41,984 bytes
  EXPECT_EQ(one.none, 41984.0);
  EXPECT_EQ(one.selective, 30 * s * h + 4 * s * kv);
  // TP 2 without sequence parallelism: the norms' inputs, QKV/FFN-in inputs and the masks
  // (10sh) on every rank, the rest split.
  const LayerActivations tp = layer_activations(w, m.layers[1], ActivationSplit{2, 1});
  EXPECT_EQ(tp.none, 10 * s * h + (20 * s * h + 4 * s * kv + 5 * a * s * s) / 2);
  // The table: Q and K kept by the scores, V by the context.
  for (const BlockOp& op : describe_block(t)) {
    if (op.name == "scores") {
      EXPECT_EQ(op.kept_sharded, s * h + s * kv);
    }
    if (op.name == "context") {
      EXPECT_EQ(op.kept_sharded, s * kv);
    }
  }
}

TEST(Llama3, RopeIsOnTheTableOnlyForRotaryModels) {
  TransformerShape t = small_gqa();
  for (const BlockOp& op : describe_block(t)) EXPECT_NE(op.role, OpRole::Rotary) << op.name;
  t.position = PositionKind::Rotary;
  t.max_positions = 0;
  const std::vector<BlockOp> ops = describe_block(t);
  int ropes = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].role != OpRole::Rotary) continue;
    ++ropes;
    const BlockOp& op = ops[i];
    ASSERT_GT(i, 0u);
    EXPECT_EQ(ops[i - 1].name, "qkv");  // right after the QKV projection
    EXPECT_EQ(op.name, "rope");
    EXPECT_EQ(op.kind, OpKind::MemoryBound);
    EXPECT_EQ(op.axis, ParallelAxis::Tensor);
    EXPECT_EQ(op.M, 16.0);
    EXPECT_EQ(op.N, 64.0 + 16);  // Q and K: h + kv_dim per token
    EXPECT_EQ(op.forward, (Traffic{2, 0}));
    EXPECT_EQ(op.backward, (Traffic{2, 0}));
    EXPECT_EQ(op.flops(), 0.0);
    EXPECT_EQ(op.kept_replicated + op.kept_sharded + op.params_sharded + op.params_replicated, 0.0);
  }
  EXPECT_EQ(ropes, 1);
  // No position table: the embedding has only the token matrix.
  EXPECT_EQ(embedding_layer(t).parameters(), 100.0 * 64);
}

TEST(Llama3, RopeCostsAKernelEachWayWithFusedAttentionToo) {
  for (bool fused : {false, true}) {
    SCOPED_TRACE(fused);
    Model learned = builtin_model("llama3-8b");
    TransformerShape t = *learned.transformer;
    t.position = PositionKind::Learned;
    learned = transformer_model("learned", t);
    Workload wl = make_workload(learned, builtin_device("h100"), "bf16", 8);
    Workload wr = make_workload(builtin_model("llama3-8b"), builtin_device("h100"), "bf16", 8);
    wl.fused_attention = wr.fused_attention = fused;
    Strategy s;
    s.tp = 8;
    s.dp = 1;
    s.microbatches = 8;
    const TransformerCosts cl = transformer_costs(layer_cost_key(wl, s));
    const TransformerCosts cr = transformer_costs(layer_cost_key(wr, s));
    EXPECT_GT(cr.block.forward.compute_s, cl.block.forward.compute_s);
    EXPECT_GT(cr.block.backward.compute_s, cl.block.backward.compute_s);
    EXPECT_LT(cr.embedding.forward.compute_s, cl.embedding.forward.compute_s);  // no position add
  }
}

TEST(Llama3, RmsNormHasAScaleOnly) {
  TransformerShape t = small_gqa();  // LayerNorm with biases: scale and shift
  EXPECT_EQ(norm_parameters(t), 2 * 64.0);
  const double layer_norm_params = transformer_model("ln", t).parameters();
  t.norm = NormKind::RMSNorm;
  EXPECT_EQ(norm_parameters(t), 64.0);
  for (const BlockOp& op : describe_block(t)) {
    if (op.role == OpRole::Norm) {
      EXPECT_EQ(op.params_replicated, 64.0) << op.name;
    }
  }
  EXPECT_EQ(head_layer(t).params_replicated, 64.0);  // final norm
  // Two norms per block and the final one lose their shift: (2 L + 1) h.
  EXPECT_EQ(layer_norm_params - transformer_model("rms", t).parameters(), (2 * 2 + 1) * 64.0);
  // Same HBM traffic as a layer norm.
  TransformerShape ln = small_gqa();
  const std::vector<BlockOp> a = describe_block(ln), b = describe_block(t);
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].role == OpRole::Norm) {
      EXPECT_EQ(a[i].forward, b[i].forward);
      EXPECT_EQ(a[i].backward, b[i].backward);
      EXPECT_EQ(a[i].kept_replicated, b[i].kept_replicated);
    }
}

std::string error_where(const std::string& text) {
  try {
    model_from_json(json::parse(text), "m.json");
  } catch (const BadInput& e) {
    return e.where();
  }
  return "no error";
}

std::string shape_json(const std::string& extra) {
  return R"({"name": "x", "transformer": {"layers": 2, "hidden": 64, "heads": 8, "seq_len": 16, "vocab": 100)" +
         extra + "}}";
}

TEST(Llama3, ModelJsonReadsMlpNormAndPosition) {
  const Model m = model_from_json(
      json::parse(shape_json(R"(, "kv_heads": 2, "mlp": "swiglu", "norm": "rmsnorm", "position": "rotary")")),
      "m.json");
  EXPECT_TRUE(m.transformer->gated_mlp);
  EXPECT_EQ(m.transformer->norm, NormKind::RMSNorm);
  EXPECT_EQ(m.transformer->position, PositionKind::Rotary);
  // The defaults: GeLU, LayerNorm, learned positions; gated_mlp still read.
  const Model d = model_from_json(json::parse(shape_json(R"(, "gated_mlp": true)")), "m.json");
  EXPECT_TRUE(d.transformer->gated_mlp);
  EXPECT_EQ(d.transformer->norm, NormKind::LayerNorm);
  EXPECT_EQ(d.transformer->position, PositionKind::Learned);
  EXPECT_TRUE(model_from_json(json::parse(shape_json(R"(, "gated_mlp": true, "mlp": "swiglu")")), "m.json")
                  .transformer->gated_mlp);
  EXPECT_FALSE(model_from_json(json::parse(shape_json(R"(, "gated_mlp": false, "mlp": "gelu")")), "m.json")
                   .transformer->gated_mlp);
}

TEST(Llama3, ModelJsonErrorsNameTheKey) {
  EXPECT_EQ(error_where(shape_json(R"(, "mlp": "relu")")), "m.json.transformer.mlp");
  EXPECT_EQ(error_where(shape_json(R"(, "mlp": "swiglu", "gated_mlp": false)")), "m.json.transformer.mlp");
  EXPECT_EQ(error_where(shape_json(R"(, "mlp": "gelu", "gated_mlp": true)")), "m.json.transformer.mlp");
  EXPECT_EQ(error_where(shape_json(R"(, "norm": "batchnorm")")), "m.json.transformer.norm");
  EXPECT_EQ(error_where(shape_json(R"(, "norm": 1)")), "m.json.transformer.norm");
  EXPECT_EQ(error_where(shape_json(R"(, "position": "alibi")")), "m.json.transformer.position");
  EXPECT_EQ(error_where(shape_json(R"(, "position": "rotary", "max_positions": 16)")),
            "m.json.transformer.max_positions");
  try {
    model_from_json(json::parse(shape_json(R"(, "norm": "batchnorm")")), "m.json");
  } catch (const BadInput& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("layernorm or rmsnorm"), std::string::npos) << e.what();
  }
}

TEST(Llama3, NewShapeFieldsRoundTrip) {
  // Every combination of the three new fields reads back from its description.
  for (int bits = 0; bits < 8; ++bits) {
    TransformerShape t = small_gqa();
    t.gated_mlp = bits & 1;
    t.norm = bits & 2 ? NormKind::RMSNorm : NormKind::LayerNorm;
    if (bits & 4) {
      t.position = PositionKind::Rotary;
      t.max_positions = 0;
    }
    std::string name = "m";  // (not "m" + to_string: GCC 12's -Wrestrict misfires on it)
    name += std::to_string(bits);
    const Model m = transformer_model(name, t);
    const json j = model_to_json(m);
    EXPECT_EQ(j["transformer"]["mlp"], t.gated_mlp ? "swiglu" : "gelu");
    EXPECT_EQ(j["transformer"]["norm"], bits & 2 ? "rmsnorm" : "layernorm");
    EXPECT_EQ(j["transformer"]["position"], bits & 4 ? "rotary" : "learned");
    const Model back = model_from_json(j, "m.json");
    EXPECT_EQ(back.transformer, m.transformer) << bits;
    EXPECT_EQ(back.parameters(), m.parameters()) << bits;
    EXPECT_EQ(model_to_json(back), j) << bits;
  }
}

TEST(Llama3, SeqLenOverrideRebuildsTheModelAtThatLength) {
  const Model base = builtin_model("llama3-8b");
  const Model m = with_seq_len(base, 4096, "key model.seq_len");
  TransformerShape t = *base.transformer;
  t.seq_len = 4096;
  const Model want = transformer_model("llama3-8b", t, base.description);
  EXPECT_EQ(m.transformer, want.transformer);
  EXPECT_EQ(m.forward_flops_per_sample(), want.forward_flops_per_sample());
  EXPECT_EQ(m.parameters(), base.parameters());
  EXPECT_EQ(m.name, base.name);
  EXPECT_EQ(m.default_batch_per_gpu, base.default_batch_per_gpu);
  ASSERT_EQ(m.layers.size(), want.layers.size());
  for (std::size_t i = 0; i < m.layers.size(); ++i)
    EXPECT_EQ(m.layers[i].act_sharded, want.layers[i].act_sharded);
  // Rotary models take any length; learned positions bound it; other families have none.
  EXPECT_NO_THROW(with_seq_len(base, 131072, "key model.seq_len"));
  EXPECT_NO_THROW(with_seq_len(builtin_model("gpt3-1.3b"), 2048, "key model.seq_len"));
  EXPECT_NO_THROW(with_seq_len(builtin_model("gpt3-1.3b"), 1024, "key model.seq_len"));
  EXPECT_THROW(with_seq_len(builtin_model("gpt3-1.3b"), 2049, "key model.seq_len"), BadInput);
  EXPECT_THROW(with_seq_len(builtin_model("resnet50"), 128, "key model.seq_len"), BadInput);
  try {
    with_seq_len(builtin_model("bert-large"), 1024, "key model.seq_len");
    ADD_FAILURE() << "no error";
  } catch (const BadInput& e) {
    EXPECT_EQ(e.where(), "key model.seq_len");
  }
  // Through the workload spec.
  WorkloadSpec spec;
  spec.model = "llama3-8b";
  spec.device = "h100";
  spec.datatype = "bf16";
  spec.seq_len = 2048;
  EXPECT_EQ(make_workload(spec, 8).model.transformer->seq_len, 2048u);
  spec.model = "vgg16";
  EXPECT_THROW(make_workload(spec, 8), BadInput);
}

}  // namespace
}  // namespace toposweep
