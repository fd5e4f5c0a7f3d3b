// The one evaluation path: a design point as given, through an optimizer first, or several jobs
// on one network; at the detail the caller needs.
#include "toposweep/point/evaluate.hpp"

#include <algorithm>

#include "toposweep/opt/strategy_placement.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/workload/model_library.hpp"

namespace toposweep {

struct PointCache::Impl {
  // The last network, by its topology and cost specs (sweeps enumerate in mixed-radix order, so
  // consecutive points usually share it).
  std::optional<topology::TopologySpec> topo_key;
  std::optional<topology::CostSpec> cost_key;
  std::optional<topology::CostSpec> table_key;  // of `prices`
  std::optional<topology::PriceTable> prices;
  std::shared_ptr<const Network> network;
  topology::CostBreakdown cost;
  double bisection_Bps = PointResult::nan;
  // Models and devices by name (a file is read once).
  std::map<std::string, Model> models;
  std::map<std::string, Device> devices;
  // The last plan, by workload, strategy and GPU count.
  std::optional<WorkloadSpec> plan_workload;
  std::optional<StrategySpec> plan_strategy;
  std::uint32_t plan_gpus = 0;
  std::shared_ptr<const IterationPlan> plan;
  // Per-layer costs by (model, device, strategy shape): a sweep's points share them.
  LayerCostCache layer_costs;
  // Analytical model bound to `network`, reused (with its plan cache) while the network and the
  // communication settings stay.
  std::optional<sim::AnalyticalModel> analytical;

  const Network& network_for(const topology::TopologySpec& topo, const topology::CostSpec& costs) {
    if (!network || topo != *topo_key) {
      analytical.reset();
      network.reset();
      topo_key.reset();
      network = std::make_shared<const Network>(build_network(topo));
      topo_key = topo;
      cost_key.reset();
      bisection_Bps = network_bisection_Bps(*network);
    }
    if (!cost_key || costs != *cost_key) {
      if (!table_key || costs != *table_key) {
        prices.reset();
        prices.emplace(topology::price_table(costs));
        table_key = costs;
      }
      cost = topology::network_cost(*network, *prices);
      cost_key = costs;
    }
    return *network;
  }

  Workload workload(const WorkloadSpec& spec, std::uint32_t gpus) {
    auto m = models.find(spec.model);
    if (m == models.end()) m = models.emplace(spec.model, resolve_model(spec.model, "key model.name")).first;
    auto d = devices.find(spec.device);
    if (d == devices.end()) d = devices.emplace(spec.device, resolve_device(spec.device, "key server.device")).first;
    return make_workload(spec, gpus, m->second, d->second);
  }

  const IterationPlan& plan_for(const WorkloadSpec& w, const StrategySpec& s, std::uint32_t gpus) {
    if (!plan || gpus != plan_gpus || w != *plan_workload || s != *plan_strategy) {
      if (analytical) analytical->forget_graphs();
      plan.reset();
      const Workload wl = workload(w, gpus);
      plan = std::make_shared<const IterationPlan>(
          plan_iteration(wl, resolve_strategy(s, wl, gpus), &layer_costs));
      plan_workload = w;
      plan_strategy = s;
      plan_gpus = gpus;
    }
    return *plan;
  }

  sim::AnalyticalModel& analytical_for(const Network& net, const sim::CommSettings& comm) {
    if (analytical && !(analytical->settings() == comm)) analytical.reset();
    if (!analytical) analytical.emplace(net, comm);
    return *analytical;
  }
};

PointCache::PointCache() : impl_(std::make_unique<Impl>()) {}
PointCache::~PointCache() = default;
PointCache::PointCache(PointCache&&) noexcept = default;
PointCache& PointCache::operator=(PointCache&&) noexcept = default;

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

namespace {

void require_gpus(const IterationPlan& plan, const Network& net) {
  if (plan.graph.gpus > net.gpu_count())
    throw BadInput("the strategy needs " + std::to_string(plan.graph.gpus) + " GPUs but the topology holds " +
                       std::to_string(net.gpu_count()),
                   "topology.servers x server.gpus");
}

// A reading step of Detail::Check: an impossible design stops that step only, so the later
// steps still read (and check) their inputs.
template <class F>
void check_step(F&& f) {
  try {
    f();
  } catch (const InvalidDesign&) {
  }
}

Evaluation check_only(const DesignPoint& p, PointCache::Impl& c) {
  if (!p.jobs.empty())
    throw BadInput("multi-job mode runs in `toposweep simulate`; a sweep point is one job", "key simulate.jobs");
  const bool own_network = p.optimize && *p.optimize == opt::OptimizeTarget::Alternating;
  const Network* net = nullptr;
  if (!own_network) check_step([&] { net = &c.network_for(p.topology, p.costs); });
  if (p.optimize && *p.optimize == opt::OptimizeTarget::Bandwidth &&
      !std::holds_alternative<topology::MultiDimSpec>(p.topology.family))
    return {};  // the optimizer reports it as an impossible design
  const std::uint32_t gpus = own_network ? p.optimize_settings->servers * p.optimize_settings->finder.server.gpus
                                         : net ? net->gpu_count() : 0;
  if (gpus == 0) return {};
  check_step([&] {
    const Workload w = c.workload(p.workload, gpus);
    if (!own_network) require_gpus(plan_iteration(w, resolve_strategy(p.strategy, w, gpus)), *net);
  });
  return {};
}

Evaluation evaluate_jobs(const DesignPoint& p, PointCache::Impl& c, Detail detail) {
  if (detail != Detail::Full)
    throw BadInput("multi-job mode runs in `toposweep simulate`; a sweep point is one job", "key simulate.jobs");
  Evaluation e;
  e.network = std::make_shared<const Network>(build_network(p.topology));
  const Network& net = *e.network;
  const std::uint32_t g = net.gpus_per_node();
  std::uint32_t next_server = 0;
  for (const JobSpec& s : p.jobs) {
    if (next_server + s.servers > net.compute_count())
      throw BadInput("the jobs need " + std::to_string(next_server + s.servers) + "+ servers but the topology has " +
                         std::to_string(net.compute_count()),
                     "key simulate.jobs");
    const std::uint32_t job_gpus = s.servers * g;
    if (job_gpus % (s.tp * s.pp) != 0)
      throw InvalidDesign("job '" + s.model + ":" + std::to_string(s.servers) + "': tp x pp = " +
                              std::to_string(s.tp * s.pp) + " does not divide its " + std::to_string(job_gpus) + " GPUs",
                          "key simulate.jobs");
    WorkloadSpec ws = p.workload;
    ws.model = s.model;
    // Jobs of different models keep their own per-GPU batch unless the user set one for all.
    if (!p.jobs_share_batch) ws.batch_per_gpu = 0;
    StrategySpec ss = p.strategy;
    ss.dp = job_gpus / (s.tp * s.pp);
    ss.tp = s.tp;
    ss.pp = s.pp;
    ss.microbatches = s.microbatches;
    const Workload w = c.workload(ws, job_gpus);
    MultiJobRun run{s, plan_iteration(w, resolve_strategy(ss, w, job_gpus)), next_server};
    if (!run.plan.feasible)
      throw BadInput("job " + s.model + ":" + std::to_string(s.servers) + " does not fit in memory (" +
                         run.plan.infeasible_reason + ")",
                     "key simulate.jobs");
    e.jobs.push_back(std::move(run));
    next_server += s.servers;
  }
  std::vector<sim::Job> jobs;
  for (const MultiJobRun& r : e.jobs) {
    sim::Job j;
    j.name = r.spec.model;
    j.graph = &r.plan.graph;
    j.placement = rank_order_placement(r.plan.graph.gpus, g);
    for (auto& node : j.placement.node_of_gpu) node += r.first_server;
    jobs.push_back(std::move(j));
  }
  e.sim = sim::simulate_jobs(net, jobs, p.sim);
  e.simulated = true;
  e.cost = topology::network_cost(net, topology::price_table(p.costs));
  return e;
}

Evaluation evaluate_optimized(const DesignPoint& p, PointCache::Impl& c, Detail detail) {
  Evaluation e;
  const opt::OptimizeResult r = opt::optimize_design_point(optimize_problem(p), *p.optimize, p.single_collective);
  if (detail == Detail::Full) {
    e.optimized = r;
    return e;
  }
  // The optimizer's design, played once more for the breakdown the row carries.
  const Network& net = r.network;
  const Workload workload = c.workload(p.workload, net.gpu_count());
  const IterationPlan plan = plan_iteration(workload, r.strategy);
  Placement placement = rank_order_placement(plan.graph.gpus, net.gpus_per_node());
  if (!r.position_of_node.empty())
    for (auto& node : placement.node_of_gpu) node = r.position_of_node[node];
  if (!plan.feasible || !r.feasible) {
    e.row = make_point_result(plan, nullptr, r.cost_usd, network_bisection_Bps(net));
  } else {
    const sim::SimResult sim = sim::simulate_iteration(net, plan.graph, p.sim, placement);
    e.row = make_point_result(plan, &sim, r.cost_usd, network_bisection_Bps(net));
  }
  e.row.optimizer_rounds = static_cast<std::uint32_t>(std::max<std::size_t>(1, r.rounds.size()));
  return e;
}

}  // namespace

Evaluation evaluate(const DesignPoint& p, PointCache& cache, Detail detail) {
  PointCache::Impl& c = cache.impl();
  if (detail == Detail::Check) return check_only(p, c);
  if (!p.jobs.empty()) return evaluate_jobs(p, c, detail);
  if (p.optimize) return evaluate_optimized(p, c, detail);

  Evaluation e;
  const Network& net = c.network_for(p.topology, p.costs);
  const IterationPlan& plan = c.plan_for(p.workload, p.strategy, net.gpu_count());
  require_gpus(plan, net);
  const double cost_usd = c.cost.total_usd;
  const double bisection = c.bisection_Bps;
  if (detail == Detail::Full) {
    e.network = c.network;
    e.plan = plan;
    e.cost = c.cost;
  }
  const bool rank_order = p.placement == opt::PlacementKind::RankOrder;
  if (detail == Detail::Row && rank_order) {
    // A sweep's hot path: the cached analytical model plays the plan with rank order.
    if (!plan.feasible) {
      e.row = make_point_result(plan, nullptr, cost_usd, bisection);
      return e;
    }
    if (p.sim.model == sim::NetworkModelKind::Analytical) {
      const sim::SimResult sim = sim::simulate_analytical(c.analytical_for(net, p.sim.comm), plan.graph, net.gpus_per_node());
      e.row = make_point_result(plan, &sim, cost_usd, bisection);
      return e;
    }
    const sim::SimResult sim = sim::simulate_iteration(net, plan.graph, p.sim);
    e.row = make_point_result(plan, &sim, cost_usd, bisection);
    return e;
  }
  const opt::StrategyPlacement placed = opt::place_strategy(net, plan.graph.gpus, plan.tp, plan.pp, p.placement);
  e.placement = placed.placement;
  e.placement_requested = opt::placement_kind_name(p.placement);
  e.placement_method = placed.method;
  e.placement_groups = placed.node_groups;
  if (plan.feasible) {
    e.sim = sim::simulate_iteration(net, plan.graph, p.sim, e.placement);
    e.simulated = true;
  }
  e.row = make_point_result(plan, e.simulated ? &e.sim : nullptr, cost_usd, bisection);
  return e;
}

Evaluation evaluate_config(const Config& config, PointCache& cache, Detail detail,
                           std::optional<opt::OptimizeTarget> optimize) {
  try {
    return evaluate(design_point_from_config(config, optimize), cache, detail);
  } catch (const BadInput& e) {
    key_origins(config).rethrow(e);
  }
}

}  // namespace toposweep
