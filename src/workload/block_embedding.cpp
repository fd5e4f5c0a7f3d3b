// The layers around a transformer's blocks: the (vocab-parallel) embedding, the head (final
// norm, output projection, BERT's pooler and MLM transform), and the tied copy of the word
// embeddings the last pipeline stage keeps.
#include "toposweep/workload/block.hpp"
#include "toposweep/workload/cross_entropy.hpp"

namespace toposweep {

Layer embedding_layer(const TransformerShape& t) {
  const double s = t.seq_len, h = t.hidden, v = t.vocab;
  Layer emb;
  emb.name = "embedding";
  emb.kind = LayerKind::Embedding;
  emb.params_sharded = v * h;  // vocab-parallel
  emb.params_replicated = (t.max_positions + t.token_types) * h + (t.pooler ? 2 * h : 0);
  emb.output_elements = s * h;
  emb.act_replicated = 0;
  return emb;
}

Layer head_layer(const TransformerShape& t) {
  const double s = t.seq_len, h = t.hidden, v = t.vocab;
  Layer head;
  head.name = "head";
  head.kind = LayerKind::Head;
  head.params_replicated = norm_parameters(t);  // final norm
  // Tied: the output projection is the embedding's matrix (tied_embedding_copy on its own stage).
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
  return head;
}

double embedding_kept_bytes(const TransformerShape& t, ActivationSplit split) {
  // The dropout mask after the embedding (1 byte per element; split with sequence parallelism),
  // of the rank's s / cp tokens.
  return t.seq_len * double(t.hidden) / double(split.sequence) / double(split.cp);
}

double head_kept_bytes(const TransformerShape& t, double elem, ActivationSplit split) {
  // Final norm input and the logits' input (elem bytes each, split with sequence parallelism)
  // and what the cross entropy keeps of the (vocab-parallel) logits: unfused, the fp32 softmax,
  // Korthikanti et al. 2022 Sec. 4.3, 4sbh/t (1 + v/h) (cross_entropy.hpp). Each CP rank keeps its
  // own s / cp tokens' share.
  const double s = t.seq_len / double(split.cp), h = t.hidden, v = t.vocab, tp = split.tp;
  const double logit_bytes = cross_entropy_bytes(t.cross_entropy, elem).kept;
  return 2 * elem * s * h / double(split.sequence) + logit_bytes * s * v / tp;
}

double tied_embedding_copy(const Model& m, double tp, std::uint32_t pp) {
  if (!m.transformer || !m.transformer->tied_embeddings || pp <= 1) return 0;
  return static_cast<double>(m.transformer->vocab) * m.transformer->hidden / tp;
}

}  // namespace toposweep
