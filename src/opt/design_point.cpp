#include "toposweep/opt/design_point.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "toposweep/opt/strategy_placement.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/topology/cost.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"
#include "toposweep/util/units.hpp"
#include "toposweep/workload/iteration.hpp"

namespace toposweep::opt {
namespace {

double network_cost_usd(const Network& net, const Config& config) {
  return topology::network_cost(net, topology::price_table_from_config(config)).total_usd;
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

std::optional<double> optional_quantity(const Config& c, const std::string& key, Quantity q) {
  if (!c.has(key) || c.get_string(key).empty()) return std::nullopt;
  return c.get_quantity(key, q);
}

std::vector<double> bound_list(const Config& c, const std::string& key) {
  if (!c.has(key) || c.get_string(key).empty()) return {};
  return c.get_quantity_list(key, Quantity::Bandwidth, false);
}

std::string bandwidth_list(const std::vector<double>& bw) {
  std::vector<std::string> parts;
  for (double b : bw) parts.push_back(format_bandwidth(b));
  return join(parts, ",");
}

double simulate_with_dim_bandwidth(const Config& config, const std::vector<double>& bw,
                                   const TaskGraph& graph, const sim::SimOptions& options, double* cost) {
  Config c = config;
  c.set("topology.dim_bandwidth", bandwidth_list(bw), "optimize");
  const Network net = build_network(c);
  *cost = network_cost_usd(net, c);
  return sim::simulate_iteration(net, graph, options).job(0).iteration_time_s;
}

OptimizeResult optimize_bandwidth(const Config& config, const std::optional<SingleCollective>& single) {
  OptimizeResult out;
  out.target = OptimizeTarget::Bandwidth;
  const Network net = build_network(config);
  const auto& dims = net.info().dims;
  if (dims.empty())
    throw BadInput("bandwidth allocation needs a multidim network (topology.kind = multidim)",
                   config.where("topology.kind"));
  const auto options = sim::sim_options_from_config(config);
  const std::uint32_t npus = net.compute_count();

  BandwidthProblem p;
  p.dim_count = dims.size();
  p.npus = npus;
  const auto table = topology::price_table_from_config(config);
  std::vector<std::string> levels = net.info().dim_levels;
  if (levels.size() != dims.size()) levels = topology::default_dim_levels(dims.size());
  for (std::size_t k = 0; k < dims.size(); ++k) {
    Dimension unit = dims[k];
    unit.bandwidth_Bps = 1.0;  // the LIBRA cost is linear in bandwidth: this is the slope
    p.unit_price.push_back(topology::libra_dimension_cost(npus, unit, levels[k], table) / npus);
  }
  p.model = options.comm.hierarchical_pipelined ? CommTimeModel::Pipelined : CommTimeModel::Sequential;
  out.comm_model = comm_time_model_name(p.model);
  const std::string objective = config.get_string("optimize.objective");
  if (objective == "time")
    p.objective = AllocationObjective::Time;
  else if (objective == "time_x_cost")
    p.objective = AllocationObjective::TimeTimesCost;
  else
    throw BadInput("objective must be time or time_x_cost, not '" + objective + "'",
                   config.where("optimize.objective"));
  p.total_bandwidth_Bps = optional_quantity(config, "optimize.total_bandwidth", Quantity::Bandwidth);
  if (config.has("optimize.cost_budget") && !config.get_string("optimize.cost_budget").empty()) {
    p.cost_budget_usd = config.get_double("optimize.cost_budget");
    if (!(*p.cost_budget_usd > 0))
      throw BadInput("cost budget must be positive", config.where("optimize.cost_budget"));
  }
  if (!p.total_bandwidth_Bps && !p.cost_budget_usd) {
    double total = 0;
    for (const auto& d : dims) total += d.bandwidth_Bps;
    if (!(total > 0))
      throw BadInput("set optimize.total_bandwidth or optimize.cost_budget (or topology.dim_bandwidth)",
                     config.where("optimize.total_bandwidth"));
    p.total_bandwidth_Bps = total;
  }
  p.lower_Bps = bound_list(config, "optimize.dim_bandwidth_min");
  p.upper_Bps = bound_list(config, "optimize.dim_bandwidth_max");
  const std::string order = config.get_string("optimize.dim_order");
  if (order == "descending")
    p.descending = true;
  else if (order != "none")
    throw BadInput("dim_order must be none or descending", config.where("optimize.dim_order"));
  p.relative_tolerance = config.get_double("optimize.tolerance");
  if (!(p.relative_tolerance > 0))
    throw BadInput("tolerance must be positive", config.where("optimize.tolerance"));

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
    plan = plan_iteration(config, npus);
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
    out.time_s = simulate_with_dim_bandwidth(config, a.dim_bandwidth_Bps, plan.graph, options, &out.cost_usd);
    out.baseline_time_s =
        simulate_with_dim_bandwidth(config, a.baseline_bandwidth_Bps, plan.graph, options, &base_cost);
  }
  Config c = config;
  c.set("topology.dim_bandwidth", bandwidth_list(a.dim_bandwidth_Bps), "optimize");
  out.network = build_network(c);
  return out;
}

struct FixedPoint {
  Network network;
  Workload workload;
  Strategy strategy;
  sim::SimOptions options;
};

FixedPoint fixed_point(const Config& config) {
  FixedPoint f;
  f.network = build_network(config);
  f.workload = workload_from_config(config, f.network.gpu_count());
  f.strategy = strategy_from_config(config, f.workload, f.network.gpu_count());
  f.options = sim::sim_options_from_config(config);
  return f;
}

FinderSettings finder_settings(const Config& config) {
  FinderSettings s;
  s.degree = static_cast<std::uint32_t>(config.get_int("topology.degree", 1, 1 << 20));
  s.link_bandwidth_Bps = config.get_bandwidth("topology.link_bandwidth");
  s.link_latency_s = config.get_time("topology.link_latency");
  s.server.gpus = static_cast<std::uint32_t>(config.get_int("server.gpus", 1, 1 << 20));
  s.server.intra_bandwidth_Bps = config.get_bandwidth("server.intra_bandwidth");
  return s;
}

McmcStrategySettings mcmc_settings(const Config& config) {
  McmcStrategySettings m;
  m.metropolis.budget = static_cast<std::uint32_t>(config.get_int("optimize.mcmc_budget", 0, 1 << 30));
  if (m.metropolis.budget == 0)
    throw BadInput("the MCMC budget must be at least 1", config.where("optimize.mcmc_budget"));
  m.metropolis.seed = static_cast<std::uint64_t>(config.get_int("optimize.mcmc_seed", 0));
  m.metropolis.temperature = config.get_double("optimize.mcmc_temperature");
  if (!(m.metropolis.temperature > 0))
    throw BadInput("temperature must be positive", config.where("optimize.mcmc_temperature"));
  m.metropolis.restart_after =
      static_cast<std::uint32_t>(config.get_int("optimize.mcmc_restart", 1, 1 << 30));
  return m;
}

SearchMethod search_method(const Config& config) {
  const std::string s = config.get_string("optimize.search");
  if (s == "mcmc") return SearchMethod::Mcmc;
  if (s == "exhaustive") return SearchMethod::Exhaustive;
  throw BadInput("search must be mcmc or exhaustive, not '" + s + "'", config.where("optimize.search"));
}

StrategySpace strategy_space(const Config& config) {
  StrategySpace space;
  space.max_microbatches =
      static_cast<std::uint32_t>(config.get_int("optimize.max_microbatches", 0, 1 << 20));
  if (config.has("optimize.zero_stages")) {
    space.zero.clear();
    for (std::int64_t z : config.get_int_list("optimize.zero_stages", 0, 3))
      if (std::find(space.zero.begin(), space.zero.end(), z) == space.zero.end())
        space.zero.push_back(static_cast<std::uint8_t>(z));
    if (space.zero.empty())
      throw BadInput("name at least one ZeRO stage", config.where("optimize.zero_stages"));
  }
  return space;
}

OptimizeResult optimize_topology(const Config& config) {
  OptimizeResult out;
  out.target = OptimizeTarget::Topology;
  const FixedPoint f = fixed_point(config);
  out.strategy = f.strategy;
  out.baseline = "the configured topology (" + f.network.info().kind + ")";
  StrategyScorer base(f.workload, f.network, f.options);
  const auto t0 = base.iteration_time(f.strategy);
  if (!t0)
    throw BadInput("the configured strategy does not fit in device memory", config.where("strategy.dp"));
  out.baseline_time_s = *t0;
  const auto settings = finder_settings(config);
  const std::uint32_t servers = f.network.compute_count();
  TopologyDesign d =
      find_topology(strategy_traffic(f.workload, f.strategy, servers, f.network.gpus_per_node()), settings);
  StrategyScorer scorer(f.workload, d.network, f.options, d.position_of_node);
  out.time_s = *scorer.iteration_time(f.strategy);
  out.strides = d.strides;
  out.mp_links = d.mp_links;
  out.position_of_node = d.position_of_node;
  out.network = d.network;
  out.cost_usd = network_cost_usd(d.network, config);
  out.simulations = base.simulations() + scorer.simulations();
  return out;
}

OptimizeResult optimize_strategy(const Config& config) {
  OptimizeResult out;
  out.target = OptimizeTarget::Strategy;
  const FixedPoint f = fixed_point(config);
  StrategyScorer scorer(f.workload, f.network, f.options);
  // Placement and strategy are searched together: every candidate runs where `simulate` with
  // the same optimize.placement would put it (TAG's joint deployment, DOMAIN.md 2.4).
  const PlacementKind placement =
      config.has("optimize.placement")
          ? parse_placement_kind(config.get_string("optimize.placement"), config.where("optimize.placement"))
          : PlacementKind::RankOrder;
  scorer.use_placement(placement);
  const auto space = strategy_space(config);
  auto t0 = scorer.iteration_time(f.strategy);
  Strategy start = f.strategy;
  out.baseline = "the configured strategy";
  if (!t0) {
    out.baseline = "pure data parallelism (the configured strategy does not fit)";
    start = pure_data_parallel(f.network.gpu_count());
    t0 = scorer.iteration_time(start);
  }
  out.baseline_time_s = t0 ? *t0 : std::numeric_limits<double>::quiet_NaN();
  const SearchMethod method = search_method(config);
  StrategySearchResult r;
  if (method == SearchMethod::Exhaustive || !t0) {
    r = exhaustive_strategy_search(scorer, f.workload, space);
  } else {
    r = mcmc_strategy_search(scorer, f.workload, start, mcmc_settings(config), space);
  }
  out.search_method = r.method;
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
  out.cost_usd = network_cost_usd(f.network, config);
  out.simulations = scorer.simulations();
  return out;
}

OptimizeResult optimize_placement(const Config& config) {
  OptimizeResult out;
  out.target = OptimizeTarget::Placement;
  out.baseline = "rank-order placement";
  out.network = build_network(config);
  const IterationPlan plan = plan_iteration(config, out.network.gpu_count());
  if (plan.graph.gpus > out.network.gpu_count())
    throw BadInput("the strategy needs " + std::to_string(plan.graph.gpus) + " GPUs but the topology holds " +
                       std::to_string(out.network.gpu_count()),
                   "topology.servers x server.gpus");
  if (!plan.feasible)
    throw BadInput("the configured strategy does not fit in device memory (" + plan.infeasible_reason + ")",
                   config.where("strategy.dp"));
  out.strategy = plan.strategy;
  const auto options = sim::sim_options_from_config(config);
  const StrategyPlacement rank =
      place_strategy(out.network, plan.graph.gpus, plan.tp, plan.pp, PlacementKind::RankOrder);
  const StrategyPlacement metis =
      place_strategy(out.network, plan.graph.gpus, plan.tp, plan.pp, PlacementKind::Metis);
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
  out.cost_usd = network_cost_usd(out.network, config);
  return out;
}

OptimizeResult optimize_alternating(const Config& config) {
  OptimizeResult out;
  out.target = OptimizeTarget::Alternating;
  AlternatingSettings s;
  s.servers = static_cast<std::uint32_t>(config.get_int("topology.servers", 2, 1 << 24));
  s.finder = finder_settings(config);
  s.sim = sim::sim_options_from_config(config);
  s.search = search_method(config);
  s.mcmc = mcmc_settings(config);
  s.space = strategy_space(config);
  s.patience = static_cast<std::uint32_t>(config.get_int("optimize.rounds", 1, 1 << 20));
  s.max_rounds = static_cast<std::uint32_t>(config.get_int("optimize.max_rounds", 1, 1 << 20));
  s.time_budget_s = config.get_time("optimize.time_budget");
  if (s.time_budget_s < 0)
    throw BadInput("the time budget must not be negative", config.where("optimize.time_budget"));
  const Workload w = workload_from_config(config, s.servers * s.finder.server.gpus);
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
  out.cost_usd = network_cost_usd(out.network, config);
  for (const auto& round : r.rounds) out.simulations += round.simulations;
  return out;
}

nlohmann::json links_json(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& links) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& [u, v] : links) a.push_back({u, v});
  return a;
}

}  // namespace

OptimizeTarget parse_optimize_target(const std::string& text, const std::string& where) {
  if (text == "bandwidth") return OptimizeTarget::Bandwidth;
  if (text == "topology") return OptimizeTarget::Topology;
  if (text == "strategy") return OptimizeTarget::Strategy;
  if (text == "alternating") return OptimizeTarget::Alternating;
  if (text == "placement") return OptimizeTarget::Placement;
  throw BadInput("target must be bandwidth, topology, strategy, alternating or placement, not '" + text + "'",
                 where);
}

const char* optimize_target_name(OptimizeTarget t) {
  switch (t) {
    case OptimizeTarget::Bandwidth:
      return "bandwidth";
    case OptimizeTarget::Topology:
      return "topology";
    case OptimizeTarget::Strategy:
      return "strategy";
    case OptimizeTarget::Alternating:
      return "alternating";
    case OptimizeTarget::Placement:
      return "placement";
  }
  return "?";
}

void check_optimize_config(const Config& config, OptimizeTarget target) {
  switch (target) {
    case OptimizeTarget::Bandwidth:
      config.get_string("optimize.objective");
      optional_quantity(config, "optimize.total_bandwidth", Quantity::Bandwidth);
      if (config.has("optimize.cost_budget") && !config.get_string("optimize.cost_budget").empty())
        config.get_double("optimize.cost_budget");
      bound_list(config, "optimize.dim_bandwidth_min");
      bound_list(config, "optimize.dim_bandwidth_max");
      config.get_string("optimize.dim_order");
      config.get_double("optimize.tolerance");
      return;
    case OptimizeTarget::Topology:
      finder_settings(config);
      return;
    case OptimizeTarget::Strategy:
      if (config.has("optimize.placement"))
        parse_placement_kind(config.get_string("optimize.placement"), config.where("optimize.placement"));
      strategy_space(config);
      if (search_method(config) == SearchMethod::Mcmc) mcmc_settings(config);
      return;
    case OptimizeTarget::Alternating:
      finder_settings(config);
      search_method(config);
      mcmc_settings(config);
      strategy_space(config);
      config.get_int("optimize.rounds", 1, 1 << 20);
      config.get_int("optimize.max_rounds", 1, 1 << 20);
      config.get_time("optimize.time_budget");
      return;
    case OptimizeTarget::Placement:
      return;
  }
}

OptimizeResult optimize_design_point(const Config& config) {
  return optimize_design_point(
      config, parse_optimize_target(config.get_string("optimize.target"), config.where("optimize.target")));
}

OptimizeResult optimize_design_point(const Config& config, OptimizeTarget target,
                                     const std::optional<SingleCollective>& single) {
  if (single && target != OptimizeTarget::Bandwidth)
    throw BadInput("--op/--bytes (a single collective) only apply to --target bandwidth", "command line");
  switch (target) {
    case OptimizeTarget::Bandwidth:
      return optimize_bandwidth(config, single);
    case OptimizeTarget::Topology:
      return optimize_topology(config);
    case OptimizeTarget::Strategy:
      return optimize_strategy(config);
    case OptimizeTarget::Alternating:
      return optimize_alternating(config);
    case OptimizeTarget::Placement:
      return optimize_placement(config);
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
  j["simulations"] = r.simulations;
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
