#include "toposweep/opt/bandwidth_allocation.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "toposweep/util/error.hpp"

namespace toposweep::opt {
namespace {

HierarchicalComm allreduce_over(std::vector<DimSpan> dims, double bytes) {
  HierarchicalComm c;
  c.op = CollectiveOp::AllReduce;
  c.bytes = bytes;
  c.dims = std::move(dims);
  return c;
}

TEST(HierarchicalTraffic, AllReduceShrinksTheMessageDimensionByDimension) {
  // 4 x 8 x 4, 1 GB: size_0 = 2*1e9*3/4, m_1 = 2.5e8, size_1 = 2*2.5e8*7/8, m_2 = 3.125e7,
  // size_2 = 2*3.125e7*3/4.
  const auto s = per_dimension_bytes(allreduce_over({{0, 4}, {1, 8}, {2, 4}}, 1e9), 3);
  EXPECT_DOUBLE_EQ(s[0], 1.5e9);
  EXPECT_DOUBLE_EQ(s[1], 4.375e8);
  EXPECT_DOUBLE_EQ(s[2], 4.6875e7);
}

TEST(HierarchicalTraffic, SubsetOfDimensionsAndOtherOps) {
  HierarchicalComm rs = allreduce_over({{1, 2}, {3, 32}}, 64e6);
  rs.op = CollectiveOp::ReduceScatter;
  auto s = per_dimension_bytes(rs, 4);
  EXPECT_DOUBLE_EQ(s[0], 0);
  EXPECT_DOUBLE_EQ(s[1], 32e6);            // 64e6 * 1/2
  EXPECT_DOUBLE_EQ(s[3], 32e6 * 31 / 32);  // m_3 = 32e6
  HierarchicalComm a2a = rs;
  a2a.op = CollectiveOp::AllToAll;
  s = per_dimension_bytes(a2a, 4);
  EXPECT_DOUBLE_EQ(s[1], 32e6);
  EXPECT_DOUBLE_EQ(s[3], 64e6 * 31 / 32);
  HierarchicalComm p2p = rs;
  p2p.point_to_point = true;
  s = per_dimension_bytes(p2p, 4);
  EXPECT_DOUBLE_EQ(s[1], 64e6);
  EXPECT_DOUBLE_EQ(s[3], 64e6);
  EXPECT_THROW(per_dimension_bytes(rs, 3), BadInput);
}

BandwidthProblem three_dim_problem() {
  BandwidthProblem p;
  p.dim_count = 3;
  p.npus = 128;
  p.unit_price = {2.0e-9, 4.0e-9, 7.8e-9};
  p.workload = {allreduce_over({{0, 4}, {1, 8}, {2, 4}}, 1e9)};
  p.total_bandwidth_Bps = 300e9;
  return p;
}

TEST(BandwidthAllocation, PipelinedSingleAllReduceEqualisesTimes) {
  // docs/optimizers.md, bandwidth allocation: bw_k = B size_k / sum_j size_j.
  const auto p = three_dim_problem();
  const auto r = allocate_bandwidth(p);
  const double sizes[3] = {1.5e9, 4.375e8, 4.6875e7};
  const double total = sizes[0] + sizes[1] + sizes[2];
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(r.dim_bandwidth_Bps[k], 300e9 * sizes[k] / total, 300e9 * 1e-6);
  EXPECT_NEAR(r.time_s, total / 300e9, total / 300e9 * 1e-8);
  // Equal split: time = max_k size_k / 100e9 = 1.5e9 / 1e11.
  EXPECT_NEAR(r.baseline_time_s, 0.015, 1e-15);
  EXPECT_NEAR(r.gain, 0.015 / (total / 300e9), 1e-6);
  EXPECT_LE(r.certified_gap, 1e-8);
}

TEST(BandwidthAllocation, SequentialModelFollowsSquareRootRule) {
  // min sum S_k/bw_k s.t. sum bw_k = B: KKT gives bw_k = B sqrt(S_k) / sum sqrt(S_j) and
  // T* = (sum sqrt S_k)^2 / B.
  auto p = three_dim_problem();
  p.model = CommTimeModel::Sequential;
  const auto r = allocate_bandwidth(p);
  const double S[3] = {1.5e9, 4.375e8, 4.6875e7};
  double root_sum = 0;
  for (double s : S) root_sum += std::sqrt(s);
  for (int k = 0; k < 3; ++k)
    EXPECT_NEAR(r.dim_bandwidth_Bps[k], 300e9 * std::sqrt(S[k]) / root_sum, 300e9 * 1e-5);
  EXPECT_NEAR(r.time_s, root_sum * root_sum / 300e9, 1e-9 * r.time_s);
}

TEST(BandwidthAllocation, CostBudgetWithPricesFollowsWeightedSquareRootRule) {
  // Sequential, cost budget only: min sum S_k/bw_k s.t. N sum u_k bw_k = C gives
  // bw_k = sqrt(S_k/u_k) * C / (N sum_j sqrt(S_j u_j)).
  auto p = three_dim_problem();
  p.model = CommTimeModel::Sequential;
  p.total_bandwidth_Bps.reset();
  p.cost_budget_usd = 1.0e5;
  const auto r = allocate_bandwidth(p);
  const double S[3] = {1.5e9, 4.375e8, 4.6875e7};
  double denom = 0;
  for (int k = 0; k < 3; ++k) denom += std::sqrt(S[k] * p.unit_price[k]);
  for (int k = 0; k < 3; ++k) {
    const double expected = std::sqrt(S[k] / p.unit_price[k]) * 1.0e5 / (128 * denom);
    EXPECT_NEAR(r.dim_bandwidth_Bps[k], expected, expected * 1e-5);
  }
  EXPECT_NEAR(r.cost_usd, 1.0e5, 1e-3);
}

TEST(BandwidthAllocation, TimeTimesCostHandWorkedTwoDimensions) {
  // Sequential, 2 dims, dim 1 fixed at beta = 10 GB/s: f(b0) = (S0/b0 + S1/beta)(u0 b0 + u1 beta)
  // is minimised at b0 = beta sqrt(S0 u1 / (S1 u0)) = 10e9 * sqrt(4*8/(1*2)) = 40e9.
  // Then T = 4e9/4e10 + 1e9/1e10 = 0.2 s and C = N (2e-9*4e10 + 8e-9*1e10) = N * 160.
  BandwidthProblem p;
  p.dim_count = 2;
  p.npus = 16;
  p.unit_price = {2e-9, 8e-9};
  HierarchicalComm a;
  a.point_to_point = true;
  a.bytes = 4e9;
  a.dims = {{0, 2}};
  HierarchicalComm b = a;
  b.bytes = 1e9;
  b.dims = {{1, 2}};
  p.workload = {a, b};
  p.model = CommTimeModel::Sequential;
  p.objective = AllocationObjective::TimeTimesCost;
  p.total_bandwidth_Bps = 100e9;
  p.lower_Bps = {0, 10e9};
  p.upper_Bps = {0, 10e9};
  const auto r = allocate_bandwidth(p);
  EXPECT_NEAR(r.dim_bandwidth_Bps[0], 40e9, 40e9 * 1e-4);
  EXPECT_DOUBLE_EQ(r.dim_bandwidth_Bps[1], 10e9);
  // Near a smooth optimum the variables converge like the square root of the objective gap.
  EXPECT_NEAR(r.time_s, 0.2, 0.2 * 1e-4);
  EXPECT_NEAR(r.cost_usd, 16 * 160.0, 16 * 160.0 * 1e-4);
  EXPECT_NEAR(r.objective, 0.2 * 16 * 160.0, 0.2 * 16 * 160 * 1e-8);
}

TEST(BandwidthAllocation, TimeTimesCostCornerWhenOrderingBinds) {
  // Pipelined would be scale-free; here sequential, S0 = S1 = 1 GB, u = (1, 4): unconstrained
  // the best ratio b0/b1 = sqrt(S0 u1 / (S1 u0)) = 2, but b1 >= B/2 and b0 + b1 <= B force
  // b0 = b1 = B/2: T = 4e9/B, C = N * 2.5e-9 * B, T*C = 10 N.
  BandwidthProblem p;
  p.dim_count = 2;
  p.npus = 8;
  p.unit_price = {1e-9, 4e-9};
  HierarchicalComm a;
  a.point_to_point = true;
  a.bytes = 1e9;
  a.dims = {{0, 2}, {1, 2}};
  p.workload = {a};
  p.model = CommTimeModel::Sequential;
  p.objective = AllocationObjective::TimeTimesCost;
  p.total_bandwidth_Bps = 200e9;
  p.lower_Bps = {0, 100e9};
  const auto r = allocate_bandwidth(p);
  EXPECT_NEAR(r.dim_bandwidth_Bps[0], 100e9, 1e9 * 1e-3);
  EXPECT_NEAR(r.dim_bandwidth_Bps[1], 100e9, 1e9 * 1e-3);
  EXPECT_NEAR(r.objective, 80.0, 80.0 * 1e-7);
}

TEST(BandwidthAllocation, DescendingOrderingPoolsDimensions) {
  // Pipelined, one P2P over both dims with more bytes on dim 1: unconstrained bw_1 > bw_0; with
  // bw_0 >= bw_1 the optimum of max(S0/b0, S1/b1) under b0 + b1 = B is b0 = b1 = B/2.
  BandwidthProblem p;
  p.dim_count = 2;
  p.npus = 4;
  p.unit_price = {1e-9, 1e-9};
  HierarchicalComm a;
  a.op = CollectiveOp::AllToAll;
  a.bytes = 1e9;
  a.dims = {{0, 2}, {1, 4}};  // sizes 0.5e9 and 0.75e9
  p.workload = {a};
  p.total_bandwidth_Bps = 100e9;
  p.descending = true;
  const auto r = allocate_bandwidth(p);
  EXPECT_NEAR(r.dim_bandwidth_Bps[0], 50e9, 50e9 * 1e-6);
  EXPECT_NEAR(r.dim_bandwidth_Bps[1], 50e9, 50e9 * 1e-6);
  EXPECT_NEAR(r.time_s, 0.75e9 / 50e9, 1e-9);
  p.descending = false;
  const auto free = allocate_bandwidth(p);  // equal times: b = B * (0.5, 0.75) / 1.25
  EXPECT_NEAR(free.dim_bandwidth_Bps[1], 60e9, 60e9 * 1e-6);
}

TEST(BandwidthAllocation, BadInputs) {
  auto p = three_dim_problem();
  p.lower_Bps = {200e9, 200e9, 0};
  EXPECT_THROW(allocate_bandwidth(p), BadInput);  // sum of lower bounds above the budget
  p = three_dim_problem();
  p.lower_Bps = {0, 50e9, 0};
  p.upper_Bps = {0, 40e9, 0};
  EXPECT_THROW(allocate_bandwidth(p), BadInput);  // contradictory bounds
  p = three_dim_problem();
  p.descending = true;
  p.lower_Bps = {0, 0, 50e9};
  p.upper_Bps = {40e9, 0, 0};
  EXPECT_THROW(allocate_bandwidth(p), BadInput);  // ordering contradicts bounds
  p = three_dim_problem();
  p.lower_Bps = {10e9, 10e9, 10e9};
  p.cost_budget_usd = 128 * 10e9 * (2e-9 + 4e-9 + 7.8e-9) * 0.5;
  EXPECT_THROW(allocate_bandwidth(p), BadInput);  // cost budget below the minimum network
  p = three_dim_problem();
  p.total_bandwidth_Bps.reset();
  EXPECT_THROW(allocate_bandwidth(p), BadInput);  // nothing bounds the bandwidth
}

TEST(BandwidthAllocation, TightBudgetReturnsTheOnlyFeasiblePoint) {
  auto p = three_dim_problem();
  p.lower_Bps = {100e9, 100e9, 100e9};
  const auto r = allocate_bandwidth(p);
  for (double v : r.dim_bandwidth_Bps) EXPECT_DOUBLE_EQ(v, 100e9);
}

}  // namespace
}  // namespace toposweep::opt
