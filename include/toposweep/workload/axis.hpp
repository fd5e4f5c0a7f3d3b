#pragma once
// The parallel axes a training job's GPU ranks are laid out along, innermost (neighbouring
// ranks) first, in Megatron-Core's order tp-cp-ep-dp-pp. A new axis is one enumerator and one
// row of kAxes; the rank grid (ranks.hpp) and its groups follow.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace toposweep {

enum class Axis : std::uint8_t { Tp, Cp, Ep, Dp, Pp };

struct AxisInfo {
  Axis axis;
  std::string_view name;    // the strategy key's name ("tp", ...)
  std::string_view splits;  // what the ranks along the axis divide among themselves
};

// Every axis, in rank order: a rank's index on the first varies fastest.
inline constexpr AxisInfo kAxes[] = {
    {Axis::Tp, "tp", "each layer's weights and GEMMs (tensor parallel)"},
    {Axis::Cp, "cp", "each sample's sequence (context parallel)"},
    {Axis::Ep, "ep", "the experts of a mixture-of-experts layer (expert parallel)"},
    {Axis::Dp, "dp", "the global batch (data parallel)"},
    {Axis::Pp, "pp", "the layers, into pipeline stages"},
};
inline constexpr std::size_t kAxisCount = std::size(kAxes);

constexpr std::size_t axis_index(Axis a) {
  return static_cast<std::size_t>(a);
}
constexpr std::string_view axis_name(Axis a) {
  return kAxes[axis_index(a)].name;
}

namespace detail {
constexpr bool axes_in_enum_order() {
  for (std::size_t i = 0; i < kAxisCount; ++i)
    if (axis_index(kAxes[i].axis) != i) return false;
  return axis_index(Axis::Pp) + 1 == kAxisCount;
}
}  // namespace detail
static_assert(detail::axes_in_enum_order(), "kAxes: one row per Axis enumerator, in enum order");

}  // namespace toposweep
