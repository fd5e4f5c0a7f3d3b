#include "toposweep/opt/bandwidth_allocation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ellipsoid.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::opt {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Without a lower bound, a dimension may shrink to this fraction of its largest possible
// bandwidth: effectively zero, and it keeps the log-space search box finite.
constexpr double kFloorFraction = 1e-9;

struct Prepared {
  std::vector<std::vector<std::pair<std::uint32_t, double>>> sizes;  // per comm: (dim, size_k)
  std::vector<double> weights;
};

Prepared prepare(const BandwidthProblem& p) {
  Prepared out;
  for (const auto& comm : p.workload) {
    const auto size = per_dimension_bytes(comm, p.dim_count);
    std::vector<std::pair<std::uint32_t, double>> nz;
    for (std::uint32_t k = 0; k < size.size(); ++k)
      if (size[k] > 0) nz.emplace_back(k, size[k]);
    if (nz.empty() || !(comm.count > 0)) continue;
    out.sizes.push_back(std::move(nz));
    out.weights.push_back(comm.count);
  }
  return out;
}

// Time and its gradient with respect to y_k = ln bw_k.
double time_and_grad(const BandwidthProblem& p, const Prepared& w, const std::vector<double>& bw,
                     std::vector<double>* dT_dy) {
  if (dT_dy) dT_dy->assign(p.dim_count, 0.0);
  double total = 0;
  for (std::size_t c = 0; c < w.sizes.size(); ++c) {
    const auto& nz = w.sizes[c];
    if (p.model == CommTimeModel::Sequential) {
      for (const auto& [k, s] : nz) {
        const double t = w.weights[c] * s / bw[k];
        total += t;
        if (dT_dy) (*dT_dy)[k] -= t;
      }
    } else {
      std::uint32_t arg = nz.front().first;
      double worst = -1;
      for (const auto& [k, s] : nz) {
        const double t = s / bw[k];
        if (t > worst) worst = t, arg = k;
      }
      total += w.weights[c] * worst;
      if (dT_dy) (*dT_dy)[arg] -= w.weights[c] * worst;
    }
  }
  return total;
}

std::vector<double> descending_lower(const std::vector<double>& lo) {
  std::vector<double> out = lo;
  for (std::size_t k = out.size(); k-- > 1;) out[k - 1] = std::max(out[k - 1], out[k]);
  return out;
}

}  // namespace

const char* comm_time_model_name(CommTimeModel m) {
  return m == CommTimeModel::Pipelined ? "pipelined" : "sequential";
}
const char* allocation_objective_name(AllocationObjective o) {
  return o == AllocationObjective::Time ? "time" : "time_x_cost";
}

double workload_comm_time(const BandwidthProblem& problem, const std::vector<double>& bw) {
  return time_and_grad(problem, prepare(problem), bw, nullptr);
}

double allocation_cost(const BandwidthProblem& problem, const std::vector<double>& bw) {
  double c = 0;
  for (std::size_t k = 0; k < bw.size() && k < problem.unit_price.size(); ++k)
    c += problem.npus * problem.unit_price[k] * bw[k];
  return c;
}

BandwidthAllocation allocate_bandwidth(const BandwidthProblem& p) {
  const std::size_t D = p.dim_count;
  if (D == 0) throw BadInput("bandwidth allocation needs a multidim network", "key topology.dims");
  if (p.unit_price.size() != D) throw BadInput("one price per dimension is needed", "key costs.table");
  if (!p.lower_Bps.empty() && p.lower_Bps.size() != D)
    throw BadInput("expected one lower bound per dimension (" + std::to_string(D) + ")",
                   "key optimize.dim_bandwidth_min");
  if (!p.upper_Bps.empty() && p.upper_Bps.size() != D)
    throw BadInput("expected one upper bound per dimension (" + std::to_string(D) + ")",
                   "key optimize.dim_bandwidth_max");
  const double B = p.total_bandwidth_Bps.value_or(kInf);
  const double Cb = p.cost_budget_usd.value_or(kInf);
  if (!(B > 0)) throw BadInput("total bandwidth must be positive", "key optimize.total_bandwidth");
  if (!(Cb > 0)) throw BadInput("cost budget must be positive", "key optimize.cost_budget");

  // Largest bandwidth each dimension could take, from its bound and both budgets.
  std::vector<double> hi(D), lo(D, 0.0);
  for (std::size_t k = 0; k < D; ++k) {
    double h = B;
    if (!p.upper_Bps.empty() && p.upper_Bps[k] > 0) h = std::min(h, p.upper_Bps[k]);
    if (p.unit_price[k] > 0) h = std::min(h, Cb / (p.npus * p.unit_price[k]));
    if (!std::isfinite(h))
      throw BadInput("nothing bounds the bandwidth of dimension " + std::to_string(k) +
                         ": set optimize.total_bandwidth, optimize.cost_budget or an upper bound",
                     "key optimize.total_bandwidth");
    hi[k] = h;
    if (!p.lower_Bps.empty()) lo[k] = p.lower_Bps[k];
    if (!p.upper_Bps.empty() && p.upper_Bps[k] > 0 && lo[k] > p.upper_Bps[k])
      throw BadInput("dimension " + std::to_string(k) + ": lower bound above upper bound",
                     "key optimize.dim_bandwidth_min");
  }
  if (p.descending)
    for (std::size_t k = 1; k < D; ++k) hi[k] = std::min(hi[k], hi[k - 1]);
  for (std::size_t k = 0; k < D; ++k) lo[k] = std::max(lo[k], kFloorFraction * hi[k]);
  const std::vector<double> least = p.descending ? descending_lower(lo) : lo;
  for (std::size_t k = 0; k < D; ++k)
    if (least[k] > hi[k] * (1 + 1e-12))
      throw BadInput("dimension " + std::to_string(k) + ": the bounds" +
                         std::string(p.descending ? " and the descending ordering" : "") +
                         " leave no feasible bandwidth under the budgets",
                     "key optimize.dim_bandwidth_min");
  double least_total = 0;
  for (double v : least) least_total += v;
  const double least_cost = allocation_cost(p, least);
  if (least_total > B * (1 + 1e-12))
    throw BadInput("total bandwidth is below the sum of the lower bounds", "key optimize.total_bandwidth");
  if (least_cost > Cb * (1 + 1e-12))
    throw BadInput(
        "cost budget is below the cheapest network the bounds allow (" + std::to_string(least_cost) + " USD)",
        "key optimize.cost_budget");

  const Prepared w = prepare(p);
  if (w.sizes.empty()) throw BadInput("the workload has no communication to optimize", "optimize workload");
  auto objective_of = [&](const std::vector<double>& bw, double* time, double* cost) {
    *time = time_and_grad(p, w, bw, nullptr);
    *cost = allocation_cost(p, bw);
    return p.objective == AllocationObjective::Time ? *time : *time * *cost;
  };

  // Free variables are the dimensions whose bounds leave room; the others sit at their bound.
  std::vector<std::size_t> free_dims;
  std::vector<double> base = least;
  const bool tight = least_total >= B * (1 - 1e-12) || least_cost >= Cb * (1 - 1e-12);
  if (!tight)
    for (std::size_t k = 0; k < D; ++k)
      if (hi[k] > lo[k] * (1 + 1e-12)) free_dims.push_back(k);

  BandwidthAllocation out;
  std::vector<double> bw = base;
  if (!free_dims.empty()) {
    const std::size_t n = free_dims.size();
    auto expand = [&](const std::vector<double>& y) {
      std::vector<double> full = base;
      for (std::size_t i = 0; i < n; ++i) full[free_dims[i]] = std::exp(y[i]);
      return full;
    };
    detail::ConvexOracle oracle;
    oracle.objective = [&](const std::vector<double>& y, std::vector<double>& grad) {
      const auto full = expand(y);
      std::vector<double> dT;
      const double T = time_and_grad(p, w, full, &dT);
      double f = std::log(T);
      for (std::size_t i = 0; i < n; ++i) grad[i] = dT[free_dims[i]] / T;
      if (p.objective == AllocationObjective::TimeTimesCost) {
        const double C = allocation_cost(p, full);
        if (C > 0) {
          f += std::log(C);
          for (std::size_t i = 0; i < n; ++i) {
            const std::size_t k = free_dims[i];
            grad[i] += p.npus * p.unit_price[k] * full[k] / C;
          }
        }
      }
      return f;
    };
    oracle.worst_constraint = [&](const std::vector<double>& y, std::vector<double>& grad) {
      const auto full = expand(y);
      double worst = -kInf;
      auto take = [&](double g, auto&& fill) {
        if (g > worst) {
          worst = g;
          std::fill(grad.begin(), grad.end(), 0.0);
          fill();
        }
      };
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t k = free_dims[i];
        take(y[i] - std::log(hi[k]), [&] { grad[i] = 1; });
        take(std::log(lo[k]) - y[i], [&] { grad[i] = -1; });
      }
      if (std::isfinite(B)) {
        double s = 0;
        for (double v : full) s += v;
        take(std::log(s / B), [&] {
          for (std::size_t i = 0; i < n; ++i) grad[i] = full[free_dims[i]] / s;
        });
      }
      const double C = allocation_cost(p, full);
      if (std::isfinite(Cb) && C > 0) {
        take(std::log(C / Cb), [&] {
          for (std::size_t i = 0; i < n; ++i) {
            const std::size_t k = free_dims[i];
            grad[i] = p.npus * p.unit_price[k] * full[k] / C;
          }
        });
      }
      if (p.descending) {
        std::vector<int> index_of(D, -1);
        for (std::size_t i = 0; i < n; ++i) index_of[free_dims[i]] = static_cast<int>(i);
        for (std::size_t k = 0; k + 1 < D; ++k) {
          if (index_of[k] < 0 && index_of[k + 1] < 0) continue;
          take(std::log(full[k + 1]) - std::log(full[k]), [&] {
            if (index_of[k + 1] >= 0) grad[index_of[k + 1]] = 1;
            if (index_of[k] >= 0) grad[index_of[k]] = -1;
          });
        }
      }
      return worst;
    };
    std::vector<double> ylo(n), yhi(n);
    for (std::size_t i = 0; i < n; ++i) {
      ylo[i] = std::log(lo[free_dims[i]]);
      yhi[i] = std::log(hi[free_dims[i]]);
    }
    const double tol = std::log1p(p.relative_tolerance);
    const auto r = detail::minimize_ellipsoid(oracle, ylo, yhi, tol, 200000);
    if (!r.found_feasible)
      throw RuntimeFailure("bandwidth allocation found no feasible point (numerical trouble)");
    bw = expand(r.x);
    out.certified_gap = std::expm1(std::max(0.0, r.value - r.lower_bound));
    out.iterations = r.iterations;
  }

  double time = 0, cost = 0;
  double obj = objective_of(bw, &time, &cost);
  // time x cost is unchanged by scaling every bandwidth when only budgets bind; among such
  // equally good allocations report the fastest one.
  if (p.objective == AllocationObjective::TimeTimesCost && free_dims.size() == D) {
    double t = kInf;
    double s = 0;
    for (double v : bw) s += v;
    if (std::isfinite(B)) t = std::min(t, B / s);
    if (std::isfinite(Cb) && cost > 0) t = std::min(t, Cb / cost);
    for (std::size_t k = 0; k < D; ++k) t = std::min(t, hi[k] / bw[k]);
    if (t > 1 && std::isfinite(t)) {
      std::vector<double> scaled = bw;
      for (double& v : scaled) v *= t;
      double t2 = 0, c2 = 0;
      const double o2 = objective_of(scaled, &t2, &c2);
      if (o2 <= obj * (1 + 1e-12)) bw = scaled, time = t2, cost = c2, obj = o2;
    }
  }
  out.dim_bandwidth_Bps = bw;
  out.time_s = time;
  out.cost_usd = cost;
  out.objective = obj;

  double price_sum = 0;
  for (double u : p.unit_price) price_sum += u;
  double equal = B / static_cast<double>(D);
  if (price_sum > 0) equal = std::min(equal, Cb / (p.npus * price_sum));
  out.baseline_bandwidth_Bps.assign(D, equal);
  out.baseline_objective =
      objective_of(out.baseline_bandwidth_Bps, &out.baseline_time_s, &out.baseline_cost_usd);
  for (std::size_t k = 0; k < D; ++k)
    if (equal < lo[k] * (1 - 1e-12) || equal > hi[k] * (1 + 1e-12)) out.baseline_within_bounds = false;
  out.gain = out.baseline_objective / out.objective;
  return out;
}

}  // namespace toposweep::opt
