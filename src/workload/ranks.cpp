#include "toposweep/workload/ranks.hpp"

#include <algorithm>
#include <array>
#include <vector>

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

namespace {

// Calls f(rank) for every rank whose indices are 0 on the axes in `zero`, the pinned value on the
// pinned axes, and anything on the others, in rank order (mixed-radix counting, the first axis
// fastest), without dividing out any rank's coordinates.
template <class F>
void for_each_base(const std::array<std::uint32_t, kAxisCount>& size,
                   const std::array<bool, kAxisCount>& zero, std::initializer_list<AxisValue> pinned, F&& f) {
  std::array<std::uint32_t, kAxisCount> stride{}, index{};
  std::array<bool, kAxisCount> free{};
  std::uint32_t n = 1;
  for (std::size_t i = 0; i < kAxisCount; ++i) {
    stride[i] = n;
    n *= size[i];
    free[i] = !zero[i];
  }
  std::uint32_t rank = 0;
  for (const AxisValue& p : pinned) {
    const std::size_t i = axis_index(p.axis);
    if (p.value >= size[i] || (zero[i] && p.value != 0)) return;  // no rank has that index there
    free[i] = false;
    index[i] = p.value;
    rank += p.value * stride[i];
  }
  while (true) {
    f(rank);
    std::size_t i = 0;
    for (; i < kAxisCount; ++i) {
      if (!free[i]) continue;
      if (++index[i] < size[i]) {
        rank += stride[i];
        break;
      }
      rank -= (index[i] - 1) * stride[i];
      index[i] = 0;
    }
    if (i == kAxisCount) return;
  }
}

}  // namespace

GroupSet AxisGrid::groups(Axis along, std::initializer_list<AxisValue> pinned) const {
  return joint_groups({along}, pinned);  // one axis: members r + i * stride(along)
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
  // The members' offsets from the first: the `along` axes' mixed-radix digits, innermost fastest.
  std::vector<std::uint32_t> offsets;
  offsets.reserve(n);
  for (std::uint32_t j = 0; j < n; ++j) {
    std::uint32_t rest = j, offset = 0;
    for (std::size_t i = 0; i < kAxisCount; ++i) {
      if (!on[i]) continue;
      offset += (rest % size_[i]) * stride(static_cast<Axis>(i));
      rest /= size_[i];
    }
    offsets.push_back(offset);
  }
  for_each_base(size_, on, pinned, [&](std::uint32_t r) {
    auto& g = gs.groups.emplace_back(n);
    for (std::uint32_t j = 0; j < n; ++j) g[j] = r + offsets[j];
  });
  return gs;
}

GroupSet AxisGrid::pairs(Axis along, std::uint32_t from, std::uint32_t to) const {
  GroupSet gs;
  gs.axis = along;
  const std::uint32_t step = stride(along);
  std::array<bool, kAxisCount> zero{};
  zero[axis_index(along)] = true;
  for_each_base(size_, zero, {}, [&](std::uint32_t r) {
    gs.groups.push_back({r + from * step, r + to * step});
  });
  return gs;
}

AxisGrid axis_grid(const Strategy& s) {
  return AxisGrid{{Axis::Tp, s.tp}, {Axis::Cp, s.cp}, {Axis::Dp, s.dp}, {Axis::Pp, s.pp}};
}

AxisGrid expert_grid(const Strategy& s) {
  return AxisGrid{
      {Axis::Tp, s.expert_tp()}, {Axis::Ep, s.ep}, {Axis::Dp, s.expert_replicas()}, {Axis::Pp, s.pp}};
}

GroupSet model_parallel_groups(std::uint32_t k, std::uint32_t gpus) {
  return AxisGrid{{Axis::Tp, k}, {Axis::Dp, gpus / k}}.groups(Axis::Tp);
}

GroupSet shard_replica_groups(std::uint32_t k, std::uint32_t gpus) {
  return AxisGrid{{Axis::Tp, k}, {Axis::Dp, gpus / k}}.groups(Axis::Dp);
}

}  // namespace toposweep
