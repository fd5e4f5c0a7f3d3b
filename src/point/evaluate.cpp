#include "toposweep/point/evaluate.hpp"

#include <optional>
#include <string_view>

#include "toposweep/point/optimized_point.hpp"
#include "toposweep/point/simulate_point.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/topology/cost.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep {
namespace {

bool starts_with_any(std::string_view key, std::initializer_list<std::string_view> prefixes) {
  for (std::string_view p : prefixes)
    if (key.substr(0, p.size()) == p) return true;
  return false;
}

// The values a network depends on, as one comparable string.
void network_signature(const Config& c, std::string& out) {
  out.clear();
  for (const auto& [key, entry] : c.entries())
    if (starts_with_any(key, {"topology.", "server.", "costs."})) {
      out += key;
      out += '=';
      out += entry.value;
      out += '\n';
    }
}

// The values an iteration plan depends on: everything but what only shapes the network, the
// simulation or the drivers around it (so keys added later by the workload module count).
void plan_signature(const Config& c, std::uint32_t gpus, std::string& out) {
  out.assign("gpus=" + std::to_string(gpus) + "\n");
  for (const auto& [key, entry] : c.entries())
    if (!starts_with_any(key, {"topology.", "costs.", "simulate.", "collective.", "sweep.", "space.",
                               "frontier.", "optimize.", "point."})) {
      out += key;
      out += '=';
      out += entry.value;
      out += '\n';
    }
}

}  // namespace

// The last network and the last plan, reused while a sweep varies only other axes (sweeps
// enumerate in mixed-radix order, so consecutive points usually share both).
struct PointEvaluator::Cache {
  std::string net_sig, scratch;
  std::string table_key;  // costs.table of the cached price table
  std::optional<topology::PriceTable> prices;
  std::optional<Network> network;
  double cost_usd = PointResult::nan;
  double bisection_Bps = PointResult::nan;
  std::string plan_sig;
  std::optional<IterationPlan> plan;
  // Analytical model bound to `network`, reused (with its plan cache) while the network and
  // the collective settings stay.
  std::optional<sim::AnalyticalModel> analytical;
};

PointEvaluator::PointEvaluator() : cache_(std::make_unique<Cache>()) {}
PointEvaluator::~PointEvaluator() = default;
PointEvaluator::PointEvaluator(PointEvaluator&&) noexcept = default;
PointEvaluator& PointEvaluator::operator=(PointEvaluator&&) noexcept = default;

PointResult PointEvaluator::evaluate(const Config& point) {
  if (point.has("point.optimize") && point.get_string("point.optimize") != "none")
    return evaluate_optimized_point(point);
  // A placement other than rank order is computed per point by the full (uncached) path.
  if (point.has("optimize.placement") && point.get_string("optimize.placement") != "rank_order")
    return simulate_point(point).result;
  Cache& c = *cache_;
  const sim::SimOptions options = sim::sim_options_from_config(point);
  network_signature(point, c.scratch);
  if (!c.network || c.scratch != c.net_sig) {
    // The plan does not depend on the network beyond its GPU count, which its signature holds.
    c.analytical.reset();
    c.network.reset();
    c.network.emplace(build_network(point));
    c.net_sig = c.scratch;
    const std::string table = point.has("costs.table") ? point.get_string("costs.table") : "";
    if (!c.prices || table != c.table_key) {
      c.prices.reset();
      c.prices.emplace(topology::price_table_from_config(point));
      c.table_key = table;
    }
    c.cost_usd = topology::network_cost(*c.network, *c.prices).total_usd;
    c.bisection_Bps = network_bisection_Bps(*c.network);
  }
  const Network& net = *c.network;
  plan_signature(point, net.gpu_count(), c.scratch);
  if (!c.plan || c.scratch != c.plan_sig) {
    if (c.analytical) c.analytical->forget_graphs();
    c.plan.reset();
    c.plan.emplace(plan_iteration(point, net.gpu_count()));
    c.plan_sig = c.scratch;
  }
  const IterationPlan& plan = *c.plan;
  if (plan.graph.gpus > net.gpu_count())
    throw BadInput("the strategy needs " + std::to_string(plan.graph.gpus) + " GPUs but the topology holds " +
                       std::to_string(net.gpu_count()),
                   "topology.servers x server.gpus");
  if (!plan.feasible) return make_point_result(plan, nullptr, c.cost_usd, c.bisection_Bps);
  if (options.model == sim::NetworkModelKind::Analytical) {
    const sim::CommSettings& s = options.comm;
    if (c.analytical && (c.analytical->settings().algorithm != s.algorithm ||
                         c.analytical->settings().hierarchical_pipelined != s.hierarchical_pipelined ||
                         c.analytical->settings().analytical_all_instances != s.analytical_all_instances ||
                         c.analytical->settings().spread_switch_paths != s.spread_switch_paths ||
                         c.analytical->settings().greedy_forest != s.greedy_forest))
      c.analytical.reset();
    if (!c.analytical) c.analytical.emplace(net, s);
    const sim::SimResult sim = sim::simulate_analytical(*c.analytical, plan.graph, net.gpus_per_node());
    return make_point_result(plan, &sim, c.cost_usd, c.bisection_Bps);
  }
  const sim::SimResult sim = sim::simulate_iteration(net, plan.graph, options);
  return make_point_result(plan, &sim, c.cost_usd, c.bisection_Bps);
}

}  // namespace toposweep
