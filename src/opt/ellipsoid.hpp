#pragma once
// The ellipsoid method for a convex objective under convex constraints, with a certificate: at
// every objective step the optimum (if not already found) lies in the current ellipsoid E, so
// f* >= f(x) - sqrt(g'Pg), the minimum of the objective's linearisation over E. Private to opt.
#include <cstdint>
#include <functional>
#include <vector>

namespace toposweep::opt::detail {

struct ConvexOracle {
  // Writes a subgradient of the objective at x into grad and returns f(x).
  std::function<double(const std::vector<double>& x, std::vector<double>& grad)> objective;
  // Returns the largest constraint value g_i(x) (feasible iff <= 0) and a subgradient of that
  // constraint at x in grad.
  std::function<double(const std::vector<double>& x, std::vector<double>& grad)> worst_constraint;
};

struct EllipsoidResult {
  bool found_feasible = false;
  std::vector<double> x;   // best feasible point
  double value = 0;        // objective there
  double lower_bound = 0;  // certified lower bound on the optimum
  std::uint32_t iterations = 0;
};

// Starts from the ball circumscribing the box [lo, hi] and stops when value - lower_bound <=
// absolute_tolerance or after max_iterations.
EllipsoidResult minimize_ellipsoid(const ConvexOracle& oracle, const std::vector<double>& lo,
                                   const std::vector<double>& hi, double absolute_tolerance,
                                   std::uint32_t max_iterations);

}  // namespace toposweep::opt::detail
