#pragma once
// Printing sweep results for people (aligned tables), scripts (CSV) and --json.
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "toposweep/frontier/pareto.hpp"
#include "toposweep/sweep/journal.hpp"
#include "toposweep/sweep/space.hpp"

namespace toposweep::sweep {

// A CSV field: quoted (with doubled quotes) when it holds a comma, a quote or a newline.
std::string csv_quote(const std::string& s);

// One row per point: index, sub-space, each axis value the point has, then the objectives.
void print_points_table(std::ostream& os, const Space& space, const std::vector<PointRecord>& rows,
                        const std::vector<frontier::Objective>& objectives, bool csv);
nlohmann::json points_json(const Space& space, const std::vector<PointRecord>& rows,
                           const std::vector<frontier::Objective>& objectives);

// `sweep --dry-run`: size, sub-spaces, axes and `sample` points spread evenly over the space.
void print_dry_run(std::ostream& os, const Space& space, std::size_t sample);
nlohmann::json dry_run_json(const Space& space, std::size_t sample);
std::vector<std::uint64_t> sample_indices(std::uint64_t size, std::size_t sample);

}  // namespace toposweep::sweep
