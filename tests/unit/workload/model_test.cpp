// Built-in models against published figures, and user model files.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/model_library.hpp"

namespace toposweep {
namespace {

using nlohmann::json;

TEST(Models, TransformerParameterCountsMatchPublishedSizes) {
  EXPECT_NEAR(builtin_model("gpt3-175b").parameters(), 175e9, 0.01 * 175e9);
  EXPECT_NEAR(builtin_model("gpt3-13b").parameters(), 13e9, 0.03 * 13e9);
  EXPECT_NEAR(builtin_model("gpt3-6.7b").parameters(), 6.7e9, 0.03 * 6.7e9);
  EXPECT_NEAR(builtin_model("gpt3-2.7b").parameters(), 2.7e9, 0.03 * 2.7e9);
  EXPECT_NEAR(builtin_model("gpt3-1.3b").parameters(), 1.3e9, 0.03 * 1.3e9);
  EXPECT_NEAR(builtin_model("mt-nlg-530b").parameters(), 530e9, 0.01 * 530e9);
  // Llama-2-70B: 68,976,648,192 parameters (sum of the released checkpoint's tensors).
  EXPECT_NEAR(builtin_model("llama-70b").parameters(), 68976648192.0, 1e-6 * 68976648192.0);
  const double bert_large = builtin_model("bert-large").parameters();
  EXPECT_GE(bert_large, 335e6);
  EXPECT_LE(bert_large, 340e6);
  EXPECT_NEAR(builtin_model("bert-base").parameters(), 110e6, 1e6);
}

TEST(Models, Gpt3ClosedFormParameterCount) {
  // 12 L h^2 + 13 L h (blocks) + V h + S h (embeddings) + 2h (final norm).
  const double L = 96, h = 12288, V = 50257, S = 2048;
  EXPECT_DOUBLE_EQ(builtin_model("gpt3-175b").parameters(),
                   12 * L * h * h + 13 * L * h + V * h + S * h + 2 * h);
}

TEST(Models, VisionParameterCountsAreTorchvisions) {
  EXPECT_DOUBLE_EQ(builtin_model("resnet50").parameters(), 25557032.0);
  EXPECT_DOUBLE_EQ(builtin_model("vgg16").parameters(), 138357544.0);
  EXPECT_DOUBLE_EQ(builtin_model("vgg19").parameters(), 143667240.0);
}

TEST(Models, VisionForwardFlopsMatchPublishedMacs) {
  // Published multiply-accumulates per 224x224 image (convolutions and FC): ResNet-50 4.09 G,
  // VGG16 15.47 G, VGG19 19.63 G. A MAC is 2 FLOPs.
  EXPECT_NEAR(builtin_model("resnet50").forward_flops_per_sample(), 2 * 4.09e9, 0.01 * 2 * 4.09e9);
  EXPECT_NEAR(builtin_model("vgg16").forward_flops_per_sample(), 2 * 15.47e9, 0.01 * 2 * 15.47e9);
  EXPECT_NEAR(builtin_model("vgg19").forward_flops_per_sample(), 2 * 19.63e9, 0.01 * 2 * 19.63e9);
}

TEST(Models, TransformerTrainingFlopsAreSixPTPlusAttention) {
  // Training FLOPs per token ~ 6 P plus the attention-score term 12 L s h (Kaplan et al. /
  // Narayanan et al.): per sequence 6 P s + 12 L s^2 h.
  for (const char* name : {"gpt3-175b", "gpt3-1.3b", "bert-large"}) {
    const Model m = builtin_model(name);
    const auto& t = *m.transformer;
    const double s = t.seq_len, h = t.hidden, L = t.layers;
    const double expected = 6 * m.parameters() * s + 12 * L * s * s * h;
    const double got = m.forward_flops_per_sample() + m.backward_flops_per_sample();
    EXPECT_NEAR(got / expected, 1.0, 0.01) << name;
  }
  const Model g = builtin_model("gpt3-175b");
  const double got = g.forward_flops_per_sample() + g.backward_flops_per_sample();
  const double expected = 6 * g.parameters() * 2048 + 12 * 96 * 2048.0 * 2048 * 12288;
  EXPECT_NEAR(got / expected, 1.0, 1e-3);
}

TEST(Models, RecommendationTablesFollowTopoOpt) {
  const Model d = builtin_model("dlrm");
  ASSERT_EQ(d.tables.size(), 64u);
  EXPECT_DOUBLE_EQ(d.table_parameters(), 64 * 10e6 * 128);
  EXPECT_DOUBLE_EQ(d.tables[0].exchanged_elements_per_sample(), 128);  // pooled bag
  const Model n = builtin_model("ncf");
  ASSERT_EQ(n.tables.size(), 32u);
  EXPECT_DOUBLE_EQ(n.table_parameters(), 32 * 2e6 * 128);
  EXPECT_DOUBLE_EQ(n.tables[0].exchanged_elements_per_sample(), 256);  // user + item vectors
  // CANDLE-Uno: 24 dense 16384x16384 layers with bias plus a 16384 -> 1 output.
  EXPECT_DOUBLE_EQ(builtin_model("candle-uno").parameters(), 24 * (16384.0 * 16384 + 16384) + 16384 + 1);
}

TEST(Models, EveryBuiltinHasLayersAndAName) {
  for (const auto& name : builtin_model_names()) {
    const Model m = builtin_model(name);
    EXPECT_EQ(m.name, name);
    EXPECT_GT(m.layers.size(), 0u);
    EXPECT_GT(m.forward_flops_per_sample(), 0);
  }
  EXPECT_THROW(builtin_model("gpt5"), BadInput);
}

TEST(ModelJson, UserMlpFromShorthandLayers) {
  const json j = json::parse(R"({"name": "tiny", "batch_per_gpu": 8,
    "layers": [{"name": "fc1", "kind": "dense", "in": 10, "out": 20},
               {"name": "act", "kind": "other", "forward_flops": 100, "input_elements": 20, "output_elements": 20},
               {"name": "fc2", "kind": "dense", "in": 20, "out": 1}]})");
  const Model m = model_from_json(j, "t.json");
  EXPECT_EQ(m.layers.size(), 3u);
  EXPECT_DOUBLE_EQ(m.parameters(), 10 * 20 + 20 + 20 + 1);
  EXPECT_DOUBLE_EQ(m.forward_flops_per_sample(), 2 * 10 * 20 + 100 + 2 * 20);
  EXPECT_DOUBLE_EQ(m.layers[1].backward_flops, 200);
  EXPECT_EQ(m.default_batch_per_gpu, 8u);
}

TEST(ModelJson, TransformerShapeGivesTheSameModelAsTheBuiltin) {
  const json j = json::parse(R"({"name": "my-gpt", "transformer": {"layers": 96, "hidden": 12288, "heads": 96,
    "seq_len": 2048, "vocab": 50257, "max_positions": 2048}})");
  EXPECT_DOUBLE_EQ(model_from_json(j, "g.json").parameters(), builtin_model("gpt3-175b").parameters());
}

TEST(ModelJson, TablesWithCountAreReplicated) {
  const json j = json::parse(
      R"({"name": "rec", "tables": [{"count": 4, "rows": 1000, "dim": 16, "lookups_per_sample": 3}],
    "layers": [{"name": "top", "kind": "dense", "in": 64, "out": 1}]})");
  const Model m = model_from_json(j, "r.json");
  EXPECT_EQ(m.tables.size(), 4u);
  EXPECT_EQ(m.layers.front().kind, LayerKind::EmbeddingBag);
  EXPECT_DOUBLE_EQ(m.table_parameters(), 4 * 1000 * 16);
  EXPECT_EQ(m.family, ModelFamily::Recommendation);
}

std::string error_where(const std::string& text) {
  try {
    model_from_json(json::parse(text), "m.json");
  } catch (const BadInput& e) {
    return e.where();
  }
  return "no error";
}

TEST(ModelJson, ErrorsNameTheField) {
  EXPECT_EQ(
      error_where(
          R"({"name": "x", "layers": [{"name": "a", "kind": "other", "input_elements": 1, "output_elements": 1}]})"),
      "m.json.layers[0].forward_flops");
  EXPECT_EQ(error_where(
                R"({"name": "x", "layers": [{"name": "a", "kind": "dense", "in": 1, "out": 2, "outt": 3}]})"),
            "m.json.layers[0].outt");
  EXPECT_EQ(error_where(R"({"name": "x", "layers": [{"name": "a", "kind": "densse", "in": 1, "out": 2}]})"),
            "m.json.layers[0].kind");
  EXPECT_EQ(error_where(R"({"name": "x", "layers": [{"name": "a", "kind": "dense", "in": -1, "out": 2}]})"),
            "m.json.layers[0].in");
  EXPECT_EQ(
      error_where(
          R"({"name": "x", "transformer": {"layers": 2, "hidden": 10, "heads": 3, "seq_len": 4, "vocab": 5}})"),
      "m.json.transformer.hidden");
  EXPECT_EQ(error_where(R"({"layers": []})"), "m.json.name");
  EXPECT_THROW(load_model_file("/nonexistent/model.json"), BadInput);
  EXPECT_THROW(resolve_model("no-such-model", "key model.name"), BadInput);
}

TEST(ModelJson, DescriptionCarriesTheContractFields) {
  const json j = model_to_json(builtin_model("dlrm"));
  EXPECT_EQ(j["name"], "dlrm");
  EXPECT_DOUBLE_EQ(j["parameters"].get<double>(), builtin_model("dlrm").parameters());
  EXPECT_EQ(j["tables"].size(), 64u);
  EXPECT_TRUE(j.contains("forward_flops_per_sample"));
  EXPECT_TRUE(j.contains("layers"));
}

}  // namespace
}  // namespace toposweep

namespace toposweep {
namespace {

TEST(ModelJson, ExampleFilesInInputsLoad) {
  const std::string dir = std::string(TOPOSWEEP_SOURCE_DIR) + "/inputs/models/";
  EXPECT_DOUBLE_EQ(load_model_file(dir + "example-mlp.json").parameters(),
                   (1024.0 * 4096 + 4096) + (4096.0 * 4096 + 4096) + (4096.0 * 1024 + 1024));
  const Model gpt = load_model_file(dir + "example-gpt-30b.json");
  EXPECT_NEAR(gpt.parameters(), 30e9, 0.01 * 30e9);
  const Model rec = load_model_file(dir + "example-recsys.json");
  EXPECT_EQ(rec.tables.size(), 8u);
  EXPECT_DOUBLE_EQ(rec.table_parameters(), 8 * 1e6 * 64);
}

}  // namespace
}  // namespace toposweep

namespace toposweep {
namespace {

TEST(ModelJson, ConvShorthandCountsWeightsAndMacs) {
  const auto j = nlohmann::json::parse(R"({"name": "c", "layers": [
    {"name": "c1", "kind": "conv", "in_channels": 64, "out_channels": 128, "kernel": 3, "input_size": 56, "stride": 2}]})");
  const Layer l = model_from_json(j, "c.json").layers.at(0);
  EXPECT_DOUBLE_EQ(l.parameters(), 3 * 3 * 64 * 128 + 2 * 128);         // weights + batch norm
  EXPECT_DOUBLE_EQ(l.forward_flops, 2.0 * 3 * 3 * 64 * 128 * 28 * 28);  // 28x28 outputs
  EXPECT_DOUBLE_EQ(l.output_elements, 128 * 28 * 28);
}

}  // namespace
}  // namespace toposweep
