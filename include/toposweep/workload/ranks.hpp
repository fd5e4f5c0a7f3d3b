#pragma once
// GPU rank arithmetic: the N-axis grid of a strategy (axes in axis.hpp's order, the first
// fastest: rank = t + tp*(c + cp*(e + ep*(d + dp*p))), Megatron-Core's rank order) and the
// communication groups it creates, as GroupSets listing every concurrent instance.
#include <array>
#include <cstdint>
#include <initializer_list>

#include "toposweep/workload/axis.hpp"
#include "toposweep/workload/task_graph.hpp"

namespace toposweep {

struct Strategy;

// One value per axis: a rank's coordinates (index along each axis).
struct AxisCoords {
  std::array<std::uint32_t, kAxisCount> index{};
  std::uint32_t& operator[](Axis a) { return index[axis_index(a)]; }
  std::uint32_t operator[](Axis a) const { return index[axis_index(a)]; }
  bool operator==(const AxisCoords&) const = default;
};

// A value on one named axis: a size, an index or a pinned index, by context.
struct AxisValue {
  Axis axis;
  std::uint32_t value;
};

class AxisGrid {
 public:
  AxisGrid() = default;  // every axis of size 1: one rank
  // The named axes' sizes (at least 1); the others 1.
  AxisGrid(std::initializer_list<AxisValue> sizes);

  std::uint32_t size(Axis a) const { return size_[axis_index(a)]; }
  std::uint32_t gpus() const;
  // Rank distance between neighbours along `a`: the product of the sizes of the axes before it.
  std::uint32_t stride(Axis a) const;

  std::uint32_t rank(const AxisCoords& c) const;
  std::uint32_t rank(std::initializer_list<AxisValue> index) const;  // unnamed axes at 0
  AxisCoords coords(std::uint32_t rank) const;

  // The groups along `along`: each the ranks that differ only in their index on `along`,
  // ordered by it; one group per choice of the other axes' indices agreeing with `pinned`, in
  // rank order of those choices. groups(Tp, {{Pp, p}}) are stage p's TP groups.
  GroupSet groups(Axis along, std::initializer_list<AxisValue> pinned = {}) const;
  // The groups along several axes at once: each the ranks that differ only in their indices on
  // `along`, in rank order (the gradient-reducing dp x cp groups: joint_groups({Cp, Dp}, {{Pp, p}})).
  // With one axis the same as groups().
  GroupSet joint_groups(std::initializer_list<Axis> along,
                        std::initializer_list<AxisValue> pinned = {}) const;
  // Point-to-point pairs {index `from`, index `to`} along `along`, one per choice of the other
  // axes' indices, in rank order: pairs(Pp, p, p + 1) are the sends from stage p to p + 1.
  GroupSet pairs(Axis along, std::uint32_t from, std::uint32_t to) const;

 private:
  std::array<std::uint32_t, kAxisCount> size_ = [] {
    std::array<std::uint32_t, kAxisCount> a{};
    a.fill(1);
    return a;
  }();
};

// The grid of a strategy: its tp, cp, dp and pp (ep = 1: expert parallelism has a grid of its own).
AxisGrid axis_grid(const Strategy& s);
// The grid the routed experts see (Megatron-Core's expert grid): the same ranks with the dp x cp
// ranks of each (tp index, stage) taken in axis_grid's order (cp fastest) as ep consecutive
// expert-parallel ranks times dp x cp / ep expert replicas: its Ep groups exchange tokens (the
// All-to-All), its Dp groups hold the same experts. Folded (strategy.etp = 1 < tp): a stage's
// tp x dp x cp ranks in order, etp innermost, then ep, then the tp x dp x cp / (etp x ep)
// expert replicas (Megatron-Core's expert rank order).
AxisGrid expert_grid(const Strategy& s);

// Per-layer model parallelism over k consecutive ranks of `gpus`: the k-rank groups, and the
// gpus/k-rank groups of ranks holding the same shard (which reduce its gradients). The grid
// tp = k, dp = gpus / k: its Tp and Dp groups.
GroupSet model_parallel_groups(std::uint32_t k, std::uint32_t gpus);
GroupSet shard_replica_groups(std::uint32_t k, std::uint32_t gpus);

}  // namespace toposweep
