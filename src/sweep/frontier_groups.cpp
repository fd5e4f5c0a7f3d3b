#include "toposweep/sweep/frontier_groups.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include "toposweep/sweep/columns.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"

namespace toposweep::sweep {

std::string parse_frontier_by(const std::string& text, const std::string& where) {
  const std::string v(trim(text));
  if (v == kFrontierByModel || v == kFrontierPooled) return v;
  throw BadInput("'" + v + "' is not a frontier grouping: use " + kFrontierByModel +
                     " (one frontier per model) or " + kFrontierPooled + " (every point on one frontier)",
                 where);
}

PointGroups::PointGroups(const Space& space, const std::string& key) : space_(&space) {
  key_ = key.empty() ? std::string(kFrontierPooled) : key;
  pooled_ = key_ == kFrontierPooled;
  if (pooled_) {
    labels_ = {""};
    return;
  }
  for (std::size_t a = 0; a < space.axes().size(); ++a)
    if (space.axes()[a].key == key_ && space.axes()[a].kind == AxisKind::Plain) axis_ = a, is_axis_ = true;
  const auto base = space.base().entries().find(key_);
  const std::string base_value = base == space.base().entries().end() ? "" : base->second.value;
  // The base value counts only if some point takes it: a sub-space that does not sweep the key.
  bool base_used = !is_axis_;
  for (const auto& s : space.subspaces()) {
    bool sweeps = false;
    for (const auto& a : s.axes) sweeps = sweeps || (is_axis_ && a.axis == axis_);
    base_used = base_used || !sweeps;
  }
  std::map<std::string, std::uint32_t> id;
  if (base_used) id[base_value] = 0;
  if (is_axis_)
    for (const auto& v : space.axes()[axis_].values) id[v] = 0;
  for (auto& [label, g] : id) {
    g = static_cast<std::uint32_t>(labels_.size());
    labels_.push_back(label);
  }
  base_group_ = base_used ? id.at(base_value) : 0;
  if (is_axis_)
    for (const auto& v : space.axes()[axis_].values) group_of_value_.push_back(id.at(v));
}

std::uint32_t PointGroups::of(const PointCoordinates& c) const {
  if (pooled_) return 0;
  if (is_axis_ && c.axis_value[axis_] != kAbsentAxis) return group_of_value_[c.axis_value[axis_]];
  return base_group_;
}

std::uint32_t PointGroups::of(std::uint64_t index) const {
  return pooled_ ? 0 : of(space_->decode(index));
}

std::vector<std::uint32_t> PointGroups::of_rows(const std::vector<PointRecord>& rows) const {
  std::vector<std::uint32_t> out(rows.size(), 0);
  if (!pooled_)
    for (std::size_t i = 0; i < rows.size(); ++i) out[i] = of(rows[i].index);
  return out;
}

std::vector<std::uint64_t> grouped_frontier_indices(const Space& space, const std::vector<PointRecord>& rows,
                                                    const std::vector<frontier::Objective>& objectives,
                                                    const PointGroups& groups) {
  if (groups.size() <= 1) return frontier_indices(space, rows, objectives);
  std::vector<std::vector<std::size_t>> members(groups.size());
  const auto ids = groups.of_rows(rows);
  for (std::size_t i = 0; i < rows.size(); ++i) members[ids[i]].push_back(i);
  std::vector<std::uint64_t> out;
  for (const auto& subset : members) {
    if (subset.empty()) continue;
    const auto front = frontier_indices(space, rows, subset, objectives);
    out.insert(out.end(), front.begin(), front.end());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace toposweep::sweep
