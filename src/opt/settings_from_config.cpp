// optimize.* keys -> OptimizeSettings: the one place the optimizers read a Config.
#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>
#include <variant>

#include "toposweep/opt/settings.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/units.hpp"
#include "toposweep/workload/strategy_knobs.hpp"

namespace toposweep::opt {
namespace {

std::optional<double> optional_quantity(const Config& c, const std::string& key, Quantity q) {
  if (!c.has(key) || c.get_string(key).empty()) return std::nullopt;
  return c.get_quantity(key, q);
}

std::vector<double> bound_list(const Config& c, const std::string& key) {
  if (!c.has(key) || c.get_string(key).empty()) return {};
  return c.get_quantity_list(key, Quantity::Bandwidth, false);
}

void read_bandwidth(const Config& config, OptimizeSettings& s) {
  const std::string objective = config.get_string("optimize.objective");
  if (objective == "time")
    s.objective = AllocationObjective::Time;
  else if (objective == "time_x_cost")
    s.objective = AllocationObjective::TimeTimesCost;
  else
    throw BadInput("objective must be time or time_x_cost, not '" + objective + "'",
                   config.where("optimize.objective"));
  s.total_bandwidth_Bps = optional_quantity(config, "optimize.total_bandwidth", Quantity::Bandwidth);
  if (config.has("optimize.cost_budget") && !config.get_string("optimize.cost_budget").empty()) {
    s.cost_budget_usd = config.get_double("optimize.cost_budget");
    if (!(*s.cost_budget_usd > 0))
      throw BadInput("cost budget must be positive", config.where("optimize.cost_budget"));
  }
  s.dim_bandwidth_min_Bps = bound_list(config, "optimize.dim_bandwidth_min");
  s.dim_bandwidth_max_Bps = bound_list(config, "optimize.dim_bandwidth_max");
  const std::string order = config.get_string("optimize.dim_order");
  if (order == "descending")
    s.descending = true;
  else if (order != "none")
    throw BadInput("dim_order must be none or descending", config.where("optimize.dim_order"));
  s.tolerance = config.get_double("optimize.tolerance");
  if (!(s.tolerance > 0)) throw BadInput("tolerance must be positive", config.where("optimize.tolerance"));
}

FinderSettings finder_settings(const Config& config) {
  FinderSettings s;
  s.degree = static_cast<std::uint32_t>(config.get_int("topology.degree", 1, 1 << 20));
  s.link_bandwidth_Bps = config.get_bandwidth("topology.link_bandwidth");
  s.link_latency_s = config.get_time("topology.link_latency");
  const LinkClass intra = intra_link_from_config(config);
  s.server = topology::server_spec_from_config(config, &intra);
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
  if (s == "auto") return SearchMethod::Auto;
  if (s == "mcmc") return SearchMethod::Mcmc;
  if (s == "exhaustive") return SearchMethod::Exhaustive;
  throw BadInput("search must be auto, mcmc or exhaustive, not '" + s + "'", config.where("optimize.search"));
}

// The values of a knob the search tries (optimize.<search_key>), as codes (knob_code): each once,
// in the user's order. Names: an enum's, true/false (and on/off, yes/no, 1/0) for a flag, the
// numbers min..max for a count.
std::vector<std::uint32_t> search_list(const Config& config, const StrategyKnob& k) {
  const std::string key = "optimize." + std::string(k.search_key);
  const bool flag = std::holds_alternative<bool StrategyKnobs::*>(k.member);
  // The accepted names, for an error only (a count's range as min..max: a degree's reaches 2^24).
  const auto names = [&] {
    std::string out;
    const auto add_name = [&](std::string_view name) {
      out += (out.empty() ? "" : ", ") + std::string(name);
    };
    if (flag) {
      add_name("true");
      add_name("false");
    } else if (!k.values.empty()) {
      for (const KnobValue& v : k.values) add_name(v.name);
    } else if (k.max - k.min < 16) {
      for (std::int64_t x = k.min; x <= k.max; ++x) add_name(std::to_string(x));
    } else {
      out = std::to_string(k.min) + ".." + std::to_string(k.max);
    }
    return out;
  };
  const auto parse = [&](const std::string& t) -> std::optional<std::uint32_t> {
    if (flag) {
      if (t == "true" || t == "on" || t == "yes" || t == "1") return 1;
      if (t == "false" || t == "off" || t == "no" || t == "0") return 0;
    } else if (!k.values.empty()) {
      for (const KnobValue& v : k.values)
        if (t == v.name) return v.value;
    } else {
      // A count: decimal digits alone, no leading zero, in range (as the names above spell them).
      std::int64_t x = 0;
      const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
      const bool plain =
          ec == std::errc() && end == t.data() + t.size() && t[0] != '-' && (t.size() == 1 || t[0] != '0');
      if (plain && x >= k.min && x <= k.max) return static_cast<std::uint32_t>(x);
    }
    return std::nullopt;
  };
  std::vector<std::uint32_t> out;
  for (const std::string& name : config.get_list(key)) {
    const std::optional<std::uint32_t> v = parse(name);
    if (!v) throw BadInput("'" + name + "' is not one of " + names(), config.where(key));
    if (std::find(out.begin(), out.end(), *v) == out.end()) out.push_back(*v);
  }
  if (out.empty()) throw BadInput("name at least one of " + names(), config.where(key));
  return out;
}

std::vector<std::uint32_t> degree_list(const Config& config, std::string_view key, std::int64_t min) {
  std::vector<std::uint32_t> out;
  if (!config.has(key) || config.get_string(key).empty()) return out;  // empty: all
  for (std::int64_t x : config.get_int_list(key, min, 1 << 30))
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(static_cast<std::uint32_t>(x));
  return out;
}

StrategySpace strategy_space(const Config& config) {
  StrategySpace space;
  space.max_microbatches =
      static_cast<std::uint32_t>(config.get_int("optimize.max_microbatches", 0, 1 << 20));
  space.tp = degree_list(config, "optimize.tp", 1);
  space.pp = degree_list(config, "optimize.pp", 1);
  space.microbatch_size = degree_list(config, "optimize.microbatch_size", 1);
  space.virtual_stages = degree_list(config, "optimize.virtual_stages", 2);
  space.tp_across_servers = config.get_bool("optimize.tp_across_servers");
  // Each knob's optimize.<search_key> list.
  for (const StrategyKnob& k : kStrategyKnobs)
    if (!k.search_key.empty()) space.codes(k) = search_list(config, k);
  // Not searched: every strategy tried recomputes the configured modules (with selective).
  if (config.has("strategy.recompute_modules"))
    if (const auto modules = parse_recompute_modules(config.get_string("strategy.recompute_modules")))
      space.codes(*find_strategy_knob(&StrategyKnobs::recompute_modules)) = {
          static_cast<std::uint32_t>(*modules)};
  // Nor are the blocks block recomputation recomputes (with full).
  if (config.has("strategy.recompute_layers"))
    space.codes(*find_strategy_knob(&StrategyKnobs::recompute_layers)) = {
        static_cast<std::uint32_t>(config.get_int("strategy.recompute_layers", 0, 1 << 24))};
  return space;
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

OptimizeSettings optimize_settings_from_config(const Config& config, OptimizeTarget target) {
  OptimizeSettings s;
  switch (target) {
    case OptimizeTarget::Bandwidth:
      read_bandwidth(config, s);
      break;
    case OptimizeTarget::Topology:
      s.finder = finder_settings(config);
      break;
    case OptimizeTarget::Strategy:
      if (config.has("optimize.placement"))
        s.placement =
            parse_placement_kind(config.get_string("optimize.placement"), config.where("optimize.placement"));
      s.space = strategy_space(config);
      s.search = search_method(config);
      s.top = static_cast<std::uint32_t>(config.get_int("optimize.top", 1, 1 << 20));
      s.bound =
          config.get_string("optimize.bound") == "compute" ? BoundKind::Compute : BoundKind::Communication;
      // The MCMC settings are read only when MCMC runs (an exhaustive search ignores them).
      if (s.search == SearchMethod::Mcmc) s.mcmc = mcmc_settings(config);
      break;
    case OptimizeTarget::Alternating:
      s.servers = static_cast<std::uint32_t>(config.get_int("topology.servers", 2, 1 << 24));
      s.finder = finder_settings(config);
      s.search = search_method(config);
      s.mcmc = mcmc_settings(config);
      s.space = strategy_space(config);
      s.patience = static_cast<std::uint32_t>(config.get_int("optimize.rounds", 1, 1 << 20));
      s.max_rounds = static_cast<std::uint32_t>(config.get_int("optimize.max_rounds", 1, 1 << 20));
      s.time_budget_s = config.get_time("optimize.time_budget");
      break;
    case OptimizeTarget::Placement:
      break;
  }
  return s;
}

OptimizeProblem optimize_problem_from_config(const Config& config, OptimizeTarget target) {
  OptimizeProblem p;
  const LinkClass intra = intra_link_from_config(config);
  p.topology = topology::topology_spec_from_config(config, &intra);
  p.workload = workload_spec_from_config(config);
  p.strategy = strategy_spec_from_config(config);
  p.sim = sim::sim_options_from_config(config);
  p.costs = topology::cost_spec_from_config(config);
  p.settings = optimize_settings_from_config(config, target);
  return p;
}

}  // namespace toposweep::opt
