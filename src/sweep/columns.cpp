#include "toposweep/sweep/columns.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"
#include "toposweep/util/units.hpp"

namespace toposweep::sweep {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::optional<double> si_of(const std::string& v) {
  if (auto x = parse_plain_number(v)) return x;
  for (Quantity q : {Quantity::Bandwidth, Quantity::Size, Quantity::Time}) {
    try {
      return parse_quantity(q, v, "axis value");
    } catch (const BadInput&) {
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> known_fields(const Space& space) {
  std::vector<std::string> out = {"index", "subspace", "status"};
  for (const ResultField& f : kResultFields) out.emplace_back(f.name);
  for (const auto& a : space.axes()) out.push_back(a.key);
  return out;
}

std::vector<double> field_column(const Space& space, const std::vector<PointRecord>& rows,
                                 const std::string& field) {
  std::vector<double> out(rows.size(), kNaN);
  if (const ResultField* f = find_result_field(field)) {
    for (std::size_t i = 0; i < rows.size(); ++i) out[i] = f->as_double(rows[i].result);
    return out;
  }
  if (field == "index") {
    for (std::size_t i = 0; i < rows.size(); ++i) out[i] = static_cast<double>(rows[i].index);
    return out;
  }
  if (field == "status") {
    for (std::size_t i = 0; i < rows.size(); ++i) out[i] = static_cast<double>(rows[i].result.status);
    return out;
  }
  if (field == "subspace") {
    for (std::size_t i = 0; i < rows.size(); ++i) out[i] = space.decode(rows[i].index).subspace;
    return out;
  }
  for (std::size_t a = 0; a < space.axes().size(); ++a) {
    if (space.axes()[a].key != field) continue;
    std::vector<double> si;
    for (const auto& v : space.axes()[a].values) si.push_back(si_of(v).value_or(kNaN));
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto pos = space.decode(rows[i].index).axis_value[a];
      out[i] = pos == kAbsentAxis ? kNaN : si[pos];
    }
    return out;
  }
  throw BadInput("unknown field '" + field + "' (fields: " + join(known_fields(space), ", ") + ")",
                 "objectives");
}

std::vector<std::uint64_t> frontier_indices(const Space& space, const std::vector<PointRecord>& rows,
                                            const std::vector<std::size_t>& subset,
                                            const std::vector<frontier::Objective>& objectives) {
  std::vector<PointRecord> chosen;
  chosen.reserve(subset.size());
  for (std::size_t i : subset)
    if (rows[i].result.status == PointStatus::Evaluated) chosen.push_back(rows[i]);
  std::vector<std::vector<double>> columns;
  for (const auto& o : objectives) columns.push_back(field_column(space, chosen, o.field));
  const auto front = frontier::pareto_front(frontier::oriented_values(columns, objectives));
  std::vector<std::uint64_t> out;
  for (std::size_t r : front) out.push_back(chosen[r].index);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::size_t> frontier_positions(const std::vector<PointRecord>& rows,
                                            const std::vector<std::uint64_t>& indices) {
  std::vector<std::size_t> out;
  out.reserve(indices.size());
  auto from = rows.begin();
  for (std::uint64_t index : indices) {
    from = std::lower_bound(from, rows.end(), index,
                            [](const PointRecord& r, std::uint64_t i) { return r.index < i; });
    if (from == rows.end()) break;
    if (from->index == index) out.push_back(static_cast<std::size_t>(from - rows.begin()));
  }
  return out;
}

std::vector<PointRecord> frontier_rows(const std::vector<PointRecord>& rows,
                                       const std::vector<std::uint64_t>& indices) {
  std::vector<PointRecord> out;
  for (std::size_t i : frontier_positions(rows, indices)) out.push_back(rows[i]);
  return out;
}

std::vector<std::uint64_t> frontier_indices(const Space& space, const std::vector<PointRecord>& rows,
                                            const std::vector<frontier::Objective>& objectives) {
  std::vector<std::size_t> all(rows.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  return frontier_indices(space, rows, all, objectives);
}

}  // namespace toposweep::sweep
