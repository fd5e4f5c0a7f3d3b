// Group-limited routing (moe_routing.hpp): which groups are consistent, worked out by hand, and the
// model.moe_router_groups / model.moe_router_group_topk keys, which set the model's pair and change
// nothing the experts compute.
#include "toposweep/workload/moe_routing.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/model_library.hpp"
#include "toposweep/workload/spec.hpp"

namespace toposweep {
namespace {

MoeShape shape(std::uint32_t experts, std::uint32_t top_k, std::uint32_t groups, std::uint32_t group_topk) {
  MoeShape m;
  m.experts = experts;
  m.top_k = top_k;
  m.expert_ffn_hidden = 1;
  m.router_groups = groups;
  m.router_group_topk = group_topk;
  return m;
}

TEST(MoeRouting, ConsistentGroups) {
  EXPECT_EQ(router_groups_problem(shape(256, 8, 8, 4)), "");  // DeepSeek-V3: 4 of 8 groups of 32
  EXPECT_EQ(router_groups_problem(shape(8, 2, 0, 0)), "");    // unlimited
  EXPECT_EQ(router_groups_problem(shape(8, 2, 4, 1)), "");    // one group of 2 holds top 2
  EXPECT_EQ(router_groups_problem(shape(8, 2, 8, 2)), "");    // two groups of 1
  EXPECT_NE(router_groups_problem(shape(256, 8, 7, 4)), "");  // 7 does not divide 256
  EXPECT_NE(router_groups_problem(shape(256, 8, 8, 9)), "");  // 9 of 8 groups
  EXPECT_NE(router_groups_problem(shape(256, 8, 8, 0)), "");  // one without the other
  EXPECT_NE(router_groups_problem(shape(256, 8, 0, 4)), "");
  EXPECT_NE(router_groups_problem(shape(8, 2, 8, 1)), "");  // one expert cannot hold top 2
  EXPECT_NE(router_groups_problem(shape(8, 4, 4, 1)), "");  // 2 experts cannot hold top 4
}

Workload routed(const std::string& model, std::optional<std::uint32_t> groups,
                std::optional<std::uint32_t> topk) {
  WorkloadSpec spec;
  spec.model = model;
  spec.device = "h100";
  spec.datatype = "bf16";
  spec.moe_router_groups = groups;
  spec.moe_router_group_topk = topk;
  return make_workload(spec, 8);
}

std::string error_of(const std::string& model, std::optional<std::uint32_t> groups,
                     std::optional<std::uint32_t> topk) {
  try {
    routed(model, groups, topk);
  } catch (const BadInput& e) {
    return std::string(e.what()) + " (" + e.where() + ")";
  }
  return "";
}

TEST(MoeRouting, KeysSetTheModelsPair) {
  const Workload plain = routed("mixtral-8x7b", std::nullopt, std::nullopt);
  const Workload limited = routed("mixtral-8x7b", 4, 1);
  const MoeShape& moe = *limited.model.transformer->moe;
  EXPECT_EQ(moe.router_groups, 4u);
  EXPECT_EQ(moe.router_group_topk, 1u);
  EXPECT_EQ(plain.model.transformer->moe->router_groups, 0u);
  // Routing moves copies, not work: FLOPs, parameters and the layers are the same.
  EXPECT_EQ(limited.model.forward_flops_per_sample(), plain.model.forward_flops_per_sample());
  EXPECT_EQ(limited.model.parameters(), plain.model.parameters());
  EXPECT_EQ(limited.model.layers.size(), plain.model.layers.size());
  // deepseek-v3 carries 4 of 8: groups 0 alone switch the limit off; topk alone keeps its 8 groups.
  const MoeShape off = *routed("deepseek-v3", 0, std::nullopt).model.transformer->moe;
  EXPECT_EQ(off.router_groups, 0u);
  EXPECT_EQ(off.router_group_topk, 0u);
  const MoeShape two = *routed("deepseek-v3", std::nullopt, 2).model.transformer->moe;
  EXPECT_EQ(two.router_groups, 8u);
  EXPECT_EQ(two.router_group_topk, 2u);
}

TEST(MoeRouting, BadGroupsNameTheKey) {
  EXPECT_NE(error_of("gpt3-1.3b", 4, 1).find("key model.moe_router_groups"), std::string::npos);
  EXPECT_NE(error_of("gpt3-1.3b", 4, 1).find("no experts"), std::string::npos);
  EXPECT_NE(error_of("mixtral-8x7b", 3, 1).find("key model.moe_router_groups"), std::string::npos);
  EXPECT_NE(error_of("mixtral-8x7b", 8, 1).find("top_k"), std::string::npos);
  // topk without groups, on a model without them: the topk key is named.
  EXPECT_NE(error_of("mixtral-8x7b", std::nullopt, 2).find("key model.moe_router_group_topk"),
            std::string::npos);
  EXPECT_EQ(error_of("mixtral-8x7b", 4, 2), "");
}

}  // namespace
}  // namespace toposweep
