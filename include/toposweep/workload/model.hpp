#pragma once
// A DNN training workload at layer granularity: per layer its FLOPs, parameters and the
// activations it keeps for the backward pass, all per *sample* (one sequence for language
// models, one image for vision models, one query for recommendation models); plus the
// embedding tables of recommendation models. Sizes are in elements; the precision chosen at
// run time turns them into bytes.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace toposweep {

enum class LayerKind : std::uint8_t {
  Dense,             // fully connected
  Conv,              // convolution (+ its normalisation)
  Pool,              // pooling, no parameters
  TransformerBlock,  // attention + MLP + norms (Megatron-parallel as one unit)
  Embedding,         // token/position embedding of a language model (vocab-parallel under TP)
  Head,              // final norm + output projection of a language model
  EmbeddingBag,      // recommendation-model sparse tables (table-wise model parallel)
  Interaction,       // DLRM/NCF feature interaction (waits for the embedding exchange)
  Other
};
const char* layer_kind_name(LayerKind k);

struct Layer {
  std::string name;
  LayerKind kind = LayerKind::Other;
  double forward_flops = 0;   // per sample
  double backward_flops = 0;  // per sample (input + weight gradients)
  // Parameters split by how tensor parallelism treats them: sharded over TP ranks (matrix
  // weights) or replicated on each (norms, some biases). For non-transformer layers all
  // parameters count as sharded (model-parallel layers split them over their k devices).
  double params_sharded = 0;
  double params_replicated = 0;
  // Activation elements per sample kept for backward: `act_replicated + act_sharded / tp`.
  double act_replicated = 0;
  double act_sharded = 0;
  // Transformer blocks: the part of act_sharded in s x s attention tensors (softmax output and
  // dropout mask), which selective recomputation and fused attention do not keep.
  double act_scores = 0;
  // Transformer blocks: the parts of act_replicated / act_sharded that are the weight GEMMs'
  // inputs (QKV, attention output, FFN in, FFN out), which Transformer Engine keeps in fp8
  // (model.datatype = fp8: 1 byte instead of 2).
  double act_gemm_replicated = 0;
  double act_gemm_sharded = 0;
  double input_elements = 0;   // per sample; what full recomputation keeps instead
  double output_elements = 0;  // per sample; what a pipeline stage boundary sends
  // Sufficient factors (SFB): elements per sample that rebuild the weight gradient (a dense
  // layer's input and output gradient, tokens x (in + out); a conv layer's input map and output
  // gradient map). 0: the layer cannot send factors.
  double sfb_elements = 0;
  // Mixture-of-Experts blocks (TransformerShape::moe): the routed experts' weights, split over
  // the expert-parallel and tensor-parallel ranks, and the part of them one token uses (top_k of
  // the experts). Included in parameters(); 0 for every other layer.
  double params_expert = 0;
  double params_expert_active = 0;
  // The parts of act_replicated / act_sharded the routed experts keep (what model.moe_imbalance
  // scales on the busiest expert-parallel rank).
  double act_expert_replicated = 0, act_expert_sharded = 0;
  bool moe = false;  // a block whose MLP is the routed experts (its per-operator cost differs)
  // A block whose attention is a sliding window (TransformerShape::sliding_window): its fused
  // attention core does the window's share of the causal work (block_window.cpp).
  bool windowed = false;

  double parameters() const { return params_sharded + params_replicated + params_expert; }
  // What one token's forward pass uses: every weight but the routed experts it is not sent to.
  double active_parameters() const { return params_sharded + params_replicated + params_expert_active; }
};

// A table of a recommendation model, placed whole on one GPU (table-wise model parallelism).
struct EmbeddingTable {
  std::string name;
  double rows = 0;
  double dim = 0;
  double lookups_per_sample = 1;
  // Pooled (sum over the bag, done by the owner): each sample sends `dim` elements back;
  // not pooled: `lookups_per_sample * dim`.
  bool pooled = true;
  double parameters() const { return rows * dim; }
  double exchanged_elements_per_sample() const { return pooled ? dim : lookups_per_sample * dim; }
};

// The block's normalisation: LayerNorm (scale, and a shift when the model has biases) or
// RMSNorm (scale only, no mean subtraction; the same HBM traffic as a layer norm).
enum class NormKind : std::uint8_t { LayerNorm, RMSNorm };
// How positions enter: a learned table added to the token embedding (max_positions rows, none
// when 0), or rotary embeddings (RoPE) applied to Q and K in every block (no table).
enum class PositionKind : std::uint8_t { Learned, Rotary };
// The kernels between the attention scores and their dropout when attention is not fused
// (model.softmax; block_softmax.cpp): Megatron's fused scale-mask-softmax kernel, or the eager
// chain Megatron falls back to and stock PyTorch runs (scale, mask, to fp32, softmax, to bf16).
enum class SoftmaxKind : std::uint8_t { Fused, Eager };
// The cross entropy after the output layer (model.cross_entropy; cross_entropy.hpp): Megatron-Core's
// unfused vocab-parallel kernels (its default), its jit-fused version (cross_entropy_fusion_impl
// native) or Transformer Engine's Triton kernels (te).
enum class CrossEntropyKind : std::uint8_t { Unfused, Native, Te };

// Mixture of Experts (Shazeer et al. 2017; Mixtral, DeepSeek-V3): every block after the first
// `dense_layers` replaces its MLP by `experts` routed expert MLPs of width expert_ffn_hidden, each
// token sent to `top_k` of them by a router (hidden x experts), plus `shared_experts` expert
// MLPs every token uses. capacity_factor: each expert takes at most capacity_factor x its mean
// load of tokens (the rest dropped); 0: dropless (no cap).
struct MoeShape {
  std::uint32_t experts = 0, top_k = 0, expert_ffn_hidden = 0, shared_experts = 0, dense_layers = 0;
  double capacity_factor = 0;
  // Group-limited routing (DeepSeek-V3's node-limited routing, Megatron-Core's
  // moe_router_num_groups / moe_router_group_topk): the experts in router_groups equal groups of
  // consecutive experts, each token's top_k chosen within router_group_topk of them; 0: unlimited.
  std::uint32_t router_groups = 0, router_group_topk = 0;
  bool operator==(const MoeShape&) const = default;
};
// Multi-head latent attention (DeepSeek-V2/V3): queries and keys/values through low-rank latents
// (q_lora_rank, kv_lora_rank), per head qk_nope_head_dim + qk_rope_head_dim query/key dimensions
// (the rotary part of the key shared by all heads) and v_head_dim value dimensions.
struct MlaShape {
  std::uint32_t q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  bool operator==(const MlaShape&) const = default;
};

// Shape of a decoder/encoder transformer, kept so strategies can check tp against heads.
struct TransformerShape {
  std::uint32_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, ffn_hidden = 0;
  // Width of one attention head; 0: hidden / heads. Set where the heads' total width differs from
  // the hidden size (Qwen3: 64 heads of 128 over hidden 4096).
  std::uint32_t head_dim = 0;
  std::uint32_t seq_len = 0, vocab = 0;
  std::uint32_t max_positions = 0;  // learned position embeddings (0: none, e.g. rotary)
  std::uint32_t token_types = 0;    // BERT segment embeddings
  bool gated_mlp = false;           // SwiGLU: three FFN matrices instead of two
  bool tied_embeddings = true;      // output projection shares the token embedding
  bool biases = true;
  bool pooler = false;  // BERT pooler + MLM transform
  NormKind norm = NormKind::LayerNorm;
  PositionKind position = PositionKind::Learned;               // Rotary: max_positions is 0
  SoftmaxKind softmax = SoftmaxKind::Fused;                    // the score kernels of unfused attention
  CrossEntropyKind cross_entropy = CrossEntropyKind::Unfused;  // the loss's kernels
  std::optional<MoeShape> moe;                                 // Mixture of Experts (none: every block dense)
  std::optional<MlaShape> mla;  // multi-head latent attention instead of (GQA) attention
  // Multi-token prediction modules (DeepSeek-V3): each one more block (MoE when the model is),
  // after the last, with a 2h x h projection and two norms; on the last pipeline stage.
  std::uint32_t mtp_layers = 0;
  // Sliding-window attention (Mistral, Gemma, GPT-OSS): in a windowed block each query attends to
  // itself and the sliding_window - 1 tokens before it (0: no window, every block causal over the
  // whole sequence). full_attention_every = n > 0: blocks n - 1, 2n - 1, ... attend to the whole
  // sequence and the others are windowed (GPT-OSS: 2, alternating; Gemma 3: 6); 0: every block is
  // windowed (block_window.cpp).
  std::uint32_t sliding_window = 0;
  std::uint32_t full_attention_every = 0;
  bool operator==(const TransformerShape&) const = default;
};

// One attention head's width: head_dim, or hidden / heads when it is 0.
double head_width(const TransformerShape& t);

enum class ModelFamily : std::uint8_t { Transformer, Vision, Recommendation, Mlp };
const char* model_family_name(ModelFamily f);

struct Model {
  std::string name;
  std::string description;
  ModelFamily family = ModelFamily::Mlp;
  std::string sample_unit = "sample";  // "sequence", "image", "sample"
  std::uint32_t default_batch_per_gpu = 16;
  std::optional<TransformerShape> transformer;
  std::vector<Layer> layers;           // forward order
  std::vector<EmbeddingTable> tables;  // only with an EmbeddingBag layer

  double parameters() const;        // all layers and tables
  double dense_parameters() const;  // excluding EmbeddingBag tables
  double table_parameters() const;
  double active_parameters() const;  // what one token uses (Layer::active_parameters; no tables)
  double forward_flops_per_sample() const;
  double backward_flops_per_sample() const;
  bool has_tables() const { return !tables.empty(); }
  // Number of layers a pipeline may split between (transformer blocks for transformers).
  std::uint32_t pipeline_units() const;
};

}  // namespace toposweep
