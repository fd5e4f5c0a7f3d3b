#pragma once
// Group-limited routing of a Mixture-of-Experts model (DeepSeek-V3's node-limited routing,
// Megatron-Core's moe_router_num_groups / moe_router_group_topk; MoeShape::router_groups): the
// experts in `router_groups` equal groups of consecutive experts, each token's top_k experts chosen
// within `router_group_topk` of them. It changes where a token's copies go, not what the experts
// compute: FLOPs, parameters and memory stay; DeepEP's dispatch (strategy.ep_dispatcher = deepep,
// util/alltoall_dedup.hpp) sends fewer copies over the network when the groups are the EP
// group's nodes. Set by a model file's `moe` or by the model.moe_router_groups /
// model.moe_router_group_topk keys (docs/models.md, "Dispatcher").
#include <cstdint>
#include <string>

#include "toposweep/util/collective_op.hpp"
#include "toposweep/workload/model.hpp"

namespace toposweep {

// What makes `moe`'s routing groups inconsistent, in words; empty when they are consistent: both
// 0 (unlimited), or groups dividing the experts with 1 <= group_topk <= groups and the top_k experts
// fitting in group_topk groups.
std::string router_groups_problem(const MoeShape& moe);

// `m` with its experts routed in `groups` groups, `group_topk` of them per token (0, 0: unlimited).
// BadInput naming `where` for a model without experts, or for groups router_groups_problem rejects.
Model with_router_groups(const Model& m, std::uint32_t groups, std::uint32_t group_topk,
                         const std::string& where);

// The routing a node-deduplicating dispatcher's All-to-All carries (Task::dedup): `moe`'s top_k,
// experts and routing groups.
TokenDedup token_routing(const MoeShape& moe);

}  // namespace toposweep
