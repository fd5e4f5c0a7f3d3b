#include "toposweep/sim/simulate.hpp"

#include "toposweep/collective/options.hpp"
#include "toposweep/sim/analytical_model.hpp"
#include "toposweep/sim/flow_model.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"

namespace toposweep::sim {

SimOptions sim_options_from_config(const Config& config) {
  SimOptions o;
  const std::string& model = config.get_string("simulate.network_model");
  const NetworkModelEntry* entry = find_network_model(model);
  if (!entry)
    throw BadInput("network model must be " + join(network_model_names(), " or ") + ", not '" + model + "'",
                   config.where("simulate.network_model"));
  o.model = entry->kind;
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
  o.comm.switch_routing = switch_routing_from_config(config);
  o.comm.greedy_forest = greedy_forest_from_config(config);
  system_costs_from_config(config, o.comm.chunks, o.comm.endpoint_delay_s, o.comm.reduction_Bps);
  return o;
}

namespace {

std::unique_ptr<NetworkModel> make_analytical(const Network& net, const SimOptions& o) {
  return std::make_unique<AnalyticalModel>(net, o.comm);
}

std::unique_ptr<NetworkModel> make_flow(const Network& net, const SimOptions& o) {
  auto model = std::make_unique<FlowModel>(net, o.comm);
  model->record_link_loads(o.record_link_loads);
  return model;
}

// The network models by name. Adding one: a NetworkModel subclass, its NetworkModelKind, one line.
constexpr NetworkModelEntry kModels[] = {
    {"analytical", NetworkModelKind::Analytical, "alpha-beta, uncontended: each collective's planned time",
     make_analytical},
    {"flow", NetworkModelKind::Flow, "max-min fair flows sharing the links (contention)", make_flow},
};

}  // namespace

const NetworkModelEntry* find_network_model(std::string_view name) {
  for (const auto& m : kModels)
    if (name == m.name) return &m;
  return nullptr;
}

const std::vector<std::string>& network_model_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& m : kModels) v.push_back(m.name);
    return v;
  }();
  return names;
}

std::string_view network_model_name(NetworkModelKind kind) {
  for (const auto& m : kModels)
    if (m.kind == kind) return m.name;
  return "?";
}

std::unique_ptr<NetworkModel> make_network_model(const Network& net, const SimOptions& options) {
  for (const auto& m : kModels)
    if (m.kind == options.model) return m.make(net, options);
  throw RuntimeFailure("no network model of this kind");
}

SimResult simulate_jobs(const Network& net, std::span<const Job> jobs, const SimOptions& options) {
  SimResult r;
  r.model = options.model;
  const std::unique_ptr<NetworkModel> model = make_network_model(net, options);
  r.engine = run_engine(jobs, *model);
  model->report(net, r);
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

Placement rank_order_on(const Network& net, std::uint32_t gpus) {
  if (net.uniform_gpus()) return rank_order_placement(gpus, net.gpus_per_node());
  const auto counts = net.gpus_of_nodes();
  return rank_order_placement(gpus, std::span<const std::uint32_t>(counts));
}

SimResult simulate_iteration(const Network& net, const TaskGraph& graph, const SimOptions& options,
                             Placement placement) {
  if (graph.gpus > net.gpu_count())
    throw BadInput("the strategy needs " + std::to_string(graph.gpus) + " GPUs but the topology holds " +
                       std::to_string(net.gpu_count()),
                   "topology.servers x server.gpus");
  Placement rank_order = rank_order_on(net, graph.gpus);
  const bool is_rank_order =
      placement.node_of_gpu.empty() || (placement.gpus_per_node == rank_order.gpus_per_node &&
                                        placement.node_of_gpu == rank_order.node_of_gpu);
  // The prepared playback places ranks by a GPU count per node: uniform counts only.
  if (options.model == NetworkModelKind::Analytical && is_rank_order && net.uniform_gpus()) {
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
