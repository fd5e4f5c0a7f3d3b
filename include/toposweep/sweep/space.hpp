#pragma once
// A design space: a base configuration plus named sub-spaces, each the Cartesian product of its
// axes; the space is the union (concatenation) of its sub-spaces, ordered by name. A point is a
// 64-bit index decoded in mixed radix (first axis of a sub-space most significant). Axes are
// global: an axis' value list is the union of the values its sub-spaces use, so a point's axis
// field in /points is a position into one list whatever its sub-space.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "toposweep/util/config.hpp"

namespace toposweep::sweep {

// How an axis value is applied to a point's configuration.
enum class AxisKind {
  Plain,     // set the key to the value
  Strategy,  // "dp4tp2pp1" sets strategy.dp, strategy.tp, strategy.pp
  Optimize,  // sets point.optimize (the optimizer hook)
};

struct Axis {
  std::string key;  // "topology.degree", "strategy", "optimize"
  AxisKind kind = AxisKind::Plain;
  std::vector<std::string> values;  // as written in the space file or generated
};

// The configuration keys an axis writes: its own key for a plain axis, strategy.dp/tp/pp and the
// knobs its values set for the strategy axis, point.optimize for the optimize axis. With
// `positions`, only those values count (what one sub-space's part of a shared axis writes).
std::vector<std::string> keys_written_by(const Axis& axis,
                                         const std::vector<std::uint32_t>* positions = nullptr);
// The (key, value) pairs value `value` of `axis` sets, in keys_written_by order.
std::vector<std::pair<std::string, std::string>> axis_assignments(const Axis& axis, std::size_t value,
                                                                  const std::string& where);

inline constexpr std::uint32_t kAbsentAxis = std::numeric_limits<std::uint32_t>::max();

struct SubSpaceAxis {
  std::size_t axis = 0;                  // into Space::axes()
  std::vector<std::uint32_t> positions;  // into Axis::values, in this sub-space's order
  // Where the sub-space set this axis ("space.ini:12, sub-space a"), the origin its values carry
  // in a point's configuration; empty (a space read back from a results file): "space.NAME".
  std::string origin;
};

struct SubSpace {
  std::string name;
  std::vector<SubSpaceAxis> axes;  // in global axis order; the first is most significant
  std::uint64_t offset = 0;        // index of the sub-space's first point
  std::uint64_t size = 1;
};

// A decoded point: its sub-space and, per global axis, a position or kAbsentAxis.
struct PointCoordinates {
  std::uint32_t subspace = 0;
  std::vector<std::uint32_t> axis_value;
  bool operator==(const PointCoordinates&) const = default;
};

class Space {
 public:
  Space(Config base, std::vector<Axis> axes, std::vector<SubSpace> subspaces);

  std::uint64_t size() const { return size_; }
  const Config& base() const { return base_; }
  const std::vector<Axis>& axes() const { return axes_; }
  const std::vector<SubSpace>& subspaces() const { return subspaces_; }

  PointCoordinates decode(std::uint64_t index) const;  // index < size()
  std::uint64_t encode(const PointCoordinates& c) const;
  // The point's configuration: the base plus what its own sub-space's axes set (origin
  // "space.NAME"), nothing else: a key its sub-space does not set keeps the base value, whatever
  // other sub-spaces sweep, and the keys a generator sets (strategy.dp/tp/pp by `strategy`)
  // belong to that generator.
  Config point_config(std::uint64_t index) const;
  // Turn `cfg` (the base, or the result of an earlier apply_point) into point `index`'s
  // configuration in place: restores the base value of every key some axis writes but the
  // point's sub-space does not, then applies the sub-space's axes. Same result as point_config,
  // without copying the whole base per point.
  void apply_point(std::uint64_t index, Config& cfg) const;
  // "subspace topoopt: topology.degree=4 topology.link_bandwidth=25Gbps ..."
  std::string describe(std::uint64_t index) const;

  // Canonical text of everything that decides the points (sub-spaces, axes, values, the base
  // configuration except sweep.* keys), and its 64-bit FNV-1a hash. A journal records it so a
  // resume against a different space is refused.
  std::string canonical_text() const;
  std::uint64_t fingerprint() const;

 private:
  Config base_;
  std::vector<Axis> axes_;
  std::vector<SubSpace> subspaces_;
  std::uint64_t size_ = 0;
  // assignments_[axis][value]: the (key, value) pairs it sets; restore_[subspace]: the keys
  // other sub-spaces' axes write and this one does not (reset to the base per point).
  std::vector<std::vector<std::vector<std::pair<std::string, std::string>>>> assignments_;
  std::vector<std::vector<std::string>> restore_;
  // written_[subspace][j]: the keys the sub-space's j-th axis writes over its values; those a
  // value does not set (a strategy value without some knob) keep the base configuration's value.
  std::vector<std::vector<std::vector<std::string>>> written_;
};

// Build the space from an effective configuration. Inner keys of [space.NAME] are checked
// against `registry` (the CLI passes all_config_keys()), and so is every value of every axis,
// generated ones included (the key's KeyCheck: units, ranges, names, files); bad keys, malformed
// values, empty lists, duplicate values, malformed generators and a size beyond 2^64-1 throw
// BadInput naming the key and where it was set.
// With no [space.*] section the space is the single base point.
Space parse_space(const Config& config, const KeyRegistry& registry);

// Split an axis value list into alternatives: on '|' for keys whose values are lists themselves
// (topology.dims, topology.dim_bandwidth, topology.dim_latency, topology.strides) or when the
// text holds a '|'; otherwise on ','.
bool is_list_valued_key(const std::string& key);
std::vector<std::string> split_alternatives(const std::string& key, const std::string& text);

std::uint64_t fnv1a64(const std::string& text);

}  // namespace toposweep::sweep
