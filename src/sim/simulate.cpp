#include "toposweep/sim/simulate.hpp"

#include "toposweep/collective/options.hpp"
#include "toposweep/sim/analytical_model.hpp"
#include "toposweep/sim/flow_model.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::sim {

SimOptions sim_options_from_config(const Config& config) {
  SimOptions o;
  const std::string& model = config.get_string("simulate.network_model");
  if (model == "analytical")
    o.model = NetworkModelKind::Analytical;
  else if (model == "flow")
    o.model = NetworkModelKind::Flow;
  else
    throw BadInput("network model must be analytical or flow, not '" + model + "'",
                   config.where("simulate.network_model"));
  const std::string& hier = config.get_string("simulate.hierarchical_model");
  if (hier == "pipelined")
    o.comm.hierarchical_pipelined = true;
  else if (hier == "sequential")
    o.comm.hierarchical_pipelined = false;
  else
    throw BadInput("hierarchical model must be pipelined or sequential, not '" + hier + "'",
                   config.where("simulate.hierarchical_model"));
  const std::string& inst = config.get_string("simulate.analytical_instances");
  if (inst == "first")
    o.comm.analytical_all_instances = false;
  else if (inst == "all")
    o.comm.analytical_all_instances = true;
  else
    throw BadInput("analytical instances must be first or all, not '" + inst + "'",
                   config.where("simulate.analytical_instances"));
  if (config.has("collective.algorithm")) o.comm.algorithm = config.get_string("collective.algorithm");
  o.comm.spread_switch_paths = spread_routing_from_config(config);
  o.comm.greedy_forest = greedy_forest_from_config(config);
  return o;
}

std::string_view network_model_name(NetworkModelKind kind) {
  return kind == NetworkModelKind::Flow ? "flow" : "analytical";
}

std::unique_ptr<NetworkModel> make_network_model(const Network& net, const SimOptions& options) {
  if (options.model == NetworkModelKind::Flow) return std::make_unique<FlowModel>(net, options.comm);
  return std::make_unique<AnalyticalModel>(net, options.comm);
}

SimResult simulate_jobs(const Network& net, std::span<const Job> jobs, const SimOptions& options) {
  SimResult r;
  r.model = options.model;
  if (options.model == NetworkModelKind::Flow) {
    FlowModel model(net, options.comm);
    model.record_link_loads(options.record_link_loads);
    r.engine = run_engine(jobs, model);
    r.link_samples = model.flows().link_samples();
    r.flows = model.flows_started();
    r.flows_represented = model.flows_represented();
    r.rate_recomputations = model.flows().recomputations();
    r.rate_assignments = model.flows().rate_assignments();
    const auto& bytes = model.flows().arc_bytes();
    double sum = 0;
    for (ArcId a = 0; a < net.arc_count(); ++a) {
      const double u = r.engine.makespan_s > 0 ? bytes[a] / (net.arc(a).bandwidth_Bps * r.engine.makespan_s) : 0.0;
      r.links.push_back({a, bytes[a], u});
      r.max_link_utilisation = std::max(r.max_link_utilisation, u);
      sum += u;
    }
    r.mean_link_utilisation = net.arc_count() ? sum / net.arc_count() : 0.0;
  } else {
    AnalyticalModel model(net, options.comm);
    r.engine = run_engine(jobs, model);
  }
  return r;
}

SimResult simulate_analytical(AnalyticalModel& model, const TaskGraph& graph, std::uint32_t gpus_per_node) {
  SimResult r;
  r.model = NetworkModelKind::Analytical;
  r.engine.spans.resize(1);
  r.engine.jobs.push_back(model.play(graph, gpus_per_node, r.engine.spans[0]));
  r.engine.makespan_s = r.engine.jobs[0].iteration_time_s;
  return r;
}

SimResult simulate_iteration(const Network& net, const TaskGraph& graph, const SimOptions& options,
                             Placement placement) {
  if (graph.gpus > net.gpu_count())
    throw BadInput("the strategy needs " + std::to_string(graph.gpus) + " GPUs but the topology holds " +
                       std::to_string(net.gpu_count()),
                   "topology.servers x server.gpus");
  Placement rank_order = rank_order_placement(graph.gpus, net.gpus_per_node());
  const bool is_rank_order = placement.node_of_gpu.empty() || (placement.gpus_per_node == rank_order.gpus_per_node &&
                                                               placement.node_of_gpu == rank_order.node_of_gpu);
  if (options.model == NetworkModelKind::Analytical && is_rank_order) {
    // One job on rank order with fixed task times: the prepared single-pass playback, which
    // equals run_engine's result bit for bit.
    AnalyticalModel model(net, options.comm);
    return simulate_analytical(model, graph, net.gpus_per_node());
  }
  if (placement.node_of_gpu.empty()) placement = std::move(rank_order);
  const Job job{"job0", &graph, std::move(placement)};
  return simulate_jobs(net, std::span<const Job>(&job, 1), options);
}

}  // namespace toposweep::sim
