// A model's JSON description (`models NAME --json`) reads back as the same model.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <utility>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/model_library.hpp"

namespace toposweep {
namespace {

void expect_same_layer(const Layer& a, const Layer& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.kind, b.kind) << a.name;
  EXPECT_EQ(a.forward_flops, b.forward_flops) << a.name;
  EXPECT_EQ(a.backward_flops, b.backward_flops) << a.name;
  EXPECT_EQ(a.params_sharded, b.params_sharded) << a.name;
  EXPECT_EQ(a.params_replicated, b.params_replicated) << a.name;
  EXPECT_EQ(a.act_replicated, b.act_replicated) << a.name;
  EXPECT_EQ(a.act_sharded, b.act_sharded) << a.name;
  EXPECT_EQ(a.act_scores, b.act_scores) << a.name;
  EXPECT_EQ(a.input_elements, b.input_elements) << a.name;
  EXPECT_EQ(a.output_elements, b.output_elements) << a.name;
  EXPECT_EQ(a.sfb_elements, b.sfb_elements) << a.name;
}

TEST(ModelJson, EveryBuiltinDescriptionReadsBackAsTheSameModel) {
  for (const std::string& name : builtin_model_names()) {
    SCOPED_TRACE(name);
    const Model m = builtin_model(name);
    const nlohmann::json j = model_to_json(m);
    const Model back = model_from_json(j, name + ".json");
    EXPECT_EQ(back.name, m.name);
    EXPECT_EQ(back.description, m.description);
    EXPECT_EQ(back.family, m.family);
    EXPECT_EQ(back.sample_unit, m.sample_unit);
    EXPECT_EQ(back.default_batch_per_gpu, m.default_batch_per_gpu);
    EXPECT_EQ(back.transformer, m.transformer);
    ASSERT_EQ(back.layers.size(), m.layers.size());
    for (std::size_t i = 0; i < m.layers.size(); ++i) expect_same_layer(back.layers[i], m.layers[i]);
    ASSERT_EQ(back.tables.size(), m.tables.size());
    for (std::size_t i = 0; i < m.tables.size(); ++i) {
      EXPECT_EQ(back.tables[i].name, m.tables[i].name);
      EXPECT_EQ(back.tables[i].rows, m.tables[i].rows);
      EXPECT_EQ(back.tables[i].dim, m.tables[i].dim);
      EXPECT_EQ(back.tables[i].lookups_per_sample, m.tables[i].lookups_per_sample);
      EXPECT_EQ(back.tables[i].pooled, m.tables[i].pooled);
    }
    EXPECT_EQ(model_to_json(back), j);
  }
}

TEST(ModelJson, StaleDerivedFactsDoNotReadBack) {
  nlohmann::json j = model_to_json(builtin_model("gpt3-125m"));
  j["transformer"]["layers"] = 13;  // one more block, totals left as they were
  EXPECT_THROW(model_from_json(j, "g.json"), BadInput);
  nlohmann::json v = model_to_json(builtin_model("vgg16"));
  v["layers"][0]["replicated_parameters"] = 1e12;  // more than the layer has
  EXPECT_THROW(model_from_json(v, "v.json"), BadInput);
}

// Group-limited routing's keys (moe.router_groups, router_group_topk): the groups divide the
// experts, the two come together, and a token's groups are at most the groups.
TEST(ModelJson, RouterGroupsAreChecked) {
  const nlohmann::json ds = model_to_json(builtin_model("deepseek-v3"));
  ASSERT_EQ(ds["transformer"]["moe"]["router_groups"], 8);
  ASSERT_EQ(ds["transformer"]["moe"]["router_group_topk"], 4);
  for (const auto& [groups, topk] : {std::pair{7, 4}, std::pair{8, 9}, std::pair{8, 0}}) {
    nlohmann::json j = ds;
    j["transformer"]["moe"]["router_groups"] = groups;
    j["transformer"]["moe"]["router_group_topk"] = topk;
    EXPECT_THROW(model_from_json(j, "d.json"), BadInput) << groups << " " << topk;
  }
}

}  // namespace
}  // namespace toposweep
