#include "toposweep/workload/ranks.hpp"

namespace toposweep {

GroupSet RankGrid::tp_groups(std::uint32_t stage) const {
  GroupSet gs;
  gs.groups.resize(dp);
  for (std::uint32_t d = 0; d < dp; ++d)
    for (std::uint32_t t = 0; t < tp; ++t) gs.groups[d].push_back(rank(t, d, stage));
  return gs;
}

GroupSet RankGrid::dp_groups(std::uint32_t stage) const {
  GroupSet gs;
  gs.groups.resize(tp);
  for (std::uint32_t t = 0; t < tp; ++t)
    for (std::uint32_t d = 0; d < dp; ++d) gs.groups[t].push_back(rank(t, d, stage));
  return gs;
}

GroupSet RankGrid::pp_pairs(std::uint32_t stage, bool forward) const {
  GroupSet gs;
  for (std::uint32_t d = 0; d < dp; ++d)
    for (std::uint32_t t = 0; t < tp; ++t) {
      const std::uint32_t a = rank(t, d, stage), b = rank(t, d, stage + 1);
      gs.groups.push_back(forward ? std::vector<std::uint32_t>{a, b} : std::vector<std::uint32_t>{b, a});
    }
  return gs;
}

GroupSet model_parallel_groups(std::uint32_t k, std::uint32_t gpus) {
  GroupSet gs;
  for (std::uint32_t i = 0; i < gpus / k; ++i) {
    gs.groups.emplace_back();
    for (std::uint32_t j = 0; j < k; ++j) gs.groups.back().push_back(i * k + j);
  }
  return gs;
}

GroupSet shard_replica_groups(std::uint32_t k, std::uint32_t gpus) {
  GroupSet gs;
  for (std::uint32_t j = 0; j < k; ++j) {
    gs.groups.emplace_back();
    for (std::uint32_t i = 0; i < gpus / k; ++i) gs.groups.back().push_back(i * k + j);
  }
  return gs;
}

}  // namespace toposweep
