#include "ellipsoid.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace toposweep::opt::detail {

EllipsoidResult minimize_ellipsoid(const ConvexOracle& oracle, const std::vector<double>& lo,
                                   const std::vector<double>& hi, double absolute_tolerance,
                                   std::uint32_t max_iterations) {
  const std::size_t n = lo.size();
  const double nd = static_cast<double>(n);
  std::vector<double> c(n), P(n * n, 0.0), grad(n), Pg(n);
  for (std::size_t i = 0; i < n; ++i) {
    c[i] = 0.5 * (lo[i] + hi[i]);
    const double half = std::max(0.5 * (hi[i] - lo[i]), 1e-12);
    P[i * n + i] = nd * half * half;  // the ball through the box's corners
  }
  EllipsoidResult result;
  result.value = std::numeric_limits<double>::infinity();
  result.lower_bound = -std::numeric_limits<double>::infinity();

  for (std::uint32_t it = 0; it < max_iterations; ++it) {
    result.iterations = it + 1;
    double violation = oracle.worst_constraint(c, grad);
    double alpha = 0;  // depth of the cut, in units of the ellipsoid's width along grad
    bool objective_step = violation <= 0;
    double fx = 0;
    if (objective_step) {
      fx = oracle.objective(c, grad);
      if (fx < result.value) {
        result.value = fx;
        result.x = c;
        result.found_feasible = true;
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      double s = 0;
      for (std::size_t j = 0; j < n; ++j) s += P[i * n + j] * grad[j];
      Pg[i] = s;
    }
    double gPg = 0;
    for (std::size_t i = 0; i < n; ++i) gPg += grad[i] * Pg[i];
    if (!(gPg > 0)) {
      // Zero subgradient at a feasible point: x is optimal. At an infeasible one the oracle is
      // inconsistent; stop rather than loop.
      if (objective_step) result.lower_bound = fx;
      break;
    }
    const double width = std::sqrt(gPg);
    if (objective_step) {
      result.lower_bound = std::max(result.lower_bound, fx - width);
      alpha = (fx - result.value) / width;  // deep cut at the best value so far
    } else {
      alpha = violation / width;
    }
    if (alpha >= 1) {
      // The cut leaves nothing of E. E held every feasible point better than the best so far
      // (cuts only remove infeasible points or points no better than it), so the best is
      // optimal; without a feasible point, the problem has none in the starting box.
      if (result.found_feasible) result.lower_bound = result.value;
      break;
    }
    if (result.found_feasible && result.value - result.lower_bound <= absolute_tolerance) break;
    alpha = std::min(alpha, 0.999999);
    if (n == 1) {
      // The interval [c - r, c + r] shrinks to its part where the cut allows.
      c[0] -= (1 + alpha) / 2 * Pg[0] / width;
      P[0] *= (1 - alpha) * (1 - alpha) / 4;
      continue;
    }
    const double tau = (1 + nd * alpha) / (nd + 1);
    const double delta = nd * nd * (1 - alpha * alpha) / (nd * nd - 1);
    const double sigma = 2 * (1 + nd * alpha) / ((nd + 1) * (1 + alpha));
    for (std::size_t i = 0; i < n; ++i) c[i] -= tau * Pg[i] / width;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        const double v = delta * (P[i * n + j] - sigma * Pg[i] * Pg[j] / gPg);
        P[i * n + j] = v;
        P[j * n + i] = v;  // keep P exactly symmetric against rounding drift
      }
  }
  return result;
}

}  // namespace toposweep::opt::detail
