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

std::optional<double> result_field(const PointRecord& r, const std::string& f) {
  const PointResult& x = r.result;
  if (f == "iteration_time_s") return x.iteration_time_s;
  if (f == "compute_time_s") return x.compute_time_s;
  if (f == "exposed_comm_time_s") return x.exposed_comm_time_s;
  if (f == "bubble_time_s") return x.bubble_time_s;
  if (f == "cost_usd") return x.cost_usd;
  if (f == "memory_per_gpu_bytes") return x.memory_per_gpu_bytes;
  if (f == "samples_per_s") return x.samples_per_s;
  if (f == "network_bisection_Bps") return x.network_bisection_Bps;
  if (f == "dp") return x.dp;
  if (f == "tp") return x.tp;
  if (f == "pp") return x.pp;
  if (f == "microbatches") return x.microbatches;
  if (f == "optimizer_rounds") return x.optimizer_rounds;
  if (f == "index") return static_cast<double>(r.index);
  if (f == "status") return static_cast<double>(x.status);
  return std::nullopt;
}

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
  std::vector<std::string> out = {"index",
                                  "subspace",
                                  "status",
                                  "iteration_time_s",
                                  "compute_time_s",
                                  "exposed_comm_time_s",
                                  "bubble_time_s",
                                  "cost_usd",
                                  "memory_per_gpu_bytes",
                                  "samples_per_s",
                                  "network_bisection_Bps",
                                  "dp",
                                  "tp",
                                  "pp",
                                  "microbatches",
                                  "optimizer_rounds"};
  for (const auto& a : space.axes()) out.push_back(a.key);
  return out;
}

std::vector<double> field_column(const Space& space, const std::vector<PointRecord>& rows,
                                 const std::string& field) {
  std::vector<double> out(rows.size(), kNaN);
  if (result_field(PointRecord{}, field)) {
    for (std::size_t i = 0; i < rows.size(); ++i) out[i] = *result_field(rows[i], field);
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

std::vector<std::uint64_t> frontier_indices(const Space& space, const std::vector<PointRecord>& rows,
                                            const std::vector<frontier::Objective>& objectives) {
  std::vector<std::size_t> all(rows.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  return frontier_indices(space, rows, all, objectives);
}

}  // namespace toposweep::sweep
