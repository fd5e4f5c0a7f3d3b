#pragma once
// Columns of sweep results by field name, and the frontier of a set of results: the glue between
// PointRecords (what the journal and the file hold) and the pure Pareto algorithms.
#include <cstdint>
#include <string>
#include <vector>

#include "toposweep/frontier/pareto.hpp"
#include "toposweep/sweep/journal.hpp"
#include "toposweep/sweep/space.hpp"

namespace toposweep::sweep {

// One value per row for a /points field: a result field (iteration_time_s, cost_usd, dp, ...),
// index, status or subspace; or an axis key, giving the axis value in SI units (NaN when the
// value is not numeric or the row's sub-space does not sweep that axis). Unknown field: BadInput.
std::vector<double> field_column(const Space& space, const std::vector<PointRecord>& rows,
                                 const std::string& field);

// Indices (the rows' `index` values, ascending) of the Pareto-optimal rows among those with
// status 0.
std::vector<std::uint64_t> frontier_indices(const Space& space, const std::vector<PointRecord>& rows,
                                            const std::vector<frontier::Objective>& objectives);
// Same, restricted to the rows at `subset` (positions into rows).
std::vector<std::uint64_t> frontier_indices(const Space& space, const std::vector<PointRecord>& rows,
                                            const std::vector<std::size_t>& subset,
                                            const std::vector<frontier::Objective>& objectives);

// Positions in `rows` (ascending by index) of the rows whose index is in `indices` (ascending),
// in order: the rows of a frontier. An index no row has is skipped.
std::vector<std::size_t> frontier_positions(const std::vector<PointRecord>& rows,
                                            const std::vector<std::uint64_t>& indices);
// Copies of those rows.
std::vector<PointRecord> frontier_rows(const std::vector<PointRecord>& rows,
                                       const std::vector<std::uint64_t>& indices);

// The names field_column accepts, for messages and --help.
std::vector<std::string> known_fields(const Space& space);

}  // namespace toposweep::sweep
