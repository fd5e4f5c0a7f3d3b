#pragma once
// The result of evaluating one design point: what the sweep stores, one row per point.
// Contract between the point evaluator and the sweep/HDF5 writer: a fixed set of SI fields.
#include <cstdint>
#include <limits>
#include <string>

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
  double samples_per_s = nan;       // global batch / iteration time
  double network_bisection_Bps = nan;
  // The strategy actually simulated (after optimization when the point asks for it).
  std::uint32_t dp = 0, tp = 0, pp = 0, microbatches = 0;
  std::uint32_t optimizer_rounds = 0;  // 0 when no optimizer ran
};

}  // namespace toposweep
