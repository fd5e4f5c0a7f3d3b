#include "toposweep/opt/design_point.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "toposweep/opt/strategy_placement.hpp"
#include "toposweep/opt/workload_on.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/topology/cost.hpp"
#include "toposweep/topology/spec.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"
#include "toposweep/util/units.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/spec.hpp"

namespace toposweep::opt {
namespace {

double network_cost_usd(const Network& net, const topology::CostSpec& costs) {
  return topology::network_cost(net, topology::price_table(costs)).total_usd;
}

// Dimensions a group of NPUs spans, with the number of distinct coordinates along each.
std::vector<DimSpan> spans_of(const std::vector<std::uint32_t>& npus, const std::vector<Dimension>& dims) {
  std::vector<DimSpan> out;
  std::uint64_t stride = 1;
  for (std::uint32_t k = 0; k < dims.size(); ++k) {
    std::set<std::uint64_t> coords;
    for (std::uint32_t v : npus) coords.insert((v / stride) % dims[k].size);
    if (coords.size() > 1) out.push_back({k, static_cast<std::uint32_t>(coords.size())});
    stride *= dims[k].size;
  }
  return out;
}

// The communication of one iteration as hierarchical operations (one instance per task:
// instances of a task run concurrently on disjoint groups of the same shape).
std::vector<HierarchicalComm> iteration_comms(const TaskGraph& g, const Placement& placement,
                                              const std::vector<Dimension>& dims) {
  std::vector<HierarchicalComm> out;
  for (const auto& t : g.tasks) {
    if (t.kind == TaskKind::Compute || t.bytes <= 0) continue;
    const auto& groups = g.group_sets.at(t.group_set).groups;
    if (groups.empty()) continue;
    std::vector<std::uint32_t> npus;
    for (std::uint32_t r : groups.front()) npus.push_back(placement.node_of_gpu.at(r));
    HierarchicalComm c;
    c.op = t.op;
    c.point_to_point = t.kind == TaskKind::Transfer;
    c.bytes = t.bytes;
    c.count = t.repeat;
    c.dims = spans_of(npus, dims);
    if (!c.dims.empty()) out.push_back(std::move(c));
  }
  return out;
}

// The problem's multidim spec with per-dimension bandwidths `bw`.
topology::TopologySpec with_dim_bandwidth(const topology::TopologySpec& spec, const std::vector<double>& bw) {
  topology::TopologySpec out = spec;
  auto& dims = std::get<topology::MultiDimSpec>(out.family).dims;
  for (std::size_t k = 0; k < dims.size() && k < bw.size(); ++k) dims[k].bandwidth_Bps = bw[k];
  return out;
}

double simulate_with_dim_bandwidth(const OptimizeProblem& p, const std::vector<double>& bw,
                                   const TaskGraph& graph, double* cost) {
  const Network net = build_network(with_dim_bandwidth(p.topology, bw));
  *cost = network_cost_usd(net, p.costs);
  return sim::simulate_iteration(net, graph, p.sim).job(0).iteration_time_s;
}

OptimizeResult optimize_bandwidth(const OptimizeProblem& prob,
                                  const std::optional<SingleCollective>& single) {
  OptimizeResult out;
  out.target = OptimizeTarget::Bandwidth;
  if (!std::holds_alternative<topology::MultiDimSpec>(prob.topology.family))
    throw BadInput("bandwidth allocation needs a multidim network (topology.kind = multidim)",
                   "key topology.kind");
  const Network net = build_network(prob.topology);
  const auto& dims = net.info().dims;
  const auto& options = prob.sim;
  const OptimizeSettings& set = prob.settings;
  const std::uint32_t npus = net.compute_count();

  BandwidthProblem p;
  p.dim_count = dims.size();
  p.npus = npus;
  const auto table = topology::price_table(prob.costs);
  std::vector<std::string> levels = net.info().dim_levels;
  if (levels.size() != dims.size()) levels = topology::default_dim_levels(dims.size());
  for (std::size_t k = 0; k < dims.size(); ++k) {
    Dimension unit = dims[k];
    unit.bandwidth_Bps = 1.0;  // the LIBRA cost is linear in bandwidth: this is the slope
    p.unit_price.push_back(topology::libra_dimension_cost(npus, unit, levels[k], table) / npus);
  }
  p.model = options.comm.hierarchical_pipelined ? CommTimeModel::Pipelined : CommTimeModel::Sequential;
  out.comm_model = comm_time_model_name(p.model);
  p.objective = set.objective;
  p.total_bandwidth_Bps = set.total_bandwidth_Bps;
  p.cost_budget_usd = set.cost_budget_usd;
  if (!p.total_bandwidth_Bps && !p.cost_budget_usd) {
    double total = 0;
    for (const auto& d : dims) total += d.bandwidth_Bps;
    if (!(total > 0))
      throw BadInput("set optimize.total_bandwidth or optimize.cost_budget (or topology.dim_bandwidth)",
                     "key optimize.total_bandwidth");
    p.total_bandwidth_Bps = total;
  }
  p.lower_Bps = set.dim_bandwidth_min_Bps;
  p.upper_Bps = set.dim_bandwidth_max_Bps;
  p.descending = set.descending;
  p.relative_tolerance = set.tolerance;

  IterationPlan plan;
  if (single) {
    out.single_collective = true;
    HierarchicalComm c;
    c.op = single->op;
    c.bytes = single->bytes;
    for (std::uint32_t k = 0; k < dims.size(); ++k)
      if (dims[k].size > 1) c.dims.push_back({k, dims[k].size});
    p.workload = {c};
  } else {
    const Workload w = make_workload(prob.workload, npus);
    plan = plan_iteration(w, resolve_strategy(prob.strategy, w, npus));
    out.strategy = plan.strategy;
    p.workload = iteration_comms(plan.graph, rank_order_placement(npus, net.gpus_per_node()), dims);
  }
  const auto a = allocate_bandwidth(p);
  out.bandwidth = a;
  out.baseline = "equal split of the same budget";
  if (single || !plan.feasible) {
    out.feasible = single.has_value() || plan.feasible;
    out.time_s = a.time_s;
    out.baseline_time_s = a.baseline_time_s;
    out.cost_usd = a.cost_usd;
  } else {
    double base_cost = 0;
    out.time_s = simulate_with_dim_bandwidth(prob, a.dim_bandwidth_Bps, plan.graph, &out.cost_usd);
    out.baseline_time_s = simulate_with_dim_bandwidth(prob, a.baseline_bandwidth_Bps, plan.graph, &base_cost);
  }
  out.network = build_network(with_dim_bandwidth(prob.topology, a.dim_bandwidth_Bps));
  return out;
}

struct FixedPoint {
  Network network;
  Workload workload;
  Strategy strategy;
  sim::SimOptions options;
};

FixedPoint fixed_point(const OptimizeProblem& p) {
  FixedPoint f;
  f.network = build_network(p.topology);
  f.workload = workload_on(p.workload, f.network);
  f.strategy = resolve_strategy(p.strategy, f.workload, f.network.gpu_count());
  f.options = p.sim;
  return f;
}

OptimizeResult optimize_topology(const OptimizeProblem& p) {
  OptimizeResult out;
  out.target = OptimizeTarget::Topology;
  const FixedPoint f = fixed_point(p);
  out.strategy = f.strategy;
  out.baseline = "the configured topology (" + f.network.info().kind + ")";
  StrategyScorer base(f.workload, f.network, f.options);
  const auto t0 = base.iteration_time(f.strategy);
  if (!t0) throw BadInput("the configured strategy does not fit in device memory", "key strategy.dp");
  out.baseline_time_s = *t0;
  const FinderSettings& settings = p.settings.finder;
  const std::uint32_t servers = f.network.compute_count();
  TopologyDesign d =
      find_topology(strategy_traffic(f.workload, f.strategy, servers, f.network.gpus_per_node()), settings);
  StrategyScorer scorer(f.workload, d.network, f.options, d.position_of_node);
  out.time_s = *scorer.iteration_time(f.strategy);
  out.strides = d.strides;
  out.mp_links = d.mp_links;
  out.position_of_node = d.position_of_node;
  out.network = d.network;
  out.cost_usd = network_cost_usd(d.network, p.costs);
  out.simulations = base.simulations() + scorer.simulations();
  return out;
}

SearchProgress& search_progress() {
  static SearchProgress hook;
  return hook;
}

SearchTeam*& search_team() {
  static SearchTeam* team = nullptr;
  return team;
}

OptimizeResult optimize_strategy(const OptimizeProblem& p) {
  OptimizeResult out;
  out.target = OptimizeTarget::Strategy;
  // The configured strategy is only the baseline (and MCMC's start): a search must not need a
  // valid one, e.g. when the default pure data parallelism does not divide the batch.
  FixedPoint f;
  f.network = build_network(p.topology);
  f.workload = workload_on(p.workload, f.network);
  f.options = p.sim;
  std::optional<std::string> invalid;
  try {
    f.strategy = resolve_strategy(p.strategy, f.workload, f.network.gpu_count());
  } catch (const InvalidDesign& e) {
    invalid = e.what();
  }
  StrategyScorer scorer(f.workload, f.network, f.options);
  // Placement and strategy are searched together: every candidate runs where `simulate` with
  // the same optimize.placement would put it (TAG's joint deployment, docs/optimizers.md).
  const PlacementKind placement = p.settings.placement;
  scorer.use_placement(placement);
  StrategySpace space = p.settings.space;
  // Tensor parallelism within a server: on servers of different sizes, groups that divide every size.
  space.gpus_per_server = f.network.gpus_per_node();
  for (VertexId v = 0; v < f.network.compute_count(); ++v)
    space.gpus_per_server = std::gcd(space.gpus_per_server, f.network.gpus_on(v));
  std::optional<double> t0;
  Strategy start = f.strategy;
  if (invalid) {
    out.baseline = "none (the configured strategy is not a valid design: " + *invalid + ")";
  } else {
    t0 = scorer.iteration_time(f.strategy);
    out.baseline = "the configured strategy";
  }
  if (!t0 && !invalid) {
    out.baseline = "pure data parallelism (the configured strategy does not fit)";
    start = space.fixed(pure_data_parallel(f.network.gpu_count()));
    try {
      t0 = scorer.iteration_time(start);
    } catch (const InvalidDesign& e) {
      out.baseline = "none (the configured strategy does not fit; pure data parallelism is not valid: " +
                     std::string(e.what()) + ")";
    }
  }
  out.baseline_time_s = t0 ? *t0 : std::numeric_limits<double>::quiet_NaN();
  const SearchMethod method =
      resolve_search_method(p.settings.search, f.workload, f.network.gpu_count(), space);
  StrategySearchResult r;
  const std::uint64_t simulated_before = scorer.simulations();
  const bool exhaustive = method == SearchMethod::Exhaustive || !t0;
  if (exhaustive) {
    r = exhaustive_strategy_search(scorer, f.workload, space, p.settings.top, search_progress(),
                                   search_team(), p.settings.bound);
  } else {
    r = mcmc_strategy_search(scorer, f.workload, start, p.settings.mcmc, space);
  }
  out.search_method = r.method;
  out.search_requested = p.settings.search == SearchMethod::Auto ? "auto" : r.method;
  out.top = r.top;
  out.candidates = r.candidates;
  out.infeasible = r.infeasible;
  out.pruned = r.pruned;
  out.strategy = r.best;
  out.time_s = r.iteration_time_s;
  out.network = f.network;
  out.strides = f.network.info().strides;
  if (placement == PlacementKind::Metis) {
    // The best strategy's placement, as a server renumbering so replays (point.optimize) use it.
    const Placement where = scorer.placement_of(r.best);
    const Placement rank = rank_order_placement(r.best.gpus(), f.network.gpus_per_node());
    out.placement_method = where.node_of_gpu == rank.node_of_gpu ? "rank_order" : "metis";
    if (out.placement_method == "metis") {
      const std::uint32_t g = f.network.gpus_per_node();
      out.position_of_node.assign(r.best.gpus() / g, 0);
      for (std::uint32_t gpu = 0; gpu < r.best.gpus(); ++gpu)
        out.position_of_node[gpu / g] = where.node_of_gpu[gpu];
    }
  }
  out.cost_usd = network_cost_usd(f.network, p.costs);
  // Split over ranks, the serial search's count: the same on any number of ranks.
  out.simulations = exhaustive ? simulated_before + r.simulations : scorer.simulations();
  return out;
}

OptimizeResult optimize_placement(const OptimizeProblem& p) {
  OptimizeResult out;
  out.target = OptimizeTarget::Placement;
  out.baseline = "rank-order placement";
  out.network = build_network(p.topology);
  const std::uint32_t gpus = out.network.gpu_count();
  const Workload w = workload_on(p.workload, out.network);
  const IterationPlan plan = plan_iteration(w, resolve_strategy(p.strategy, w, gpus));
  if (plan.graph.gpus > out.network.gpu_count())
    throw BadInput("the strategy needs " + std::to_string(plan.graph.gpus) + " GPUs but the topology holds " +
                       std::to_string(out.network.gpu_count()),
                   "topology.servers x server.gpus");
  if (!plan.feasible)
    throw BadInput("the configured strategy does not fit in device memory (" + plan.infeasible_reason + ")",
                   "key strategy.dp");
  out.strategy = plan.strategy;
  const auto& options = p.sim;
  const StrategyPlacement rank =
      place_strategy(out.network, plan.graph.gpus, plan.tp, plan.pp, PlacementKind::RankOrder);
  const StrategyPlacement metis = place_strategy(out.network, plan.graph.gpus, plan.tp, plan.pp,
                                                 PlacementKind::Metis, 1, device_of_servers(w, out.network));
  const auto iteration_time = [&](const Placement& placement) {
    return sim::simulate_iteration(out.network, plan.graph, options, placement).job(0).iteration_time_s;
  };
  out.baseline_time_s = iteration_time(rank.placement);
  out.time_s = metis.method == "metis" ? iteration_time(metis.placement) : out.baseline_time_s;
  out.simulations = metis.method == "metis" ? 2 : 1;
  out.placement_method = metis.method;
  if (metis.method == "metis") {
    // As a server renumbering, so callers replaying the design (point.optimize) move rank order.
    const std::uint32_t g = out.network.gpus_per_node();
    out.position_of_node.assign(plan.graph.gpus / g, 0);
    for (std::uint32_t r = 0; r < plan.graph.gpus; ++r)
      out.position_of_node[r / g] = metis.placement.node_of_gpu[r];
  }
  out.placement_grouped = metis.grouped;
  out.placement_groups = metis.node_groups;
  out.placement_internal_bandwidth_Bps = metis.internal_bandwidth_Bps;
  out.rank_order_internal_bandwidth_Bps = metis.rank_order_internal_bandwidth_Bps;
  out.cost_usd = network_cost_usd(out.network, p.costs);
  return out;
}

OptimizeResult optimize_alternating(const OptimizeProblem& p) {
  OptimizeResult out;
  out.target = OptimizeTarget::Alternating;
  const OptimizeSettings& set = p.settings;
  AlternatingSettings s;
  s.servers = set.servers;
  s.finder = set.finder;
  s.sim = p.sim;
  s.search = set.search;
  s.mcmc = set.mcmc;
  s.space = set.space;
  s.patience = set.patience;
  s.max_rounds = set.max_rounds;
  s.time_budget_s = set.time_budget_s;
  if (s.time_budget_s < 0) throw BadInput("the time budget must not be negative", "key optimize.time_budget");
  const Workload w = make_workload(p.workload, s.servers * s.finder.server.gpus);
  s.space.gpus_per_server = s.finder.server.gpus;
  s.search = resolve_search_method(s.search, w, s.servers * s.finder.server.gpus, s.space);
  const auto r = alternating_optimize(w, s);
  out.baseline = "pure data parallelism on its TopologyFinder network (round 0)";
  out.baseline_time_s = r.baseline_time_s;
  out.time_s = r.best_time_s;
  out.strategy = r.best_strategy;
  out.network = r.best_design.network;
  out.strides = r.best_design.strides;
  out.mp_links = r.best_design.mp_links;
  out.position_of_node = r.best_design.position_of_node;
  out.rounds = r.rounds;
  out.stop_reason = r.stop_reason;
  out.search_method = s.search == SearchMethod::Mcmc ? "mcmc" : "exhaustive";
  out.search_requested = set.search == SearchMethod::Auto ? "auto" : out.search_method;
  out.cost_usd = network_cost_usd(out.network, p.costs);
  for (const auto& round : r.rounds) out.simulations += round.simulations;
  return out;
}

nlohmann::json links_json(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& links) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& [u, v] : links) a.push_back({u, v});
  return a;
}

}  // namespace

void set_strategy_search_progress(SearchProgress progress) {
  search_progress() = std::move(progress);
}

void set_strategy_search_team(SearchTeam* team) {
  search_team() = team;
}

OptimizeResult optimize_design_point(const OptimizeProblem& problem, OptimizeTarget target,
                                     const std::optional<SingleCollective>& single) {
  if (single && target != OptimizeTarget::Bandwidth)
    throw BadInput("--op/--bytes (a single collective) only apply to --target bandwidth", "command line");
  // These targets build their own networks of identical servers: per-server lists are refused,
  // naming the first such key.
  if (target == OptimizeTarget::Bandwidth || target == OptimizeTarget::Topology ||
      target == OptimizeTarget::Alternating) {
    const topology::ServerSpec* s = topology::server_of(problem.topology);
    const char* key = mixed_devices(problem.workload.device) ? "key server.device"
                      : s && !s->gpus_of_server.empty()      ? "key server.gpus"
                      : s && !s->intra_of_server.empty()     ? "key server.intra_bandwidth"
                                                             : nullptr;
    if (key)
      throw BadInput(std::string("optimize --target ") + optimize_target_name(target) +
                         " builds its own network of identical servers; per-server lists (" + (key + 4) +
                         ") work with --target strategy or placement",
                     key);
  }
  switch (target) {
    case OptimizeTarget::Bandwidth:
      return optimize_bandwidth(problem, single);
    case OptimizeTarget::Topology:
      return optimize_topology(problem);
    case OptimizeTarget::Strategy:
      return optimize_strategy(problem);
    case OptimizeTarget::Alternating:
      return optimize_alternating(problem);
    case OptimizeTarget::Placement:
      return optimize_placement(problem);
  }
  throw RuntimeFailure("unknown optimize target");
}

nlohmann::json optimize_result_to_json(const OptimizeResult& r) {
  nlohmann::json j;
  j["target"] = optimize_target_name(r.target);
  if (r.single_collective) {
    j["time_s"] = r.time_s;
    j["baseline_time_s"] = r.baseline_time_s;
  } else {
    j["iteration_time_s"] = r.time_s;
    j["baseline_iteration_time_s"] = r.baseline_time_s;
    j["strategy"] = strategy_to_json(r.strategy);
  }
  j["feasible"] = r.feasible;
  j["gain"] = r.baseline_time_s / r.time_s;
  j["baseline"] = r.baseline;
  j["cost_usd"] = r.cost_usd;
  j["servers"] = r.network.compute_count();
  if (r.bandwidth) {
    const auto& a = *r.bandwidth;
    j["dim_bandwidth_Bps"] = a.dim_bandwidth_Bps;
    j["baseline_dim_bandwidth_Bps"] = a.baseline_bandwidth_Bps;
    j["comm_model"] = r.comm_model;
    j["comm_time_s"] = a.time_s;
    j["baseline_comm_time_s"] = a.baseline_time_s;
    j["allocation_cost_usd"] = a.cost_usd;
    j["baseline_allocation_cost_usd"] = a.baseline_cost_usd;
    j["objective_value"] = a.objective;
    j["baseline_objective_value"] = a.baseline_objective;
    j["objective_gain"] = a.gain;
    j["certified_gap"] = a.certified_gap;
    j["solver_iterations"] = a.iterations;
    j["baseline_within_bounds"] = a.baseline_within_bounds;
  }
  if (r.target == OptimizeTarget::Topology || r.target == OptimizeTarget::Alternating || !r.strides.empty()) {
    j["strides"] = r.strides;
    j["mp_links"] = links_json(r.mp_links);
    if (!r.position_of_node.empty()) j["server_position"] = r.position_of_node;
  }
  if (r.target == OptimizeTarget::Strategy && !r.placement_method.empty()) {
    j["placement"] = r.placement_method;
    if (!r.position_of_node.empty()) j["server_position"] = r.position_of_node;
  }
  if (r.target == OptimizeTarget::Placement) {
    j["placement"] = r.placement_method;
    j["placement_grouped"] = r.placement_grouped;
    j["node_groups"] = r.placement_groups;
    j["internal_bandwidth_Bps"] = r.placement_internal_bandwidth_Bps;
    j["rank_order_internal_bandwidth_Bps"] = r.rank_order_internal_bandwidth_Bps;
  }
  if (!r.search_method.empty()) j["search"] = r.search_method;
  if (!r.search_requested.empty()) j["search_requested"] = r.search_requested;
  j["simulations"] = r.simulations;
  if (r.target == OptimizeTarget::Strategy) {
    j["candidates"] = r.candidates;
    j["infeasible"] = r.infeasible;
    j["pruned"] = r.pruned;
    if (!r.top.empty()) {
      nlohmann::json top = nlohmann::json::array();
      for (const auto& t : r.top)
        top.push_back({{"strategy", strategy_to_json(t.strategy)},
                       {"iteration_time_s", t.iteration_time_s},
                       {"gap", t.iteration_time_s / r.top.front().iteration_time_s - 1}});
      j["top"] = top;
    }
  }
  if (r.target == OptimizeTarget::Alternating) {
    nlohmann::json rounds = nlohmann::json::array();
    for (const auto& round : r.rounds) {
      rounds.push_back({{"round", round.round},
                        {"iteration_time_s", round.iteration_time_s},
                        {"best_time_s", round.best_time_s},
                        {"strategy", strategy_to_json(round.strategy)},
                        {"strides", round.strides},
                        {"mp_links", links_json(round.mp_links)},
                        {"ring_ports", round.ring_ports},
                        {"mp_ports", round.mp_ports},
                        {"simulations", round.simulations}});
    }
    j["rounds"] = rounds;
    j["stop_reason"] = r.stop_reason;
  }
  return j;
}

}  // namespace toposweep::opt
