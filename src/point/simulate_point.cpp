#include "toposweep/point/simulate_point.hpp"

#include <charconv>

#include "toposweep/opt/strategy_placement.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep {

double network_bisection_Bps(const Network& network) {
  const double b = network.info().bisection_closed_form_Bps;
  return b > 0 ? b : PointResult::nan;
}

PointResult make_point_result(const IterationPlan& plan, const sim::SimResult* sim, double cost_usd,
                              double bisection_Bps) {
  PointResult r;
  r.cost_usd = cost_usd;
  r.network_bisection_Bps = bisection_Bps;
  r.memory_per_gpu_bytes = plan.memory_per_gpu_bytes;
  r.dp = plan.dp;
  r.tp = plan.tp;
  r.pp = plan.pp;
  r.microbatches = plan.microbatches;
  if (!plan.feasible || sim == nullptr) {
    r.status = PointStatus::Infeasible;
    r.message = plan.infeasible_reason.empty() ? "does not fit in memory" : plan.infeasible_reason;
    return r;
  }
  const sim::JobTimes& j = sim->job(0);
  r.status = PointStatus::Evaluated;
  r.iteration_time_s = j.iteration_time_s;
  r.compute_time_s = j.compute_time_s;
  r.exposed_comm_time_s = j.exposed_comm_time_s;
  r.bubble_time_s = j.bubble_time_s;
  r.samples_per_s = j.iteration_time_s > 0 ? plan.global_batch / j.iteration_time_s : PointResult::nan;
  return r;
}

PointSimulation simulate_point(const Config& config, bool record_link_loads) {
  PointSimulation p;
  p.options = sim::sim_options_from_config(config);
  p.options.record_link_loads = record_link_loads;
  p.network = std::make_shared<const Network>(build_network(config));
  p.plan = plan_iteration_from_config(config, p.network->gpu_count());
  if (p.plan.graph.gpus > p.network->gpu_count())
    throw BadInput("the strategy needs " + std::to_string(p.plan.graph.gpus) +
                       " GPUs but the topology holds " + std::to_string(p.network->gpu_count()),
                   "topology.servers x server.gpus");
  const opt::PlacementKind kind = config.has("optimize.placement")
                                      ? opt::parse_placement_kind(config.get_string("optimize.placement"),
                                                                  config.where("optimize.placement"))
                                      : opt::PlacementKind::RankOrder;
  const opt::StrategyPlacement placed =
      opt::place_strategy(*p.network, p.plan.graph.gpus, p.plan.tp, p.plan.pp, kind);
  p.placement = placed.placement;
  p.placement_requested = opt::placement_kind_name(kind);
  p.placement_method = placed.method;
  p.placement_groups = placed.node_groups;
  p.cost = topology::network_cost(*p.network, topology::price_table_from_config(config));
  const double cost = p.cost.total_usd;
  const double bisection = network_bisection_Bps(*p.network);
  if (p.plan.feasible) {
    p.sim = sim::simulate_iteration(*p.network, p.plan.graph, p.options, p.placement);
    p.simulated = true;
  }
  p.result = make_point_result(p.plan, p.simulated ? &p.sim : nullptr, cost, bisection);
  return p;
}

std::vector<JobSpec> parse_job_list(const Config& config) {
  std::vector<JobSpec> jobs;
  if (!config.has("simulate.jobs")) return jobs;
  auto number = [](std::string_view text, unsigned& out) {
    const char* end = text.data() + text.size();
    return !text.empty() && std::from_chars(text.data(), end, out).ptr == end && out > 0;
  };
  for (const std::string& item : config.get_list("simulate.jobs")) {
    const auto bad = [&] {
      return BadInput("job '" + item + "' is not MODEL:SERVERS[:tpT][:ppP][:mbM] with SERVERS, T, P, M >= 1",
                      config.where("simulate.jobs"));
    };
    // Peel the strategy options off the right, then SERVERS; what is left is the model (a name or
    // a file path, which may itself hold colons).
    JobSpec j;
    std::string rest = item;
    for (;;) {
      const auto colon = rest.rfind(':');
      if (colon == std::string::npos) throw bad();
      const std::string_view token = std::string_view(rest).substr(colon + 1);
      std::uint32_t* field = token.starts_with("tp")   ? &j.tp
                             : token.starts_with("pp") ? &j.pp
                             : token.starts_with("mb") ? &j.microbatches
                                                       : nullptr;
      if (!field) break;
      unsigned value = 0;
      if (!number(token.substr(2), value)) throw bad();
      *field = value;
      rest.resize(colon);
    }
    const auto colon = rest.rfind(':');
    unsigned servers = 0;
    if (colon == 0 || !number(std::string_view(rest).substr(colon + 1), servers)) throw bad();
    j.model = rest.substr(0, colon);
    j.servers = servers;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

MultiJobSimulation simulate_multijob(const Config& config, bool record_link_loads) {
  MultiJobSimulation m;
  m.options = sim::sim_options_from_config(config);
  m.options.record_link_loads = record_link_loads;
  m.network = std::make_shared<const Network>(build_network(config));
  const std::vector<JobSpec> specs = parse_job_list(config);
  if (specs.empty()) throw BadInput("multi-job mode needs at least one job", config.where("simulate.jobs"));
  const std::uint32_t g = m.network->gpus_per_node();
  std::uint32_t next_server = 0;
  for (const JobSpec& s : specs) {
    if (next_server + s.servers > m.network->compute_count())
      throw BadInput("the jobs need " + std::to_string(next_server + s.servers) +
                         "+ servers but the topology has " + std::to_string(m.network->compute_count()),
                     config.where("simulate.jobs"));
    Config job_config = config;
    job_config.set("model.name", s.model, "simulate.jobs");
    const std::uint32_t job_gpus = s.servers * g;
    if (job_gpus % (s.tp * s.pp) != 0)
      throw InvalidDesign("job '" + s.model + ":" + std::to_string(s.servers) + "': tp x pp = " +
                              std::to_string(s.tp * s.pp) + " does not divide its " + std::to_string(job_gpus) +
                              " GPUs",
                          config.where("simulate.jobs"));
    job_config.set("strategy.dp", std::to_string(job_gpus / (s.tp * s.pp)), "simulate.jobs");
    job_config.set("strategy.tp", std::to_string(s.tp), "simulate.jobs");
    job_config.set("strategy.pp", std::to_string(s.pp), "simulate.jobs");
    job_config.set("strategy.microbatches", std::to_string(s.microbatches), "simulate.jobs");
    // Jobs of different models keep their own per-GPU batch unless the user set one for all.
    if (!config.has("model.batch_per_gpu") || config.entries().at("model.batch_per_gpu").origin == "default")
      job_config.set("model.batch_per_gpu", "0", "simulate.jobs");
    MultiJobRun run{s, plan_iteration_from_config(job_config, s.servers * g), next_server};
    if (!run.plan.feasible)
      throw BadInput("job " + s.model + ":" + std::to_string(s.servers) + " does not fit in memory (" +
                         run.plan.infeasible_reason + ")",
                     config.where("simulate.jobs"));
    m.jobs.push_back(std::move(run));
    next_server += s.servers;
  }
  std::vector<sim::Job> jobs;
  for (const MultiJobRun& r : m.jobs) {
    sim::Job j;
    j.name = r.spec.model;
    j.graph = &r.plan.graph;
    j.placement = rank_order_placement(r.plan.graph.gpus, g);
    for (auto& node : j.placement.node_of_gpu) node += r.first_server;
    jobs.push_back(std::move(j));
  }
  m.sim = sim::simulate_jobs(*m.network, jobs, m.options);
  m.cost = topology::network_cost(*m.network, topology::price_table_from_config(config));
  return m;
}

}  // namespace toposweep
