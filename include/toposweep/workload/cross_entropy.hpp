#pragma once
// The loss after a transformer's output layer (model.cross_entropy; docs/models.md, "Cross
// entropy"): the vocab-parallel cross entropy over each rank's tokens x vocab / tp logits, as one of
// Megatron-Core's three implementations (compute_language_model_loss in
// megatron/core/models/common/language_module/language_module.py) runs it. Each is memory-bound
// work over the logits; what differs is how many passes it makes and in what datatype it keeps the
// softmax for the backward pass.
#include <optional>
#include <string_view>
#include <utility>

#include "toposweep/workload/model.hpp"

namespace toposweep {

// The implementations by their model.cross_entropy names.
inline constexpr std::pair<std::string_view, CrossEntropyKind> kCrossEntropyKinds[] = {
    {"unfused", CrossEntropyKind::Unfused},
    {"native", CrossEntropyKind::Native},
    {"te", CrossEntropyKind::Te}};
std::optional<CrossEntropyKind> cross_entropy_from_name(std::string_view name);

// HBM bytes per logit element on one rank, with logits of `elem` bytes (the activations').
struct CrossEntropyBytes {
  double forward = 0;   // the forward kernels
  double backward = 0;  // the backward kernels, up to the logits' gradient the output GEMMs read
  double kept = 0;      // kept from the forward for the backward
};
CrossEntropyBytes cross_entropy_bytes(CrossEntropyKind kind, double elem);

}  // namespace toposweep
