// Builders for transformer, dense and convolution layers. FLOPs count a multiply-add as 2;
// backward is twice forward (input and weight gradients). Activation estimates follow
// Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models" (2022),
// in elements (their bytes assume 2-byte elements).
#include <algorithm>
#include <utility>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/block.hpp"
#include "toposweep/workload/model_library.hpp"

namespace toposweep {
namespace {

// A block's Layer: the sums of its operator table (block.hpp).
// `moe`: its MLP is the shape's routed experts (of which a token uses top_k).
Layer transformer_block(const TransformerShape& t, bool moe = false, bool windowed = false) {
  const double s = t.seq_len, h = t.hidden;
  const BlockTotals sum = block_totals(describe_block(t, moe, windowed));
  Layer l;
  l.kind = LayerKind::TransformerBlock;
  l.moe = moe;
  l.windowed = windowed;
  l.params_sharded = sum.params_sharded;
  l.params_replicated = sum.params_replicated;
  l.params_expert = sum.params_expert;
  if (moe) l.params_expert_active = sum.params_expert / t.moe->experts * t.moe->top_k;
  l.forward_flops = sum.forward_flops;
  l.backward_flops = 2 * l.forward_flops;
  l.act_replicated = sum.kept_replicated;
  l.act_sharded = sum.kept_sharded;
  l.act_scores = sum.kept_scores;
  l.act_gemm_replicated = sum.kept_gemm_replicated;
  l.act_gemm_sharded = sum.kept_gemm_sharded;
  l.act_expert_replicated = sum.kept_expert_replicated;
  l.act_expert_sharded = sum.kept_expert_sharded;
  l.input_elements = s * h;
  l.output_elements = s * h;
  return l;
}

// A multi-token prediction module (DeepSeek-V3, arXiv:2412.19437, Sec. 2.2): the previous depth's
// hidden state and the next token's embedding, each RMS-normalised, concatenated and projected
// 2h -> h, then one block; the embedding and the output head are the model's own (shared, so
// their parameters are not counted again, but the head's logits are computed once more: 2 s h V
// forward FLOPs). On the last pipeline stage, after the last block.
Layer mtp_layer(const TransformerShape& t, std::uint32_t depth, const Layer& block) {
  const double s = t.seq_len, h = t.hidden;
  Layer l = block;
  l.name = "mtp" + std::to_string(depth);
  l.params_sharded += 2 * h * h;                  // the projection
  l.params_replicated += 2 * norm_parameters(t);  // the two norms
  const double projection = 2 * s * 2 * h * h, logits = 2 * s * h * t.vocab;
  l.forward_flops += projection + logits;
  l.backward_flops = 2 * l.forward_flops;
  l.act_replicated += 2 * s * h + 2 * s * h;  // the two norms' inputs, the projection's input
  return l;
}

}  // namespace

Model transformer_model(std::string name, const TransformerShape& shape, std::string description) {
  TransformerShape t = shape;
  if (t.kv_heads == 0) t.kv_heads = t.heads;
  if (t.ffn_hidden == 0) t.ffn_hidden = 4 * t.hidden;

  Model m;
  m.name = std::move(name);
  m.description = std::move(description);
  m.family = ModelFamily::Transformer;
  m.sample_unit = "sequence";
  m.transformer = t;

  m.layers.push_back(embedding_layer(t));
  const Layer block = transformer_block(t);
  // Mixture of Experts: the blocks after the first moe->dense_layers.
  const std::uint32_t dense = t.moe ? std::min(t.moe->dense_layers, t.layers) : t.layers;
  const Layer moe_block = t.moe ? transformer_block(t, true) : block;
  // Sliding-window attention (block_window.cpp): the windowed blocks' variants.
  const Layer windowed = t.sliding_window > 0 ? transformer_block(t, false, true) : block;
  const Layer windowed_moe = t.sliding_window > 0 && t.moe ? transformer_block(t, true, true) : windowed;
  for (std::uint32_t i = 0; i < t.layers; ++i) {
    if (windowed_block(t, i))
      m.layers.push_back(i < dense ? windowed : windowed_moe);
    else
      m.layers.push_back(i < dense ? block : moe_block);
    m.layers.back().name = "block" + std::to_string(i);
  }
  for (std::uint32_t i = 0; i < t.mtp_layers; ++i)
    m.layers.push_back(mtp_layer(t, i, t.moe ? moe_block : block));
  m.layers.push_back(head_layer(t));
  return m;
}

namespace {

// `m` rebuilt from the edited shape `t`; name, description and batch as they were.
Model rebuilt(const Model& m, const TransformerShape& t) {
  Model out = transformer_model(m.name, t, m.description);
  out.family = m.family;
  out.sample_unit = m.sample_unit;
  out.default_batch_per_gpu = m.default_batch_per_gpu;
  return out;
}

}  // namespace

Model with_seq_len(const Model& m, std::uint32_t seq_len, const std::string& where) {
  if (!m.transformer)
    throw BadInput("model " + m.name + " is not a transformer: it has no sequence length to set", where);
  TransformerShape t = *m.transformer;
  if (t.max_positions > 0 && seq_len > t.max_positions)
    throw BadInput("sequence length " + std::to_string(seq_len) + " exceeds the " +
                       std::to_string(t.max_positions) + " learned positions of " + m.name,
                   where);
  t.seq_len = seq_len;
  return rebuilt(m, t);
}

Model with_softmax(const Model& m, SoftmaxKind kind, const std::string& where) {
  if (!m.transformer) throw BadInput("model " + m.name + " is not a transformer: it has no attention", where);
  TransformerShape t = *m.transformer;
  t.softmax = kind;
  return rebuilt(m, t);
}

Model with_cross_entropy(const Model& m, CrossEntropyKind kind, const std::string& where) {
  if (!m.transformer)
    throw BadInput("model " + m.name + " is not a transformer: it has no cross entropy over logits", where);
  TransformerShape t = *m.transformer;
  t.cross_entropy = kind;
  return rebuilt(m, t);
}

Layer dense_layer(std::string name, double in, double out, double tokens) {
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::Dense;
  l.params_sharded = in * out;
  l.params_replicated = out;
  l.forward_flops = 2 * tokens * in * out;
  l.backward_flops = 2 * l.forward_flops;
  l.input_elements = tokens * in;
  l.output_elements = tokens * out;
  l.act_replicated = tokens * in;  // the input, needed for the weight gradient
  // dW = sum over samples and tokens of x^T delta: the inputs and the output gradients rebuild it.
  l.sfb_elements = l.input_elements + l.output_elements;
  return l;
}

Layer conv_layer(std::string name, double in_ch, double out_ch, double kernel, double h_out, double w_out,
                 bool batch_norm, double h_in, double w_in) {
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::Conv;
  l.params_sharded = kernel * kernel * in_ch * out_ch;
  l.params_replicated = batch_norm ? 2 * out_ch : out_ch;
  l.forward_flops = 2 * kernel * kernel * in_ch * out_ch * h_out * w_out;
  l.backward_flops = 2 * l.forward_flops;
  l.input_elements = in_ch * h_in * w_in;
  l.output_elements = out_ch * h_out * w_out;
  // Conv input, plus the normalisation input when there is one.
  l.act_replicated = l.input_elements + (batch_norm ? l.output_elements : 0);
  // dW = im2col(x)^T delta: the input map and the output gradient map rebuild it (TAG's SFB for conv).
  l.sfb_elements = l.input_elements + l.output_elements;
  return l;
}

}  // namespace toposweep
