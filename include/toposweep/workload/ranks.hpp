#pragma once
// GPU rank arithmetic of a 3-D strategy (Megatron order: rank = t + tp*(d + dp*p)) and the
// communication groups it creates, as GroupSets listing every concurrent instance.
#include <cstdint>

#include "toposweep/workload/task_graph.hpp"

namespace toposweep {

struct RankGrid {
  std::uint32_t dp = 1, tp = 1, pp = 1;
  std::uint32_t gpus() const { return dp * tp * pp; }
  std::uint32_t rank(std::uint32_t t, std::uint32_t d, std::uint32_t p) const {
    return t + tp * (d + dp * p);
  }

  GroupSet tp_groups(std::uint32_t stage) const;  // dp groups of tp ranks
  GroupSet dp_groups(std::uint32_t stage) const;  // tp groups of dp ranks
  // {rank on `stage`, same (t, d) on stage+1} pairs; reversed (stage+1 -> stage) when !forward.
  GroupSet pp_pairs(std::uint32_t stage, bool forward) const;
};

// Per-layer model parallelism over k consecutive ranks of `gpus`: the k-rank groups, and the
// gpus/k-rank groups of ranks holding the same shard (which reduce its gradients).
GroupSet model_parallel_groups(std::uint32_t k, std::uint32_t gpus);
GroupSet shard_replica_groups(std::uint32_t k, std::uint32_t gpus);

}  // namespace toposweep
