// The one evaluation path: a design point as given, through an optimizer first, or several jobs
// on one network; at the detail the caller needs.
#include "toposweep/point/evaluate.hpp"

#include <algorithm>

#include "toposweep/interop/chakra.hpp"
#include "toposweep/opt/compression.hpp"
#include "toposweep/opt/strategy_placement.hpp"
#include "toposweep/opt/workload_on.hpp"
#include "toposweep/sim/model_inputs.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/workload/model_library.hpp"

namespace toposweep {

struct PointCache::Impl {
  // Networks by topology spec, several at once: a sweep's axes may vary the topology fastest
  // (perf-1024.ini cycles through 18 networks per plan), so a one-entry cache would rebuild
  // every point's network. Each entry keeps what depends on the network alone: its bisection,
  // its cost per price table and its analytical models (route and collective-plan caches) per
  // communication setting. Least recently used entries go first; the budget bounds entries and
  // arcs so huge networks do not pile up.
  struct NetEntry {
    topology::TopologySpec topo;
    std::shared_ptr<const Network> network;
    double bisection_Bps = PointResult::nan;
    std::vector<std::pair<topology::CostSpec, topology::CostBreakdown>> costs;
    // Its analytical models, shared with the entries whose networks are the same to them
    // (sim/model_inputs.hpp), with the network they were made on.
    struct Models {
      std::shared_ptr<const Network> network;
      std::vector<std::unique_ptr<sim::AnalyticalModel>> list;
    };
    std::shared_ptr<Models> analytical;
    // What its models share with those of its twins (the same topology at power-of-two
    // multiples of the link bandwidth and latency: ring sets, hop distances, path sums;
    // collective/memo.hpp), and the hash that finds them (arc_structure_hash).
    std::shared_ptr<TwinShared> twins;
    std::uint64_t structure = 0;
    std::uint64_t used = 0;
  };
  // A sweep meets its networks in turn, as many as its topology axes make (perf-1024-wide.ini:
  // 162 per plan): a bound below that count would rebuild every point's network (least recently
  // used out first is the worst order for a cycle). The arcs bound what they hold.
  explicit Impl(PointCacheLimits l) : limits(l) {}
  PointCacheLimits limits;
  std::vector<std::unique_ptr<NetEntry>> nets;
  std::size_t net_arcs = 0;
  std::uint64_t clock = 0;
  std::vector<std::pair<topology::CostSpec, topology::PriceTable>> prices;
  // Models and devices by name (a file is read once).
  std::map<std::string, Model> models;
  std::map<std::string, Device> devices;
  // Plans by workload, strategy and GPU count, several at once for the same reason. A plan
  // that does not fit in memory is kept without its task graph (a row needs only its memory).
  struct PlanEntry {
    WorkloadSpec workload;
    StrategySpec strategy;
    std::uint32_t gpus = 0;
    std::vector<std::uint32_t> layout;  // mixed devices: GPUs per server (which rank holds which device)
    std::shared_ptr<const IterationPlan> plan;
    std::uint64_t used = 0;
    // Its graph's communication layouts (by GPUs per node and instance setting), shared by the
    // analytical models of every cached network.
    std::vector<std::unique_ptr<sim::CommLayout>> layouts;
    std::size_t size = 0;  // tasks, dependencies and group members: what its memory scales with
    std::optional<InvalidDesign> failure;  // the error planning threw (plan is null then)
  };
  // At most this many plans, and this many tasks + dependencies + group members over all of them
  // (a plan on 131,072 GPUs holds millions of group members).
  static constexpr std::size_t kMaxPlans = 16;
  static constexpr std::size_t kMaxPlanSize = std::size_t{1} << 24;
  std::size_t plan_size = 0;
  std::vector<PlanEntry> plans;
  // Per-layer costs by (model, device, strategy shape): a sweep's points share them.
  LayerCostCache layer_costs;
  // The row path's simulation result, reused so a warm point allocates nothing for it.
  sim::SimResult row_sim;

  NetEntry& entry_for(const topology::TopologySpec& topo) {
    ++clock;
    for (auto& e : nets)
      if (e->topo == topo) {
        e->used = clock;
        return *e;
      }
    auto e = std::make_unique<NetEntry>();
    e->network = std::make_shared<const Network>(build_network(topo));
    e->topo = topo;
    e->bisection_Bps = network_bisection_Bps(*e->network);
    e->structure = arc_structure_hash(*e->network);
    std::shared_ptr<HopDistances> same_arcs;  // distances of a network with the same arcs
    for (const auto& other : nets) {
      if (other->structure != e->structure) continue;
      if (!e->analytical && sim::same_model_inputs(*other->network, *e->network))
        e->analytical = other->analytical;
      if (!e->twins) {
        if (power_of_two_twin_factors(*other->network, *e->network))
          e->twins = other->twins;
        else if (!same_arcs && same_arc_structure(*other->network, *e->network))
          same_arcs = other->twins->distances;
      }
      if (e->twins && e->analytical) break;
    }
    if (!e->analytical) e->analytical = std::make_shared<NetEntry::Models>(NetEntry::Models{e->network, {}});
    if (!e->twins) {
      e->twins = std::make_shared<TwinShared>();
      if (same_arcs) e->twins->distances = std::move(same_arcs);
    }
    e->used = clock;
    const std::size_t arcs = e->network->arc_count();
    while (!nets.empty() && (nets.size() >= limits.networks || net_arcs + arcs > limits.network_arcs)) {
      auto lru = std::min_element(nets.begin(), nets.end(),
                                  [](const auto& a, const auto& b) { return a->used < b->used; });
      net_arcs -= (*lru)->network->arc_count();
      nets.erase(lru);
    }
    net_arcs += arcs;
    nets.push_back(std::move(e));
    return *nets.back();
  }

  const topology::CostBreakdown& cost_for(NetEntry& e, const topology::CostSpec& costs) {
    for (const auto& [spec, cost] : e.costs)
      if (spec == costs) return cost;
    const topology::PriceTable* table = nullptr;
    for (const auto& [spec, t] : prices)
      if (spec == costs) table = &t;
    if (!table) table = &prices.emplace_back(costs, topology::price_table(costs)).second;
    return e.costs.emplace_back(costs, topology::network_cost(*e.network, *table)).second;
  }

  const Network& network_for(const topology::TopologySpec& topo, const topology::CostSpec& costs) {
    NetEntry& e = entry_for(topo);
    cost_for(e, costs);
    return *e.network;
  }

  const Model& model(const std::string& name) {
    auto m = models.find(name);
    if (m == models.end()) m = models.emplace(name, resolve_model(name, "key model.name")).first;
    return m->second;
  }
  const Device& device(const std::string& name) {
    auto d = devices.find(name);
    if (d == devices.end()) d = devices.emplace(name, resolve_device(name, "key server.device")).first;
    return d->second;
  }

  Workload workload(const WorkloadSpec& spec, std::uint32_t gpus) {
    return make_workload(spec, gpus, model(spec.model), device(spec.device));
  }

  // The workload on a network's servers (mixed server.device lists laid over them).
  Workload workload(const WorkloadSpec& spec, const Network& net) {
    if (!mixed_devices(spec.device)) {
      opt::check_device_servers(spec, net);
      return workload(spec, net.gpu_count());
    }
    return opt::workload_on(
        spec, net, [&](const std::string& name) { return model(name); },
        [&](const std::string& name) { return device(name); });
  }

  // The plan of (w, s) on net's GPUs, or nullptr for a design that cannot exist: `failure` then
  // points at the error its planning threw (valid until the next call). `graph_needed`: the
  // caller plays the plan even when it does not fit (Detail::Full).
  const IterationPlan* plan_for(const WorkloadSpec& w, const StrategySpec& s, const Network& net,
                                bool graph_needed, const InvalidDesign*& failure) {
    ++clock;
    const std::uint32_t gpus = net.gpu_count();
    std::vector<std::uint32_t> layout;
    if (mixed_devices(w.device)) layout = net.gpus_of_nodes();
    for (auto it = plans.begin(); it != plans.end(); ++it)
      if (it->gpus == gpus && it->strategy == s && it->workload == w && it->layout == layout) {
        if (it->failure) {
          it->used = clock;
          failure = &*it->failure;
          return nullptr;
        }
        if (graph_needed && !it->plan->feasible && it->plan->graph.tasks.empty()) {
          drop_plan(it);
          break;
        }
        it->used = clock;
        last_plan = &*it;
        return it->plan.get();
      }
    std::shared_ptr<const IterationPlan> plan;
    std::optional<InvalidDesign> failed;
    try {
      if (!w.chakra.empty()) {
        // model.chakra: the recorded iteration, as read (no workload or strategy to plan).
        plan = std::make_shared<const IterationPlan>(interop::read_chakra(w.chakra, w.chakra_replicas));
      } else {
        const Workload wl = workload(w, net);
        const Strategy strategy = resolve_strategy(s, wl, gpus);
        if (!graph_needed) {
          IterationPlan memory_only = plan_memory(wl, strategy);
          if (!memory_only.feasible) plan = std::make_shared<const IterationPlan>(std::move(memory_only));
        }
        if (!plan) plan = std::make_shared<const IterationPlan>(plan_iteration(wl, strategy, &layer_costs));
      }
    } catch (const InvalidDesign& e) {
      // A design that cannot exist (degrees that do not divide the batch, ...) fails alike for
      // every network: remembered, so the points that share it cost a lookup each.
      failed = e;
    }
    if (failed) {
      if (plans.size() >= kMaxPlans)
        drop_plan(std::min_element(plans.begin(), plans.end(),
                                   [](const auto& a, const auto& b) { return a.used < b.used; }));
      plans.push_back(PlanEntry{w, s, gpus, layout, nullptr, clock, {}, 0, std::move(failed)});
      failure = &*plans.back().failure;
      return nullptr;
    }
    std::size_t size = plan->graph.tasks.size() + plan->graph.deps.size();
    for (const GroupSet& gs : plan->graph.group_sets)
      for (const auto& g : gs.groups) size += g.size();
    while (!plans.empty() && (plans.size() >= kMaxPlans || plan_size + size > kMaxPlanSize))
      drop_plan(std::min_element(plans.begin(), plans.end(),
                                 [](const auto& a, const auto& b) { return a.used < b.used; }));
    plans.push_back(PlanEntry{w, s, gpus, std::move(layout), std::move(plan), clock, {}, size, std::nullopt});
    plan_size += size;
    last_plan = &plans.back();
    return plans.back().plan.get();
  }

  // The analytical models memoise per graph address: a dropped plan's graph is forgotten first.
  void drop_plan(std::vector<PlanEntry>::iterator it) {
    for (auto& e : nets)
      for (auto& m : e->analytical->list) {
        if (!it->plan) break;
        m->forget_graph(&it->plan->graph);
        for (const auto& l : it->layouts) m->forget_layout(l.get());
      }
    plan_size -= it->size;
    plans.erase(it);
  }

  PlanEntry* last_plan = nullptr;  // the entry plan_for returned last

  const sim::CommLayout& layout_for(PlanEntry& p, std::uint32_t gpus_per_node, bool all_instances) {
    for (const auto& l : p.layouts)
      if (l->gpus_per_node() == gpus_per_node && l->all_instances() == all_instances) return *l;
    return *p.layouts.emplace_back(
        std::make_unique<sim::CommLayout>(p.plan->graph, gpus_per_node, all_instances));
  }

  sim::AnalyticalModel& analytical_for(NetEntry& e, const sim::CommSettings& comm) {
    for (auto& m : e.analytical->list)
      if (m->settings() == comm) return *m;
    return *e.analytical->list.emplace_back(
        std::make_unique<sim::AnalyticalModel>(*e.analytical->network, comm, e.twins));
  }
};

PointCache::PointCache() : PointCache(PointCacheLimits{}) {}
PointCache::PointCache(PointCacheLimits limits) : impl_(std::make_unique<Impl>(limits)) {}
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
  r.cp = plan.cp;
  r.ep = plan.ep;
  r.etp = plan.strategy.expert_tp();
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

// model.chakra plays a recorded iteration: nothing is planned, so the modes that plan (an
// optimizer, several jobs, strategy.compression = sfb) have nothing to work on.
void check_chakra_mode(const DesignPoint& p) {
  if (p.workload.chakra.empty()) return;
  if (!p.jobs.empty())
    throw BadInput("model.chakra plays one recorded job; simulate.jobs plans several", "key model.chakra");
  if (p.optimize)
    throw BadInput("model.chakra plays a recorded iteration; an optimizer plans its own", "key model.chakra");
  if (p.strategy.compression == Compression::Sfb)
    throw BadInput("model.chakra plays a recorded iteration; strategy.compression = sfb plans one",
                   "key model.chakra");
}

Evaluation check_only(const DesignPoint& p, PointCache::Impl& c) {
  if (!p.jobs.empty())
    throw BadInput("multi-job mode runs in `toposweep simulate`; a sweep point is one job",
                   "key simulate.jobs");
  if (!p.workload.chakra.empty()) {
    const InvalidDesign* failure = nullptr;
    const Network& net = c.network_for(p.topology, p.costs);
    if (const IterationPlan* plan = c.plan_for(p.workload, p.strategy, net, true, failure))
      require_gpus(*plan, net);
    return {};
  }
  const bool own_network = p.optimize && *p.optimize == opt::OptimizeTarget::Alternating;
  const Network* net = nullptr;
  if (!own_network) check_step([&] { net = &c.network_for(p.topology, p.costs); });
  if (p.optimize && *p.optimize == opt::OptimizeTarget::Bandwidth &&
      !std::holds_alternative<topology::MultiDimSpec>(p.topology.family))
    return {};  // the optimizer reports it as an impossible design
  const std::uint32_t gpus = own_network
                                 ? p.optimize_settings->servers * p.optimize_settings->finder.server.gpus
                             : net ? net->gpu_count()
                                   : 0;
  if (gpus == 0) return {};
  check_step([&] {
    const Workload w = own_network ? c.workload(p.workload, gpus) : c.workload(p.workload, *net);
    // The plan's memory and GPU count are all the check needs (its task graph adds no reading).
    if (!own_network) require_gpus(plan_memory(w, resolve_strategy(p.strategy, w, gpus)), *net);
  });
  return {};
}

Evaluation evaluate_jobs(const DesignPoint& p, PointCache::Impl& c, Detail detail) {
  if (detail != Detail::Full)
    throw BadInput("multi-job mode runs in `toposweep simulate`; a sweep point is one job",
                   "key simulate.jobs");
  if (mixed_devices(p.workload.device))
    throw BadInput("multi-job mode runs on servers of one device; give server.device one name",
                   "key server.device");
  Evaluation e;
  e.network = std::make_shared<const Network>(build_network(p.topology));
  const Network& net = *e.network;
  const std::uint32_t g = net.gpus_per_node();
  std::uint32_t next_server = 0;
  for (const JobSpec& s : p.jobs) {
    if (next_server + s.servers > net.compute_count())
      throw BadInput("the jobs need " + std::to_string(next_server + s.servers) +
                         "+ servers but the topology has " + std::to_string(net.compute_count()),
                     "key simulate.jobs");
    std::uint32_t job_gpus = 0;
    for (std::uint32_t v = next_server; v < next_server + s.servers; ++v) job_gpus += net.gpus_on(v);
    if (job_gpus % (s.tp * s.pp) != 0)
      throw InvalidDesign("job '" + s.model + ":" + std::to_string(s.servers) +
                              "': tp x pp = " + std::to_string(s.tp * s.pp) + " does not divide its " +
                              std::to_string(job_gpus) + " GPUs",
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
    if (net.uniform_gpus()) {
      j.placement = rank_order_placement(r.plan.graph.gpus, g);
    } else {
      const auto counts = net.gpus_of_nodes();
      j.placement = rank_order_placement(
          r.plan.graph.gpus, std::span<const std::uint32_t>(counts).subspan(r.first_server, r.spec.servers));
    }
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
  const opt::OptimizeResult r =
      opt::optimize_design_point(optimize_problem(p), *p.optimize, p.single_collective);
  if (detail == Detail::Full) {
    e.optimized = r;
    return e;
  }
  // The optimizer's design, played once more for the breakdown the row carries.
  const Network& net = r.network;
  const Workload workload = c.workload(p.workload, net);
  const IterationPlan plan = plan_iteration(workload, r.strategy);
  Placement placement = sim::rank_order_on(net, plan.graph.gpus);
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

// The plan played where `placed` puts it (the simulation unless it does not fit) into `e`.
void play_placed(Evaluation& e, const IterationPlan& plan, const opt::StrategyPlacement& placed,
                 const DesignPoint& p, const Network& net, double cost_usd, double bisection) {
  e.placement = placed.placement;
  e.placement_requested = opt::placement_kind_name(p.placement);
  e.placement_method = placed.method;
  e.placement_groups = placed.node_groups;
  if (plan.feasible) {
    e.sim = sim::simulate_iteration(net, plan.graph, p.sim, e.placement);
    e.simulated = true;
  }
  e.row = make_point_result(plan, e.simulated ? &e.sim : nullptr, cost_usd, bisection);
}

// strategy.compression = sfb: the layers are chosen on this network where the plan runs, so the
// plan is built here (not shared across networks) and played by simulate_iteration.
Evaluation evaluate_sfb(const DesignPoint& p, PointCache::Impl& c, PointCache::Impl::NetEntry& entry,
                        Detail detail) {
  Evaluation e;
  const Network& net = *entry.network;
  const topology::CostBreakdown& cost = c.cost_for(entry, p.costs);
  const Workload w = c.workload(p.workload, net);
  const Strategy s = resolve_strategy(p.strategy, w, net.gpu_count());
  IterationPlan plain = plan_memory(w, s);
  require_gpus(plain, net);
  if (detail == Detail::Full) {
    e.network = entry.network;
    e.cost = cost;
  }
  if (!plain.feasible) {
    e.row = make_point_result(plain, nullptr, cost.total_usd, entry.bisection_Bps);
    if (detail == Detail::Full) e.plan = std::move(plain);
    return e;
  }
  const opt::StrategyPlacement placed =
      opt::place_strategy(net, s.gpus(), s.tp, s.pp, p.placement, 1, opt::device_of_servers(w, net));
  opt::SfbChoice choice;
  IterationPlan plan = opt::plan_on(net, w, s, placed.placement, p.sim, &c.layer_costs, &choice);
  play_placed(e, plan, placed, p, net, cost.total_usd, entry.bisection_Bps);
  if (detail == Detail::Full) {
    e.plan = std::move(plan);
    e.compression = std::move(choice);
  }
  return e;
}

}  // namespace

Evaluation evaluate(const DesignPoint& p, PointCache& cache, Detail detail) {
  PointCache::Impl& c = cache.impl();
  check_chakra_mode(p);
  if (detail == Detail::Check) return check_only(p, c);
  if (!p.jobs.empty()) return evaluate_jobs(p, c, detail);
  if (p.optimize) return evaluate_optimized(p, c, detail);

  Evaluation e;
  PointCache::Impl::NetEntry& entry = c.entry_for(p.topology);
  const Network& net = *entry.network;
  const topology::CostBreakdown& cost = c.cost_for(entry, p.costs);
  const bool rank_order = p.placement == opt::PlacementKind::RankOrder;
  // The row path plays cached layouts built from a GPU count per server.
  const bool row_path = detail == Detail::Row && rank_order && net.uniform_gpus();
  if (p.strategy.compression == Compression::Sfb) return evaluate_sfb(p, c, entry, detail);
  const InvalidDesign* failure = nullptr;
  const IterationPlan* planned = c.plan_for(p.workload, p.strategy, net, !row_path, failure);
  if (!planned) {
    if (detail != Detail::Row) throw *failure;
    e.invalid = *failure;  // a sweep row: returned, not thrown (a sweep meets it at many points)
    return e;
  }
  const IterationPlan& plan = *planned;
  require_gpus(plan, net);
  const double cost_usd = cost.total_usd;
  const double bisection = entry.bisection_Bps;
  if (detail == Detail::Full) {
    e.network = entry.network;
    e.plan = plan;
    e.cost = cost;
  }
  if (row_path) {
    // A sweep's hot path: the cached analytical model plays the plan with rank order.
    if (!plan.feasible) {
      e.row = make_point_result(plan, nullptr, cost_usd, bisection);
      return e;
    }
    if (p.sim.model == sim::NetworkModelKind::Analytical) {
      sim::SimResult& sim = c.row_sim;
      sim.model = sim::NetworkModelKind::Analytical;
      sim.engine.jobs.resize(1);
      sim.engine.jobs[0] =
          c.analytical_for(entry, p.sim.comm)
              .play_times(c.layout_for(*c.last_plan, net.gpus_per_node(),
                                       p.sim.comm.analytical_all_instances || !net.uniform_servers()));
      e.row = make_point_result(plan, &sim, cost_usd, bisection);
      return e;
    }
    const sim::SimResult sim = sim::simulate_iteration(net, plan.graph, p.sim);
    e.row = make_point_result(plan, &sim, cost_usd, bisection);
    return e;
  }
  std::vector<std::uint16_t> device_of_server;
  if (mixed_devices(p.workload.device))
    device_of_server = server_device_kinds(p.workload.device, net.compute_count());
  play_placed(e, plan,
              opt::place_strategy(net, plan.graph.gpus, plan.tp, plan.pp, p.placement, 1, device_of_server),
              p, net, cost_usd, bisection);
  return e;
}

namespace {

// design_point_from_config, then evaluate; a thrown error names the line that set its key.
Evaluation evaluate_at_origin(const Config& config, PointCache& cache, Detail detail,
                              std::optional<opt::OptimizeTarget> optimize) {
  try {
    return evaluate(design_point_from_config(config, optimize), cache, detail);
  } catch (const BadInput& b) {
    rethrow_at_origin(config, b);
  }
}

}  // namespace

Evaluation evaluate_config(const Config& config, PointCache& cache, Detail detail,
                           std::optional<opt::OptimizeTarget> optimize) {
  Evaluation e = evaluate_at_origin(config, cache, detail, optimize);
  if (e.invalid) rethrow_at_origin(config, *e.invalid);
  return e;
}

PointResult evaluate_row(const Config& config, PointCache& cache) {
  Evaluation e = evaluate_at_origin(config, cache, Detail::Row, std::nullopt);
  if (e.invalid) return invalid_design_result(e.invalid->what(), located_at_origin(config, *e.invalid));
  return std::move(e.row);
}

}  // namespace toposweep
