#include "toposweep/workload/ranks.hpp"

#include <algorithm>

#include "toposweep/workload/strategy.hpp"

namespace toposweep {

AxisGrid::AxisGrid(std::initializer_list<AxisValue> sizes) {
  for (const AxisValue& s : sizes) size_[axis_index(s.axis)] = s.value;
}

std::uint32_t AxisGrid::gpus() const {
  std::uint32_t n = 1;
  for (std::uint32_t s : size_) n *= s;
  return n;
}

std::uint32_t AxisGrid::stride(Axis a) const {
  std::uint32_t n = 1;
  for (std::size_t i = 0; i < axis_index(a); ++i) n *= size_[i];
  return n;
}

std::uint32_t AxisGrid::rank(const AxisCoords& c) const {
  // Horner from the outermost axis: t + tp*(c + cp*(... + dp*p)).
  std::uint32_t r = 0;
  for (std::size_t i = kAxisCount; i-- > 0;) r = r * size_[i] + c.index[i];
  return r;
}

std::uint32_t AxisGrid::rank(std::initializer_list<AxisValue> index) const {
  AxisCoords c;
  for (const AxisValue& v : index) c[v.axis] = v.value;
  return rank(c);
}

AxisCoords AxisGrid::coords(std::uint32_t rank) const {
  AxisCoords c;
  for (std::size_t i = 0; i < kAxisCount; ++i) {
    c.index[i] = rank % size_[i];
    rank /= size_[i];
  }
  return c;
}

GroupSet AxisGrid::groups(Axis along, std::initializer_list<AxisValue> pinned) const {
  GroupSet gs;
  gs.axis = along;
  const std::uint32_t step = stride(along), n = size(along);
  // Each group's first member (index 0 on `along`), in rank order.
  for (std::uint32_t r = 0; r < gpus(); ++r) {
    const AxisCoords c = coords(r);
    bool first = c[along] == 0;
    for (const AxisValue& p : pinned) first = first && c[p.axis] == p.value;
    if (!first) continue;
    auto& g = gs.groups.emplace_back(n);
    for (std::uint32_t i = 0; i < n; ++i) g[i] = r + i * step;
  }
  return gs;
}

GroupSet AxisGrid::joint_groups(std::initializer_list<Axis> along,
                                std::initializer_list<AxisValue> pinned) const {
  GroupSet gs;
  // Recorded as the outermost of the axes (what the group set is named by).
  gs.axis = along.size() > 0 ? *std::max_element(along.begin(), along.end()) : Axis::Tp;
  std::array<bool, kAxisCount> on{};
  std::uint32_t n = 1;
  for (Axis a : along) {
    on[axis_index(a)] = true;
    n *= size(a);
  }
  for (std::uint32_t r = 0; r < gpus(); ++r) {
    const AxisCoords c = coords(r);
    bool first = true;
    for (Axis a : along) first = first && c[a] == 0;
    for (const AxisValue& p : pinned) first = first && c[p.axis] == p.value;
    if (!first) continue;
    auto& g = gs.groups.emplace_back();
    g.reserve(n);
    // Member j: j's mixed-radix digits over the `along` axes, innermost fastest (rank order).
    for (std::uint32_t j = 0; j < n; ++j) {
      std::uint32_t rest = j, member = r;
      for (std::size_t i = 0; i < kAxisCount; ++i) {
        if (!on[i]) continue;
        member += (rest % size_[i]) * stride(static_cast<Axis>(i));
        rest /= size_[i];
      }
      g.push_back(member);
    }
  }
  return gs;
}

GroupSet AxisGrid::pairs(Axis along, std::uint32_t from, std::uint32_t to) const {
  GroupSet gs;
  gs.axis = along;
  const std::uint32_t step = stride(along);
  for (std::uint32_t r = 0; r < gpus(); ++r)
    if (coords(r)[along] == 0) gs.groups.push_back({r + from * step, r + to * step});
  return gs;
}

AxisGrid axis_grid(const Strategy& s) {
  return AxisGrid{{Axis::Tp, s.tp}, {Axis::Cp, s.cp}, {Axis::Dp, s.dp}, {Axis::Pp, s.pp}};
}

GroupSet model_parallel_groups(std::uint32_t k, std::uint32_t gpus) {
  return AxisGrid{{Axis::Tp, k}, {Axis::Dp, gpus / k}}.groups(Axis::Tp);
}

GroupSet shard_replica_groups(std::uint32_t k, std::uint32_t gpus) {
  return AxisGrid{{Axis::Tp, k}, {Axis::Dp, gpus / k}}.groups(Axis::Dp);
}

}  // namespace toposweep
