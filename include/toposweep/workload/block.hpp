#pragma once
// A transformer block as data: one record per operator (its kind, shape, the axis parallelism
// splits it over, what it keeps for the backward pass and when recomputation drops that, its
// parameters). FLOPs, parameters, activations and per-operator times are all read from this one
// table (docs/models.md, "The block table"); the embedding and the head around the blocks are
// described in block_embedding.cpp.
#include <cstdint>
#include <string_view>
#include <vector>

#include "toposweep/workload/model.hpp"
#include "toposweep/workload/recompute_modules.hpp"

namespace toposweep {

enum class OpKind : std::uint8_t {
  Gemm,           // a weight matmul
  AttentionCore,  // a batched matmul over heads without weights (QK^T, scores x V)
  MemoryBound,    // elementwise or reduction kernel: time is its HBM traffic
  Collective      // a tensor-parallel collective at a GEMM's boundary
};
// The axis an operator's work is split over. Tensor: the TP ranks each take a slice of the
// heads / FFN columns; Sequence: with sequence parallelism the TP ranks each take s / tp tokens,
// else every rank does all of it. Expert: the routed experts' GEMMs, activation and the TP
// collectives around them, split like Tensor over the expert tensor-parallel ranks (etp, which is
// tp unless strategy.etp folds the experts).
enum class ParallelAxis : std::uint8_t { None, Tensor, Sequence, Expert };
// When the bytes an operator keeps for the backward pass are dropped (and rebuilt).
enum class RecomputeClass : std::uint8_t {
  KeptAlways,             // kept unless the whole block is recomputed (full recomputation)
  DroppedUnderSelective,  // s x s attention tensors: selective recomputation rebuilds them
  DroppedUnderFull        // only full recomputation drops them (same as KeptAlways for a block)
};
// What the operator is, for the per-operator cost model's kernel accounting.
enum class OpRole : std::uint8_t {
  Norm,              // layer norm / RMS norm
  Projection,        // QKV, attention output, FFN in, FFN out
  Scores,            // QK^T
  Context,           // scores x V
  Softmax,           // scale-mask-softmax
  ScoreDropout,      // dropout on the attention probabilities
  ContextPermute,    // heads back to tokens
  Residual,          // bias + dropout + residual add
  Activation,        // bias + GeLU, or SwiGLU
  Rotary,            // rotary position embedding applied to Q and K
  TpEnter,           // Megatron's f: identity forward (all-gather with SP)
  TpExit,            // Megatron's g: all-reduce forward (reduce-scatter with SP)
  Router,            // MoE: the router's hidden x experts GEMM (replicated over TP)
  Permute,           // MoE: each token copied top_k times, grouped by expert (before dispatch)
  ExpertGemm,        // MoE: a grouped GEMM over the routed experts
  ExpertActivation,  // MoE: the routed experts' GeLU / SwiGLU
  Unpermute          // MoE: the top_k expert outputs weighted by their probabilities and summed
};

// HBM bytes per element of a memory-bound kernel: `per_elem` times the activation element size
// plus `fixed` (a 1-byte dropout mask, say).
struct Traffic {
  double per_elem = 0, fixed = 0;
  double bytes(double elem) const { return per_elem * elem + fixed; }
  bool operator==(const Traffic&) const = default;
};

struct BlockOp {
  std::string_view name;
  OpKind kind = OpKind::MemoryBound;
  OpRole role = OpRole::Norm;
  // Per sample (one sequence), before any split. GEMM / attention core: `batch` products of
  // (M x K) x (K x N). Memory-bound and collective: `batch` x M rows of N elements.
  double M = 0, N = 0, K = 0, batch = 1;
  ParallelAxis axis = ParallelAxis::None;
  bool column = false;  // a tensor-split GEMM splits its N (column-parallel), else its K (row)
  // Memory-bound: the forward kernel's traffic and the backward's (one or two kernels).
  Traffic forward{}, backward{}, backward2{};
  // Attention core: how many GEMMs of this shape its backward runs.
  double backward_gemms = 0;
  // Attention core under a sliding window (apply_window): the keys each query attends to, itself
  // included; 0: causal over the whole sequence. Its FLOPs are the window's share of the causal
  // work (attended_share).
  double window = 0;
  // Elements per sample kept for the backward pass: on every TP rank, or split over them
  // (with sequence parallelism the replicated ones are split too).
  double kept_replicated = 0, kept_sharded = 0;
  RecomputeClass recompute = RecomputeClass::DroppedUnderFull;
  // Selective recomputation by module (recompute_modules.hpp): the module whose recomputation
  // runs this operator's forward again in the backward pass, and the module whose recomputation
  // drops what this operator keeps (a GEMM keeps its input: the output of the operator before it,
  // so a norm's output is dropped by `layernorm` on the GEMM that reads it). None: no module.
  // The attention core's tags (core_attn) document it; its recomputation is RecomputeClass's.
  RecomputeModules module = RecomputeModules::None;
  RecomputeModules kept_module = RecomputeModules::None;
  // GEMM: its input is a norm's output computed inside the GEMM's Transformer Engine module
  // (Megatron-Core's TELayerNormColumnParallelLinear: a dense block's QKV and FFN in, MLA's up
  // projections with their latent norms), so the norm kernel takes the amax current scaling needs
  // (fp8_quantize_bytes' `amax_known`).
  bool norm_fused_input = false;
  double params_sharded = 0, params_replicated = 0;  // as in Layer
  double params_expert = 0;                          // the routed experts' weights (Layer::params_expert)

  double flops() const;
};

// The share of a causal attention's query-key pairs over `seq` tokens that a sliding window of
// `window` keys (itself included) computes: sum over queries i = 1..seq of min(i, window), over
// seq (seq + 1) / 2. Exactly 1 when window is 0 or at least seq (block_window.cpp).
double attended_share(double seq, double window);

// The block's operators in forward (execution) order. Zero kv_heads / ffn_hidden mean heads and
// 4 x hidden, as in transformer_model. `moe`: the MLP is the shape's routed experts
// (describe_moe; shape.moe must be set), else the dense MLP. Attention is multi-head latent
// attention when shape.mla is set (describe_mla).
// `windowed`: the attention core is the shape's sliding window (apply_window).
std::vector<BlockOp> describe_block(const TransformerShape& shape, bool moe = false, bool windowed = false);
// The table of the block `l` stands for (its variant flags: Layer::moe, Layer::windowed), so that a
// caller holding a Layer names no variant itself.
std::vector<BlockOp> describe_block(const TransformerShape& shape, const Layer& l);

// The parts describe_block joins, one file each (block_norm.cpp, block_attention.cpp,
// block_mlp.cpp): each appends its operators.
void describe_norm(const TransformerShape& t, std::vector<BlockOp>& ops);
void describe_attention(const TransformerShape& t, std::vector<BlockOp>& ops);
void describe_mlp(const TransformerShape& t, std::vector<BlockOp>& ops);
// The MoE layer in place of the MLP (block_moe.cpp) and multi-head latent attention in place of
// attention (block_mla.cpp).
void describe_moe(const TransformerShape& t, std::vector<BlockOp>& ops);
void describe_mla(const TransformerShape& t, std::vector<BlockOp>& ops);
// The kernels from the scores to the dropout's output (block_softmax.cpp): `heads` s x s score
// matrices through t.softmax's kernels, then dropout. Shared by describe_attention and
// describe_mla.
void describe_score_softmax(const TransformerShape& t, double heads, std::vector<BlockOp>& ops);
// Rotary position embeddings on Q and K (block_rope.cpp), appended by describe_attention right
// after the QKV projection; nothing for learned positions.
void describe_rope(const TransformerShape& t, std::vector<BlockOp>& ops);
// Sliding-window attention (block_window.cpp): marks the attention core's operators with the
// shape's window; nothing when the shape has none. windowed_block: whether block `index` (0-based)
// of `t` has the window (TransformerShape::full_attention_every).
void apply_window(const TransformerShape& t, std::vector<BlockOp>& ops);
bool windowed_block(const TransformerShape& t, std::uint32_t index);
// Parameters of one of the model's norms (block_norm.cpp): RMSNorm a scale (h), LayerNorm a scale
// and, with biases, a shift (2 h).
double norm_parameters(const TransformerShape& t);
// The ends the two sublayers share (block_sublayer.cpp): the TP collective into the
// column-parallel region, and the one out of the row-parallel region with its bias + dropout +
// residual add.
void describe_sublayer_enter(std::string_view name, const TransformerShape& t, std::vector<BlockOp>& ops);
void describe_sublayer_exit(std::string_view exit_name, std::string_view residual_name,
                            const TransformerShape& t, std::vector<BlockOp>& ops);

// The keys and values of one sequence (2 s x kv_heads x head_dim elements, before any split):
// what ring attention passes around a CP group (block_attention.cpp).
double kv_elements(const TransformerShape& t);

// Per-sample sums over a block's table, what a Layer carries.
struct BlockTotals {
  double forward_flops = 0, params_sharded = 0, params_replicated = 0, params_expert = 0;
  double kept_replicated = 0, kept_sharded = 0;
  double kept_scores = 0;  // the part of kept_sharded dropped under selective recomputation
  // The parts of kept_replicated / kept_sharded the weight GEMMs (OpKind::Gemm) keep: their inputs.
  double kept_gemm_replicated = 0, kept_gemm_sharded = 0;
  // The parts the routed experts keep (their GEMMs and activation): rows of the tokens routed to them.
  double kept_expert_replicated = 0, kept_expert_sharded = 0;
};
BlockTotals block_totals(const std::vector<BlockOp>& ops);

// block_embedding.cpp: the embedding and the head around the blocks.
Layer embedding_layer(const TransformerShape& t);
Layer head_layer(const TransformerShape& t);
// How a block's activations are split over its TP group: the tensor-parallel region (attention,
// MLP) over `tp` ranks, the sequence region (norms, dropouts, residuals; the embedding's output and
// the head's input) over `sequence` ranks: tp with sequence parallelism (with tp > 1), else 1.
// activation_split (split.hpp) builds it from a strategy; the memory and the per-operator costs
// read it.
// Context parallelism splits every token tensor (and each attention's queries) over `cp` ranks on
// top of that.
struct ActivationSplit {
  std::uint32_t tp = 1;
  std::uint32_t sequence = 1;
  std::uint32_t cp = 1;
  std::uint32_t ep = 1;  // expert parallelism: each rank holds experts / ep of a MoE layer's experts
  // Expert tensor parallelism (strategy.etp): the routed experts split over etp ranks; 0: tp.
  std::uint32_t etp = 0;
  bool sequence_split() const { return sequence > 1; }
  std::uint32_t expert_tp() const { return etp != 0 ? etp : tp; }
  bool operator==(const ActivationSplit&) const = default;
};

// Elements one rank sends in a MoE layer's dispatch All-to-All per sample (block_moe.cpp): each
// of its tokens (s / cp, and / tp with sequence parallelism) once per routed expert, h each:
// top_k s h / (cp x sequence). The combine sends as many back.
double dispatch_elements(const TransformerShape& t, ActivationSplit split);

// Activation bytes per sample the embedding and the head keep for backward (whatever the
// recomputation mode), `elem` bytes per activation element.
double embedding_kept_bytes(const TransformerShape& t, ActivationSplit split);
double head_kept_bytes(const TransformerShape& t, double elem, ActivationSplit split);
// With tied embeddings the last pipeline stage keeps its own copy of the word embeddings
// (Megatron), used by the head: its parameters on one GPU (0 when untied or pp = 1).
double tied_embedding_copy(const Model& m, double tp, std::uint32_t pp);

// Tensor parallelism splits K and V by heads (Megatron): tp must divide kv_heads. True for
// models without a transformer shape.
bool tp_divides_kv_heads(const Model& m, std::uint32_t tp);
// The same as a strategy check: throws InvalidDesign naming strategy.tp.
void check_tp_against_kv_heads(const Model& m, std::uint32_t tp);

}  // namespace toposweep
