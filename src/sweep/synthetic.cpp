#include "toposweep/sweep/synthetic.hpp"

#include <chrono>
#include <stdexcept>

#include "toposweep/sweep/space.hpp"

namespace toposweep::sweep {

PointResult synthetic_point(const Config& point, double cost_s, bool fail_all) {
  std::string text;
  for (const auto& [k, e] : point.entries())
    if (!k.starts_with("sweep.")) text += k + "=" + e.value + "\n";
  const std::uint64_t h = fnv1a64(text);
  if (cost_s > 0) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(cost_s);
    while (std::chrono::steady_clock::now() < until) {
    }
  }
  if (fail_all) throw std::runtime_error("synthetic: every point fails (sweep.synthetic_fail = all)");
  PointResult r;
  if (h % 13 == 0) {
    r.status = PointStatus::Infeasible;
    r.message = "synthetic: infeasible by construction";
    r.cost_usd = 1000.0 + static_cast<double>(h % 10007);
    return r;
  }
  if (h % 97 == 0) throw std::runtime_error("synthetic: failure by construction");
  r.status = PointStatus::Evaluated;
  r.cost_usd = 1000.0 + static_cast<double>(h % 10007);
  r.iteration_time_s = 1.0 + static_cast<double>((h >> 20) % 9973) / 1000.0;
  r.compute_time_s = r.iteration_time_s / 2;
  r.exposed_comm_time_s = r.iteration_time_s / 4;
  r.bubble_time_s = r.iteration_time_s / 4;
  r.memory_per_gpu_bytes = static_cast<double>((h >> 40) % 80) * 1e9;
  r.samples_per_s = 1024.0 / r.iteration_time_s;
  r.network_bisection_Bps = static_cast<double>((h >> 8) % 1000) * 1e9;
  r.dp = static_cast<std::uint32_t>(1 + h % 8);
  r.tp = 1;
  r.pp = 1;
  r.cp = 1;
  r.ep = 1;
  r.microbatches = 1;
  return r;
}

}  // namespace toposweep::sweep
