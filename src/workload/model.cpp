#include "toposweep/workload/model.hpp"

#include <algorithm>

namespace toposweep {

const char* layer_kind_name(LayerKind k) {
  switch (k) {
    case LayerKind::Dense:
      return "dense";
    case LayerKind::Conv:
      return "conv";
    case LayerKind::Pool:
      return "pool";
    case LayerKind::TransformerBlock:
      return "transformer_block";
    case LayerKind::Embedding:
      return "embedding";
    case LayerKind::Head:
      return "head";
    case LayerKind::EmbeddingBag:
      return "embedding_bag";
    case LayerKind::Interaction:
      return "interaction";
    case LayerKind::Other:
      return "other";
  }
  return "other";
}

double head_width(const TransformerShape& t) {
  return t.head_dim > 0 ? static_cast<double>(t.head_dim) : static_cast<double>(t.hidden) / t.heads;
}

const char* model_family_name(ModelFamily f) {
  switch (f) {
    case ModelFamily::Transformer:
      return "transformer";
    case ModelFamily::Vision:
      return "vision";
    case ModelFamily::Recommendation:
      return "recommendation";
    case ModelFamily::Mlp:
      return "mlp";
  }
  return "mlp";
}

double Model::table_parameters() const {
  double p = 0;
  for (const auto& t : tables) p += t.parameters();
  return p;
}

double Model::dense_parameters() const {
  double p = 0;
  for (const auto& l : layers)
    if (l.kind != LayerKind::EmbeddingBag) p += l.parameters();
  return p;
}

double Model::active_parameters() const {
  double p = 0;
  for (const auto& l : layers)
    if (l.kind != LayerKind::EmbeddingBag) p += l.active_parameters();
  return p;
}

double Model::parameters() const {
  return dense_parameters() + table_parameters();
}

double Model::forward_flops_per_sample() const {
  double f = 0;
  for (const auto& l : layers) f += l.forward_flops;
  return f;
}

double Model::backward_flops_per_sample() const {
  double f = 0;
  for (const auto& l : layers) f += l.backward_flops;
  return f;
}

std::uint32_t Model::pipeline_units() const {
  if (transformer) return transformer->layers;
  return static_cast<std::uint32_t>(std::count_if(layers.begin(), layers.end(), [](const Layer& l) {
    return l.kind != LayerKind::EmbeddingBag && l.kind != LayerKind::Interaction;
  }));
}

}  // namespace toposweep
