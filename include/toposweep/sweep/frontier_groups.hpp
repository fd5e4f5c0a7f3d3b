#pragma once
// Frontiers per model. Iteration times of different models are not alternatives to each other (a
// ResNet-50 step is not a cheaper way to train GPT-3), so by default a point is on a sweep's
// frontier when no point *of the same model* dominates it: /frontier is the union of the
// per-model frontiers. `sweep.frontier_by = none` pools every point into one frontier instead.
#include <cstdint>
#include <string>
#include <vector>

#include "toposweep/frontier/pareto.hpp"
#include "toposweep/sweep/journal.hpp"
#include "toposweep/sweep/space.hpp"

namespace toposweep::sweep {

// The values of sweep.frontier_by (and of the /frontier attribute group_by).
inline constexpr const char* kFrontierByModel = "model.name";
inline constexpr const char* kFrontierPooled = "none";

// Check a sweep.frontier_by value: "model.name" or "none". BadInput naming `where` otherwise.
std::string parse_frontier_by(const std::string& text, const std::string& where);

// Numbers the values one configuration key takes over the points of a space. A point's value is
// its axis value when its sub-space sweeps the key, else the base configuration's value ("" when
// the base does not set it), so a sub-space that does not sweep model.name belongs to the base
// model. Equal texts are one group whatever their origin. Groups are numbered in the order of
// their labels. With the key "none" (or "") every point is in one group.
// Keeps a pointer to `space`, which must outlive it.
class PointGroups {
 public:
  PointGroups(const Space& space, const std::string& key);

  bool pooled() const { return pooled_; }
  // "model.name" or "none": what /frontier's group_by attribute records.
  const std::string& key() const { return key_; }
  // Distinct values some point of the space takes (1 when pooled).
  std::size_t size() const { return labels_.size(); }
  const std::string& label(std::uint32_t group) const { return labels_.at(group); }
  std::uint32_t of(const PointCoordinates& c) const;
  std::uint32_t of(std::uint64_t index) const;
  // One group id per row.
  std::vector<std::uint32_t> of_rows(const std::vector<PointRecord>& rows) const;

 private:
  const Space* space_;
  std::string key_;
  bool pooled_ = true;
  std::size_t axis_ = 0;  // the key's axis, when it is one
  bool is_axis_ = false;
  std::vector<std::uint32_t> group_of_value_;  // axis position -> group
  std::uint32_t base_group_ = 0;
  std::vector<std::string> labels_;
};

// The union of the Pareto frontiers of each group's status-0 rows: point indices, ascending.
// With one group it is exactly frontier_indices(space, rows, objectives).
std::vector<std::uint64_t> grouped_frontier_indices(const Space& space, const std::vector<PointRecord>& rows,
                                                    const std::vector<frontier::Objective>& objectives,
                                                    const PointGroups& groups);

}  // namespace toposweep::sweep
