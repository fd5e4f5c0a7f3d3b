#pragma once
// Per-dimension bandwidth allocation of a multi-dimensional network (LIBRA's question, docs/optimizers.md
// §2.2): choose bw_k to minimise the communication time of a workload, or time x cost, under a
// total-bandwidth budget, a cost budget, per-dimension bounds and an optional ordering.
//
// Exactness: with y_k = ln bw_k, time (sum over operations of max_k or sum_k size_k/bw_k) and
// cost (sum_k N unit_k bw_k) are posynomials, so the problem is a geometric program, convex in
// y. It is solved by the ellipsoid method in y, which carries a certificate: every objective step
// gives a lower bound f(y) - sqrt(g'Pg) on the optimum, and the solver stops when the best value
// is within `relative_tolerance` of the best lower bound. The reported gap is that certificate.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "toposweep/opt/hierarchical_traffic.hpp"

namespace toposweep::opt {

enum class CommTimeModel { Pipelined, Sequential };  // max_k time_k vs sum_k time_k
enum class AllocationObjective { Time, TimeTimesCost };

const char* comm_time_model_name(CommTimeModel m);             // "pipelined" / "sequential"
const char* allocation_objective_name(AllocationObjective o);  // "time" / "time_x_cost"

struct BandwidthProblem {
  std::vector<HierarchicalComm> workload;
  std::size_t dim_count = 0;
  double npus = 1;                 // N: every dimension costs N * bw_k * unit_price[k]
  std::vector<double> unit_price;  // US$ per (byte/s) of per-NPU bandwidth, one per dimension
  CommTimeModel model = CommTimeModel::Pipelined;
  AllocationObjective objective = AllocationObjective::Time;
  std::optional<double> total_bandwidth_Bps;  // sum_k bw_k <= this
  std::optional<double> cost_budget_usd;      // N sum_k unit_k bw_k <= this
  std::vector<double> lower_Bps;              // empty or one per dimension (0 = none)
  std::vector<double> upper_Bps;              // empty or one per dimension (0 or inf = none)
  bool descending = false;                    // ordering: bw_0 >= bw_1 >= ... (faster low dimensions)
  double relative_tolerance = 1e-9;           // certified bound on (f - f*) / f* for the objective
};

struct BandwidthAllocation {
  std::vector<double> dim_bandwidth_Bps;
  double time_s = 0;  // communication time of the workload under `model`
  double cost_usd = 0;
  double objective = 0;      // time_s or time_s * cost_usd
  double certified_gap = 0;  // relative: objective <= (1 + gap) * optimum
  std::uint32_t iterations = 0;
  // The equal split of the same budget (bw_k all equal, as large as the budgets allow).
  std::vector<double> baseline_bandwidth_Bps;
  double baseline_time_s = 0;
  double baseline_cost_usd = 0;
  double baseline_objective = 0;
  bool baseline_within_bounds = true;
  double gain = 1;  // baseline_objective / objective
};

// Communication time of the workload for given per-dimension bandwidths.
double workload_comm_time(const BandwidthProblem& problem, const std::vector<double>& bw);
double allocation_cost(const BandwidthProblem& problem, const std::vector<double>& bw);

// Throws BadInput (naming the optimize.* key) when no budget bounds a dimension, bounds
// contradict each other or the ordering, or the budgets are below the minimum network.
BandwidthAllocation allocate_bandwidth(const BandwidthProblem& problem);

}  // namespace toposweep::opt
