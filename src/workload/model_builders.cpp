// Builders for transformer, dense and convolution layers. FLOPs count a multiply-add as 2;
// backward is twice forward (input and weight gradients). Activation estimates follow
// Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models" (2022),
// in elements (their bytes assume 2-byte elements).
#include <utility>

#include "toposweep/workload/model_library.hpp"

namespace toposweep {
namespace {

Layer transformer_block(std::uint32_t index, const TransformerShape& t) {
  const double s = t.seq_len, h = t.hidden, a = t.heads, f = t.ffn_hidden;
  const double kv_dim = h / a * t.kv_heads;
  const double ffn_mats = t.gated_mlp ? 3 : 2;
  const double weights = 2 * h * h + 2 * h * kv_dim + ffn_mats * h * f;
  Layer l;
  l.name = "block" + std::to_string(index);
  l.kind = LayerKind::TransformerBlock;
  // Column-parallel biases (QKV, first FFN) are sharded; row-parallel biases and norms are not.
  const double norm_params = t.biases ? 4 * h : 2 * h;
  l.params_sharded = weights + (t.biases ? h + 2 * kv_dim + f * (t.gated_mlp ? 2 : 1) : 0);
  l.params_replicated = norm_params + (t.biases ? 2 * h : 0);
  // Matmuls 2*s*weights, plus attention scores QK^T and their product with V: 2 * 2*s^2*h.
  l.forward_flops = 2 * s * weights + 4 * s * s * h;
  l.backward_flops = 2 * l.forward_flops;
  // Korthikanti: sbh(10 + 24/t + 5as/(ht)) bytes; the MLP's 16 of the 24 scale with f/(4h).
  l.act_replicated = 5 * s * h;
  l.act_sharded = 4 * s * h + (t.gated_mlp ? 3 : 2) * s * f + 2.5 * a * s * s;
  l.act_scores = 2.5 * a * s * s;
  l.input_elements = s * h;
  l.output_elements = s * h;
  l.tp_allreduces_forward = 2;
  l.tp_allreduces_backward = 2;
  return l;
}

}  // namespace

Model transformer_model(std::string name, const TransformerShape& shape, std::string description) {
  TransformerShape t = shape;
  if (t.kv_heads == 0) t.kv_heads = t.heads;
  if (t.ffn_hidden == 0) t.ffn_hidden = 4 * t.hidden;
  const double s = t.seq_len, h = t.hidden, v = t.vocab;

  Model m;
  m.name = std::move(name);
  m.description = std::move(description);
  m.family = ModelFamily::Transformer;
  m.sample_unit = "sequence";
  m.transformer = t;

  Layer emb;
  emb.name = "embedding";
  emb.kind = LayerKind::Embedding;
  emb.params_sharded = v * h;  // vocab-parallel
  emb.params_replicated = (t.max_positions + t.token_types) * h + (t.pooler ? 2 * h : 0);
  emb.output_elements = s * h;
  emb.act_replicated = 0;
  emb.tp_allreduces_forward = 1;  // vocab-parallel lookup sums partial embeddings
  m.layers.push_back(emb);

  for (std::uint32_t i = 0; i < t.layers; ++i) m.layers.push_back(transformer_block(i, t));

  Layer head;
  head.name = "head";
  head.kind = LayerKind::Head;
  head.params_replicated = t.biases ? 2 * h : h;  // final norm
  if (!t.tied_embeddings) head.params_sharded = v * h;
  if (t.pooler) {
    // BERT: pooler (h x h) and MLM transform (h x h + norm) plus the output bias.
    head.params_replicated += 2 * (h * h + h) + 2 * h + v;
    head.forward_flops += 2 * s * h * h + 2 * h * h;
  }
  head.forward_flops += 2 * s * h * v;
  head.backward_flops = 2 * head.forward_flops;
  head.input_elements = s * h;
  head.act_replicated = s * h;
  head.act_sharded = s * v;  // logits
  head.output_elements = 0;
  head.tp_allreduces_backward = 1;  // gradient of the replicated input to the vocab-parallel projection
  m.layers.push_back(head);
  return m;
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
