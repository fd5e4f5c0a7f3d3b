// The built-in models, each from its published shape. Sources: GPT-3 (Brown et al. 2020,
// Table 2.1), Megatron-Turing NLG 530B (Smith et al. 2022), Llama 2 70B (Touvron et al. 2023),
// Llama 3 8B/70B/405B (Dubey et al. 2024, "The Llama 3 Herd of Models", arXiv:2407.21783, Table 3),
// Mixtral 8x7B/8x22B (Jiang et al. 2024), DeepSeek-V3 (DeepSeek-AI 2024),
// BERT (Devlin et al. 2019), ResNet-50 (He et al. 2016, torchvision v1.5 layout), VGG (Simonyan &
// Zisserman 2015), DLRM/NCF/CANDLE-Uno/BERT in TopoOpt's evaluation (Wang et al. NSDI 2023).
#include <functional>
#include <map>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/model_library.hpp"

namespace toposweep {
namespace {

TransformerShape gpt3_shape(std::uint32_t layers, std::uint32_t hidden, std::uint32_t heads) {
  TransformerShape t;
  t.layers = layers;
  t.hidden = hidden;
  t.heads = heads;
  t.seq_len = 2048;
  t.vocab = 50257;
  t.max_positions = 2048;
  return t;
}

Model gpt3(const std::string& name, std::uint32_t layers, std::uint32_t hidden, std::uint32_t heads) {
  Model m =
      transformer_model(name, gpt3_shape(layers, hidden, heads),
                        "GPT-3 family (Brown et al. 2020): " + std::to_string(layers) + " layers, hidden " +
                            std::to_string(hidden) + ", " + std::to_string(heads) + " heads, seq 2048");
  m.default_batch_per_gpu = 1;
  return m;
}

Model mt_nlg_530b() {
  Model m =
      transformer_model("mt-nlg-530b", gpt3_shape(105, 20480, 128),
                        "530B class (Megatron-Turing NLG): 105 layers, hidden 20480, 128 heads, seq 2048");
  m.default_batch_per_gpu = 1;
  return m;
}

// The Llama block: grouped-query attention, SwiGLU, RMSNorm, rotary positions, no biases, untied
// input and output embeddings.
TransformerShape llama_shape(std::uint32_t layers, std::uint32_t hidden, std::uint32_t heads,
                             std::uint32_t kv_heads, std::uint32_t ffn_hidden, std::uint32_t seq_len,
                             std::uint32_t vocab) {
  TransformerShape t;
  t.layers = layers;
  t.hidden = hidden;
  t.heads = heads;
  t.kv_heads = kv_heads;
  t.ffn_hidden = ffn_hidden;
  t.seq_len = seq_len;
  t.vocab = vocab;
  t.gated_mlp = true;
  t.norm = NormKind::RMSNorm;
  t.position = PositionKind::Rotary;
  t.tied_embeddings = false;
  t.biases = false;
  return t;
}

Model llama_70b() {
  // Llama 2 (Touvron et al. 2023) uses RMSNorm and rotary embeddings like Llama 3.
  Model m = transformer_model("llama-70b", llama_shape(80, 8192, 64, 8, 28672, 4096, 32000),
                              "Llama-2-70B class: 80 layers, hidden 8192, 64 heads (8 KV), SwiGLU 28672, "
                              "RMSNorm, RoPE, seq 4096");
  m.default_batch_per_gpu = 1;
  return m;
}

// Llama 3 (Dubey et al. 2024, arXiv:2407.21783, Table 3): vocabulary 128,256, 8 KV heads,
// pre-trained at sequence 8192.
Model llama3(const std::string& name, const std::string& size, std::uint32_t layers, std::uint32_t hidden,
             std::uint32_t heads, std::uint32_t ffn_hidden) {
  Model m = transformer_model(
      name, llama_shape(layers, hidden, heads, 8, ffn_hidden, 8192, 128256),
      "Llama 3 " + size + " (Dubey et al. 2024, arXiv:2407.21783, Table 3): " + std::to_string(layers) +
          " layers, hidden " + std::to_string(hidden) + ", " + std::to_string(heads) +
          " heads (8 KV), SwiGLU " + std::to_string(ffn_hidden) + ", RMSNorm, RoPE, vocab 128256, seq 8192");
  m.default_batch_per_gpu = 1;
  return m;
}

// Mixtral (Jiang et al. 2024, "Mixtral of Experts", arXiv:2401.04088, Table 1; 8x22B from its
// released config.json: 56 layers, hidden 6144, 48 heads, 8 KV, expert FFN 16384, vocab 32768):
// the Mistral block (GQA, RMSNorm, RoPE, no biases, untied) with 8 SwiGLU experts, top-2, in every
// layer. Sequence 4096, as Megatron-Core's Mixtral training examples use.
Model mixtral(const std::string& name, const std::string& size, std::uint32_t layers, std::uint32_t hidden,
              std::uint32_t heads, std::uint32_t ffn_hidden, std::uint32_t vocab) {
  TransformerShape t = llama_shape(layers, hidden, heads, 8, ffn_hidden, 4096, vocab);
  t.moe = MoeShape{.experts = 8, .top_k = 2, .expert_ffn_hidden = ffn_hidden};
  Model m = transformer_model(name, t,
                              "Mixtral " + size +
                                  " (Jiang et al. 2024, arXiv:2401.04088): " + std::to_string(layers) +
                                  " layers, hidden " + std::to_string(hidden) + ", " + std::to_string(heads) +
                                  " heads (8 KV), 8 SwiGLU experts of " + std::to_string(ffn_hidden) +
                                  " top-2, RMSNorm, RoPE, vocab " + std::to_string(vocab) + ", seq 4096");
  m.default_batch_per_gpu = 1;
  return m;
}

// Qwen3 MoE (Qwen team 2025, "Qwen3 Technical Report", arXiv:2505.09388, Table 2; hidden, head
// width, expert width and vocabulary from the released config.json files): every layer MoE with
// 128 experts, 8 per token, no shared expert; 4 KV heads; heads of 128 whatever the hidden size;
// RMSNorm, RoPE, untied embeddings. The per-head QK RMSNorm is not costed (2 x 128 parameters).
Model qwen3_moe(const std::string& name, const std::string& size, std::uint32_t layers, std::uint32_t hidden,
                std::uint32_t heads, std::uint32_t expert_ffn) {
  TransformerShape t = llama_shape(layers, hidden, heads, 4, expert_ffn, 4096, 151936);
  t.head_dim = 128;
  t.moe = MoeShape{.experts = 128, .top_k = 8, .expert_ffn_hidden = expert_ffn};
  Model m =
      transformer_model(name, t,
                        "Qwen3 " + size + " (arXiv:2505.09388): " + std::to_string(layers) +
                            " layers, hidden " + std::to_string(hidden) + ", " + std::to_string(heads) +
                            " heads of 128 (4 KV), 128 SwiGLU experts of " + std::to_string(expert_ffn) +
                            " top-8, RMSNorm, RoPE, vocab 151936, seq 4096");
  m.default_batch_per_gpu = 1;
  return m;
}

// Mistral 7B (Jiang et al. 2023, arXiv:2310.06825, Table 1): the Llama block (32 layers, hidden
// 4096, 32 heads of 128 with 8 KV heads, SwiGLU 14336, RMSNorm, RoPE, untied, vocabulary 32,000)
// with a 4,096-token sliding window on every block and a context of 8,192 tokens.
Model mistral_7b() {
  TransformerShape t = llama_shape(32, 4096, 32, 8, 14336, 8192, 32000);
  t.sliding_window = 4096;
  Model m = transformer_model(
      "mistral-7b", t,
      "Mistral 7B (arXiv:2310.06825): 32 layers, hidden 4096, 32 heads (8 KV), SwiGLU "
      "14336, 4096-token sliding window on every block, RMSNorm, RoPE, vocab 32000, seq 8192");
  m.default_batch_per_gpu = 1;
  return m;
}

// GPT-OSS (OpenAI 2025, "gpt-oss-120b & gpt-oss-20b Model Card", arXiv:2508.10925, Sec. 2.1 and
// Table 1; widths from the released config.json files): residual width 2880, 64 query heads of 64
// (8 KV heads), attention alternating between a 128-token banded window (blocks 0, 2, ...) and the
// whole sequence, `experts` SwiGLU experts of 2880, 4 per token, no shared expert; RMSNorm, RoPE,
// untied embeddings, vocabulary 201,088 (o200k_harmony); biases in the attention projections.
// Not costed: the experts' and the router's biases (0.03 % of the weights) and the per-head
// attention sinks (64 scalars a block). Sequence 4096, as Megatron-Bridge pre-trains it.
Model gpt_oss(const std::string& name, const std::string& size, std::uint32_t layers, std::uint32_t experts) {
  TransformerShape t = llama_shape(layers, 2880, 64, 8, 2880, 4096, 201088);
  t.head_dim = 64;
  t.biases = true;
  t.sliding_window = 128;
  t.full_attention_every = 2;
  t.moe = MoeShape{.experts = experts, .top_k = 4, .expert_ffn_hidden = 2880};
  Model m = transformer_model(name, t,
                              "GPT-OSS " + size + " (arXiv:2508.10925): " + std::to_string(layers) +
                                  " layers, hidden 2880, 64 heads of 64 (8 KV), attention alternating "
                                  "128-token window / full, " +
                                  std::to_string(experts) +
                                  " SwiGLU experts of 2880 top-4, RMSNorm, RoPE, vocab 201088, seq 4096");
  m.default_batch_per_gpu = 1;
  return m;
}

// DeepSeek-V3 (DeepSeek-AI 2024, arXiv:2412.19437, Sec. 4.2 "Hyper-Parameters"): 61 layers, hidden
// 7168, 128 heads of multi-head latent attention (query latent 1536, key/value latent 512, 128
// no-rope + 64 rope query/key dimensions, 128 value dimensions); the first 3 layers dense (FFN
// 18432, from the released config.json), the others 1 shared + 256 routed experts of 2048, 8 per
// token; vocabulary 129,280 (Sec. 4.1), sequence 4096; one multi-token prediction module.
Model deepseek_v3() {
  TransformerShape t = llama_shape(61, 7168, 128, 128, 18432, 4096, 129280);
  t.mla = MlaShape{.q_lora_rank = 1536,
                   .kv_lora_rank = 512,
                   .qk_nope_head_dim = 128,
                   .qk_rope_head_dim = 64,
                   .v_head_dim = 128};
  // Node-limited routing (Sec. 2.1.2): each token's 8 experts within 4 of 8 groups of 32 (config.json:
  // n_group 8, topk_group 4).
  t.moe = MoeShape{.experts = 256,
                   .top_k = 8,
                   .expert_ffn_hidden = 2048,
                   .shared_experts = 1,
                   .dense_layers = 3,
                   .router_groups = 8,
                   .router_group_topk = 4};
  t.mtp_layers = 1;
  Model m = transformer_model("deepseek-v3", t,
                              "DeepSeek-V3 (arXiv:2412.19437): 61 layers (3 dense), hidden 7168, 128 heads "
                              "of MLA, 1 shared + 256 routed experts of 2048 top-8, vocab 129280, seq 4096, "
                              "1 MTP module");
  m.default_batch_per_gpu = 1;
  return m;
}

Model bert(const std::string& name, std::uint32_t layers, std::uint32_t hidden, std::uint32_t heads,
           std::uint32_t seq, const std::string& what) {
  TransformerShape t;
  t.layers = layers;
  t.hidden = hidden;
  t.heads = heads;
  t.seq_len = seq;
  t.vocab = 30522;
  t.max_positions = 512;
  t.token_types = 2;
  t.pooler = true;
  Model m = transformer_model(name, t, what);
  m.default_batch_per_gpu = 16;
  return m;
}

Model resnet50() {
  Model m;
  m.name = "resnet50";
  m.description = "ResNet-50 (He et al. 2016; torchvision v1.5: stride on the 3x3), 224x224 images";
  m.family = ModelFamily::Vision;
  m.sample_unit = "image";
  m.default_batch_per_gpu = 128;
  m.layers.push_back(conv_layer("conv1", 3, 64, 7, 112, 112, true, 224, 224));
  double hw = 56;  // after the 3x3/2 max pool
  double in = 64;
  const int blocks[4] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage) {
    const double width = 64 << stage;
    for (int b = 0; b < blocks[stage]; ++b) {
      const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(b) + ".";
      const double hw_out = (b == 0 && stage > 0) ? hw / 2 : hw;
      m.layers.push_back(conv_layer(p + "conv1", in, width, 1, hw, hw, true, hw, hw));
      m.layers.push_back(conv_layer(p + "conv2", width, width, 3, hw_out, hw_out, true, hw, hw));
      m.layers.push_back(conv_layer(p + "conv3", width, 4 * width, 1, hw_out, hw_out, true, hw_out, hw_out));
      if (b == 0)
        m.layers.push_back(conv_layer(p + "downsample", in, 4 * width, 1, hw_out, hw_out, true, hw, hw));
      in = 4 * width;
      hw = hw_out;
    }
  }
  m.layers.push_back(dense_layer("fc", 2048, 1000));
  return m;
}

Model vgg(const std::string& name, const std::vector<int>& cfg) {
  Model m;
  m.name = name;
  m.description = name + " (Simonyan & Zisserman 2015), 224x224 images, no batch norm";
  m.family = ModelFamily::Vision;
  m.sample_unit = "image";
  m.default_batch_per_gpu = 64;
  double hw = 224, in = 3;
  int index = 0;
  for (int c : cfg) {
    if (c == 0) {  // 2x2 max pool
      hw /= 2;
      continue;
    }
    m.layers.push_back(conv_layer("conv" + std::to_string(++index), in, c, 3, hw, hw, false, hw, hw));
    in = c;
  }
  m.layers.push_back(dense_layer("fc6", 512 * 7 * 7, 4096));
  m.layers.push_back(dense_layer("fc7", 4096, 4096));
  m.layers.push_back(dense_layer("fc8", 4096, 1000));
  return m;
}

// `n` hidden layers of `width` from `in`, named prefix0..; returns the last width.
double add_mlp(Model& m, const std::string& prefix, double in, int n, double width) {
  for (int i = 0; i < n; ++i) {
    m.layers.push_back(dense_layer(prefix + std::to_string(i), in, width));
    in = width;
  }
  return in;
}

Layer embedding_bag_layer(const Model& m) {
  Layer l;
  l.name = "embeddings";
  l.kind = LayerKind::EmbeddingBag;
  l.params_sharded = m.table_parameters();
  for (const auto& t : m.tables) {
    l.forward_flops += t.lookups_per_sample * t.dim;  // pooling adds
    l.output_elements += t.exchanged_elements_per_sample();
  }
  l.backward_flops = l.forward_flops;
  return l;
}

Model dlrm() {
  Model m;
  m.name = "dlrm";
  m.description =
      "DLRM as in TopoOpt: 64 tables x 10M rows, dim 128, bag 100 (sum-pooled); bottom MLP 8x2048 (+ "
      "projection "
      "to 128) from 13 dense features; dot interaction; top MLP 16x4096 (+ 1 output)";
  m.family = ModelFamily::Recommendation;
  m.default_batch_per_gpu = 128;
  for (int i = 0; i < 64; ++i) m.tables.push_back({"table" + std::to_string(i), 10e6, 128, 100, true});
  m.layers.push_back(embedding_bag_layer(m));
  double w = add_mlp(m, "bottom", 13, 8, 2048);
  m.layers.push_back(dense_layer("bottom_proj", w, 128));
  const double vectors = 65, pairs = vectors * (vectors - 1) / 2;
  Layer inter;
  inter.name = "interaction";
  inter.kind = LayerKind::Interaction;
  inter.forward_flops = 2 * pairs * 128;
  inter.backward_flops = 2 * inter.forward_flops;
  inter.input_elements = vectors * 128;
  inter.output_elements = pairs + 128;
  inter.act_replicated = vectors * 128;
  m.layers.push_back(inter);
  w = add_mlp(m, "top", pairs + 128, 16, 4096);
  m.layers.push_back(dense_layer("output", w, 1));
  return m;
}

Model ncf() {
  Model m;
  m.name = "ncf";
  m.description =
      "NCF as in TopoOpt: 32 tables of 1M users + 1M items, dim 128, one user and one item lookup each "
      "(concatenated); top MLP 8x4096 (+ 1 output)";
  m.family = ModelFamily::Recommendation;
  m.default_batch_per_gpu = 128;
  for (int i = 0; i < 32; ++i) m.tables.push_back({"table" + std::to_string(i), 2e6, 128, 2, false});
  m.layers.push_back(embedding_bag_layer(m));
  Layer inter;
  inter.name = "concat";
  inter.kind = LayerKind::Interaction;
  inter.input_elements = inter.output_elements = 32 * 2 * 128;
  m.layers.push_back(inter);
  const double w = add_mlp(m, "top", 32 * 2 * 128, 8, 4096);
  m.layers.push_back(dense_layer("output", w, 1));
  return m;
}

Model candle_uno() {
  Model m;
  m.name = "candle-uno";
  m.description =
      "CANDLE-Uno as in TopoOpt: 16 dense layers of 16384 (feature tower, 16384 inputs), 8 of 16384 "
      "(combined tower), 1 output";
  m.family = ModelFamily::Mlp;
  m.default_batch_per_gpu = 256;
  double w = add_mlp(m, "feature", 16384, 16, 16384);
  w = add_mlp(m, "combined", w, 8, 16384);
  m.layers.push_back(dense_layer("output", w, 1));
  return m;
}

const std::map<std::string, std::function<Model()>>& registry() {
  static const std::map<std::string, std::function<Model()>> r = {
      {"gpt3-125m", [] { return gpt3("gpt3-125m", 12, 768, 12); }},
      {"gpt3-350m", [] { return gpt3("gpt3-350m", 24, 1024, 16); }},
      {"gpt3-760m", [] { return gpt3("gpt3-760m", 24, 1536, 16); }},
      // The paper lists 24 heads of 128 for 2048 hidden, which does not divide; 16 x 128 does.
      {"gpt3-1.3b", [] { return gpt3("gpt3-1.3b", 24, 2048, 16); }},
      {"gpt3-2.7b", [] { return gpt3("gpt3-2.7b", 32, 2560, 32); }},
      {"gpt3-6.7b", [] { return gpt3("gpt3-6.7b", 32, 4096, 32); }},
      {"gpt3-13b", [] { return gpt3("gpt3-13b", 40, 5120, 40); }},
      {"gpt3-175b", [] { return gpt3("gpt3-175b", 96, 12288, 96); }},
      {"mt-nlg-530b", mt_nlg_530b},
      {"llama-70b", llama_70b},
      {"llama3-8b", [] { return llama3("llama3-8b", "8B", 32, 4096, 32, 14336); }},
      {"llama3-70b", [] { return llama3("llama3-70b", "70B", 80, 8192, 64, 28672); }},
      {"llama3-405b", [] { return llama3("llama3-405b", "405B", 126, 16384, 128, 53248); }},
      {"mixtral-8x7b", [] { return mixtral("mixtral-8x7b", "8x7B", 32, 4096, 32, 14336, 32000); }},
      {"mixtral-8x22b", [] { return mixtral("mixtral-8x22b", "8x22B", 56, 6144, 48, 16384, 32768); }},
      {"deepseek-v3", deepseek_v3},
      {"qwen3-30b-a3b", [] { return qwen3_moe("qwen3-30b-a3b", "30B-A3B", 48, 2048, 32, 768); }},
      {"qwen3-235b-a22b", [] { return qwen3_moe("qwen3-235b-a22b", "235B-A22B", 94, 4096, 64, 1536); }},
      {"mistral-7b", mistral_7b},
      {"gpt-oss-20b", [] { return gpt_oss("gpt-oss-20b", "20B", 24, 32); }},
      {"gpt-oss-120b", [] { return gpt_oss("gpt-oss-120b", "120B", 36, 128); }},
      {"bert-base",
       [] { return bert("bert-base", 12, 768, 12, 512, "BERT-base (Devlin et al. 2019), seq 512"); }},
      {"bert-large",
       [] { return bert("bert-large", 24, 1024, 16, 512, "BERT-large (Devlin et al. 2019), seq 512"); }},
      {"bert-topoopt",
       [] {
         return bert("bert-topoopt", 12, 1024, 16, 64,
                     "BERT as in TopoOpt: 12 layers, hidden 1024, 16 heads, seq 64");
       }},
      {"resnet50", resnet50},
      {"vgg16",
       [] {
         return vgg("vgg16", {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0});
       }},
      {"vgg19",
       [] {
         return vgg("vgg19", {64,  64,  0,   128, 128, 0,   256, 256, 256, 256, 0,
                              512, 512, 512, 512, 0,   512, 512, 512, 512, 0});
       }},
      {"dlrm", dlrm},
      {"ncf", ncf},
      {"candle-uno", candle_uno},
  };
  return r;
}

}  // namespace

std::vector<std::string> builtin_model_names() {
  std::vector<std::string> names;
  for (const auto& [name, make] : registry()) names.push_back(name);
  return names;
}

bool is_builtin_model(const std::string& name) {
  return registry().count(name) > 0;
}

Model builtin_model(const std::string& name) {
  const auto it = registry().find(name);
  if (it == registry().end())
    throw BadInput("unknown model '" + name + "' (toposweep models lists the built-ins)", "model " + name);
  return it->second();
}

}  // namespace toposweep
