#pragma once
// The result of evaluating one design point: what the sweep stores, one row per point.
// Contract between the point evaluator and the sweep/HDF5 writer: a fixed set of SI fields,
// declared once in kResultFields below. The /points compound type and its `units` attribute, the
// journal record, the field names objectives may use, the JSON of sweep rows and the NaN rule for
// rows that were not evaluated all follow that table (docs/hdf5-schema.md, "Declaring a field").
// Adding a metric: a member of PointResult, a row of kResultFields, and the code computing it.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace toposweep {

enum class PointStatus : std::uint8_t { Evaluated = 0, Infeasible = 1, Failed = 2 };

struct PointResult {
  PointStatus status = PointStatus::Failed;
  std::string message;  // why infeasible / failed; empty when evaluated
  static constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  double iteration_time_s = nan;
  double compute_time_s = nan;
  double exposed_comm_time_s = nan;
  double bubble_time_s = nan;
  double cost_usd = nan;
  double memory_per_gpu_bytes = nan;
  double samples_per_s = nan;  // global batch / iteration time
  double network_bisection_Bps = nan;
  // The strategy actually simulated (after optimization when the point asks for it).
  // etp: the routed experts' tensor-parallel degree (strategy.etp resolved: tp unless the experts
  // fold over the TP ranks; tp for dense models).
  std::uint32_t dp = 0, tp = 0, pp = 0, cp = 0, ep = 0, etp = 0, microbatches = 0;
  std::uint32_t optimizer_rounds = 0;  // 0 when no optimizer ran
};

// The row of a design that cannot exist (an InvalidDesign saying `what`, about `where`): what a
// sweep records, whether the evaluator threw the error or returned the row (evaluate_row).
inline PointResult invalid_design_result(std::string_view what, std::string_view where) {
  PointResult r;
  r.status = PointStatus::Infeasible;
  r.message = std::string(what) + " (" + std::string(where) + ")";
  return r;
}

// How a result field is stored in /points (little-endian) and in the journal (host order).
enum class FieldType : std::uint8_t { F64, U32 };

// Where a field shows in the JSON of an evaluated sweep row (`sweep --json`, `frontier --json`).
enum class RowJson : std::uint8_t { Omit, Top, Strategy };

struct ResultField {
  std::string_view name;               // /points field, JSON key, objective name
  std::string_view unit;               // its entry in /points' `units` attribute ("1": a count)
  double PointResult::*f64 = nullptr;  // exactly one of f64 and u32 is set
  std::uint32_t PointResult::*u32 = nullptr;
  bool nan_unless_evaluated = false;  // the schema promises NaN on rows with status != 0
  RowJson row_json = RowJson::Omit;

  constexpr FieldType type() const { return f64 ? FieldType::F64 : FieldType::U32; }
  constexpr std::size_t size() const { return f64 ? sizeof(double) : sizeof(std::uint32_t); }
  constexpr double as_double(const PointResult& r) const {
    return f64 ? r.*f64 : static_cast<double>(r.*u32);
  }
};

// Every result field, in /points and journal order (after index, subspace, the axes and status).
inline constexpr ResultField kResultFields[] = {
    {"iteration_time_s", "s", &PointResult::iteration_time_s, nullptr, true, RowJson::Top},
    {"compute_time_s", "s", &PointResult::compute_time_s, nullptr, true},
    {"exposed_comm_time_s", "s", &PointResult::exposed_comm_time_s, nullptr, true},
    {"bubble_time_s", "s", &PointResult::bubble_time_s, nullptr, true},
    {"cost_usd", "USD", &PointResult::cost_usd, nullptr, false, RowJson::Top},
    {"memory_per_gpu_bytes", "B", &PointResult::memory_per_gpu_bytes},
    {"samples_per_s", "1/s", &PointResult::samples_per_s, nullptr, true},
    {"network_bisection_Bps", "B/s", &PointResult::network_bisection_Bps},
    {"dp", "1", nullptr, &PointResult::dp, false, RowJson::Strategy},
    {"tp", "1", nullptr, &PointResult::tp, false, RowJson::Strategy},
    {"pp", "1", nullptr, &PointResult::pp, false, RowJson::Strategy},
    {"cp", "1", nullptr, &PointResult::cp, false, RowJson::Strategy},
    {"ep", "1", nullptr, &PointResult::ep, false, RowJson::Strategy},
    {"etp", "1", nullptr, &PointResult::etp, false, RowJson::Strategy},
    {"microbatches", "1", nullptr, &PointResult::microbatches, false, RowJson::Strategy},
    {"optimizer_rounds", "1", nullptr, &PointResult::optimizer_rounds},
};

// The row of `name`, or nullptr.
constexpr const ResultField* find_result_field(std::string_view name) {
  for (const ResultField& f : kResultFields)
    if (f.name == name) return &f;
  return nullptr;
}

// Calls f(std::integral_constant<std::size_t, I>{}) for every row I of kResultFields, unrolled at
// compile time, so that `kResultFields[I]` is a constant there (hot loops: the journal record).
template <class F>
constexpr void for_each_result_field(F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (f(std::integral_constant<std::size_t, I>{}), ...);
  }
  (std::make_index_sequence<std::size(kResultFields)>{});
}

namespace detail {
// Converts to anything: counts the members of an aggregate by how many it can be built from.
struct AnyMember {
  template <class T>
  operator T() const;  // only named in unevaluated operands
};
template <class T, class... Members>
constexpr std::size_t aggregate_members() {
  if constexpr (requires { T{Members{}..., AnyMember{}}; })
    return aggregate_members<T, Members..., AnyMember>();
  else
    return sizeof...(Members);
}

constexpr bool result_fields_are_well_formed() {
  for (std::size_t i = 0; i < std::size(kResultFields); ++i) {
    const ResultField& f = kResultFields[i];
    if ((f.f64 == nullptr) == (f.u32 == nullptr) || f.name.empty() || f.unit.empty()) return false;
    if (f.nan_unless_evaluated && !f.f64) return false;           // NaN needs a double
    if (f.row_json == RowJson::Strategy && !f.u32) return false;  // strategy: counts
    if (f.name == "index" || f.name == "subspace" || f.name == "status") return false;
    for (std::size_t j = 0; j < i; ++j) {
      const ResultField& g = kResultFields[j];
      if (g.name == f.name || (f.f64 && g.f64 == f.f64) || (f.u32 && g.u32 == f.u32)) return false;
    }
  }
  return true;
}
}  // namespace detail

static_assert(detail::result_fields_are_well_formed(),
              "kResultFields: one accessor per row, a unit, unique names, NaN only for doubles");
static_assert(detail::aggregate_members<PointResult>() == 2 + std::size(kResultFields),
              "every PointResult member but status and message needs its row in kResultFields");

}  // namespace toposweep
