#pragma once
// Built-in models and the builders they are made from, and user models from JSON files
// (schema: docs/models.md). Each built-in is parameterised from the published shape
// (layers/hidden/heads/sequence for transformers, layer lists for CNNs, TopoOpt's configs for
// DLRM/NCF/CANDLE), not from hard-coded totals.
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "toposweep/workload/model.hpp"

namespace toposweep {

// Transformer from its shape: [embedding, block x layers, head].
Model transformer_model(std::string name, const TransformerShape& shape, std::string description = "");

// Fully connected layer in -> out (with bias), per sample `tokens` rows (1 for MLPs).
Layer dense_layer(std::string name, double in, double out, double tokens = 1);
// Convolution with bias or batch norm; h_out/w_out are the output spatial sizes.
Layer conv_layer(std::string name, double in_ch, double out_ch, double kernel, double h_out, double w_out,
                 bool batch_norm, double h_in, double w_in);

// The transformer `m` at sequence length `seq_len` (model.seq_len), rebuilt from its shape; the
// rest (name, description, batch) as it was. BadInput naming `where` for a model without a
// transformer shape, or one whose learned position table is shorter than seq_len.
Model with_seq_len(const Model& m, std::uint32_t seq_len, const std::string& where);
// The transformer `m` with its unfused attention's score kernels `kind` (model.softmax), rebuilt
// from its shape; BadInput naming `where` for a model without a transformer shape.
Model with_softmax(const Model& m, SoftmaxKind kind, const std::string& where);
// `m` with the cross entropy's kernels of `kind` (model.cross_entropy); a transformer only.
Model with_cross_entropy(const Model& m, CrossEntropyKind kind, const std::string& where);

std::vector<std::string> builtin_model_names();
bool is_builtin_model(const std::string& name);
Model builtin_model(const std::string& name);  // BadInput for an unknown name

// From JSON: errors are BadInput naming `where` and the field ("m.json: layers[3].forward_flops").
Model model_from_json(const nlohmann::json& j, const std::string& where);
Model load_model_file(const std::string& path);
// A built-in name, or a path to a JSON model file (anything with '/' or ending in .json).
Model resolve_model(const std::string& name_or_path, const std::string& where);

// Full description (used by `models NAME --json` and to write model files).
nlohmann::json model_to_json(const Model& m);

}  // namespace toposweep
