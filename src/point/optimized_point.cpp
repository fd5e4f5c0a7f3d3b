#include "toposweep/point/optimized_point.hpp"

#include <algorithm>

#include "toposweep/opt/design_point.hpp"
#include "toposweep/point/simulate_point.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/workload.hpp"

namespace toposweep {

PointResult evaluate_optimized_point(const Config& point) {
  const auto target =
      opt::parse_optimize_target(point.get_string("point.optimize"), point.where("point.optimize"));
  const opt::OptimizeResult r = opt::optimize_design_point(point, target);
  const Network& net = r.network;

  // The optimizer's design, played once more for the breakdown the row carries.
  const Workload workload = workload_from_config(point, net.gpu_count());
  const IterationPlan plan = plan_iteration(workload, r.strategy);
  Placement placement = rank_order_placement(plan.graph.gpus, net.gpus_per_node());
  if (!r.position_of_node.empty())
    for (auto& node : placement.node_of_gpu) node = r.position_of_node[node];

  PointResult row;
  if (!plan.feasible || !r.feasible) {
    row = make_point_result(plan, nullptr, r.cost_usd, network_bisection_Bps(net));
  } else {
    const sim::SimResult sim = sim::simulate_iteration(net, plan.graph, sim::sim_options_from_config(point), placement);
    row = make_point_result(plan, &sim, r.cost_usd, network_bisection_Bps(net));
  }
  row.optimizer_rounds = static_cast<std::uint32_t>(std::max<std::size_t>(1, r.rounds.size()));
  return row;
}

}  // namespace toposweep
