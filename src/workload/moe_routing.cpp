#include "toposweep/workload/moe_routing.hpp"

#include "toposweep/util/error.hpp"

namespace toposweep {

std::string router_groups_problem(const MoeShape& moe) {
  const std::uint32_t g = moe.router_groups, m = moe.router_group_topk;
  if (g == 0 && m == 0) return {};
  if (g == 0 || m == 0) return "router_groups and router_group_topk are set together (or both 0)";
  if (moe.experts % g != 0)
    return "router_groups " + std::to_string(g) + " must divide the " + std::to_string(moe.experts) +
           " experts";
  if (m > g)
    return "router_group_topk " + std::to_string(m) + " is more than the " + std::to_string(g) + " groups";
  if (static_cast<std::uint64_t>(m) * (moe.experts / g) < moe.top_k)
    return "router_group_topk " + std::to_string(m) + " groups of " + std::to_string(moe.experts / g) +
           " experts cannot hold a token's top_k " + std::to_string(moe.top_k);
  return {};
}

Model with_router_groups(const Model& m, std::uint32_t groups, std::uint32_t group_topk,
                         const std::string& where) {
  if (!m.transformer || !m.transformer->moe)
    throw BadInput("model " + m.name + " has no experts to route in groups", where);
  Model out = m;
  MoeShape& moe = *out.transformer->moe;
  moe.router_groups = groups;
  moe.router_group_topk = group_topk;
  if (const std::string problem = router_groups_problem(moe); !problem.empty())
    throw BadInput(problem, where);
  return out;
}

TokenDedup token_routing(const MoeShape& moe) {
  return {static_cast<std::uint16_t>(moe.top_k), static_cast<std::uint16_t>(moe.experts),
          static_cast<std::uint16_t>(moe.router_groups), static_cast<std::uint16_t>(moe.router_group_topk)};
}

}  // namespace toposweep
