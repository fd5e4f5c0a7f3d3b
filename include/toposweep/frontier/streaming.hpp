#pragma once
// A Pareto frontier maintained one point at a time, for sweeps too large to keep every point:
// each rank offers the points it evaluates and keeps only the non-dominated ones. Same rules as
// pareto_front: all objectives minimised (negate maximised ones first), equal rows stay together,
// a row with a NaN objective never takes part. Offering costs O(F·d) for a frontier of F rows,
// which is what makes this worthwhile only when the frontier is small compared with the points.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace toposweep::frontier {

class StreamingFrontier {
 public:
  explicit StreamingFrontier(std::size_t dims) : dims_(dims) {}

  // Offer row `id` with its (minimised) objective values; returns true when it joined the
  // frontier (then every row it dominates has left). `values.size()` must equal dims().
  bool offer(std::uint64_t id, std::span<const double> values);

  std::size_t dims() const { return dims_; }
  std::size_t size() const { return ids_.size(); }
  // Ids currently on the frontier, in no particular order.
  const std::vector<std::uint64_t>& ids() const { return ids_; }

 private:
  std::size_t dims_;
  std::vector<std::uint64_t> ids_;
  std::vector<double> values_;  // row-major, dims_ per id
};

}  // namespace toposweep::frontier
