// Config -> DesignPoint: the one place a design point is read. Each module's *_from_config reads
// its own keys; this file only decides which of them a point needs.
#include <charconv>

#include "toposweep/collective/options.hpp"
#include "toposweep/point/design_point.hpp"
#include "toposweep/topology/spec.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/runs.hpp"
#include "toposweep/util/strings.hpp"
#include "toposweep/workload/devices.hpp"

namespace toposweep {
namespace {

bool user_set(const Config& c, std::string_view key) {
  return c.user_set(key);
}

// Mixed server.device lists: each server's fabric defaults to its device's (NVLink servers beside
// PCIe ones), unless the user gave server.intra_bandwidth. Other server.intra_* keys, when set,
// apply to every server.
void server_fabrics_from_devices(const Config& config, DesignPoint& p) {
  // Given: a non-empty value (a sweep's sub-spaces share one configuration, so "set by the user"
  // would leak between them).
  const auto given = [&](std::string_view key) {
    return config.has(key) && !trim(config.get_string(key)).empty();
  };
  if (!mixed_devices(p.workload.device) || given("server.intra_bandwidth")) return;
  topology::ServerSpec* server = topology::server_of(p.topology);
  // A count that does not match the servers is reported by the workload, naming server.device.
  if (!server || p.workload.device_servers == 0 || !config.has("topology.servers") ||
      config.get_int("topology.servers") != p.workload.device_servers)
    return;
  const std::string where = config.where("server.device");
  const auto runs = parse_runs(p.workload.device, where);
  std::vector<std::pair<std::string, LinkClass>> fabric;
  for (const auto& name : distinct_run_values(runs)) {
    LinkClass l = resolve_device(name, where).intra_server;
    if (!(l.bandwidth_Bps > 0)) l = server->intra();
    if (given("server.intra_efficiency")) l.efficiency = server->intra_efficiency;
    if (given("server.intra_latency")) l.latency_s = server->intra_latency_s;
    if (given("server.intra_step_latency")) l.step_latency_s = server->intra_step_latency_s;
    fabric.emplace_back(name, l);
  }
  server->intra_of_server.clear();
  for (const auto& r : runs)
    for (const auto& [name, l] : fabric)
      if (name == r.value) server->intra_of_server.insert(server->intra_of_server.end(), r.count, l);
  topology::normalize_server_fabrics(*server);
}

}  // namespace

std::vector<JobSpec> parse_job_list(const std::string& text, const std::string& where) {
  std::vector<JobSpec> jobs;
  auto number = [](std::string_view t, unsigned& out) {
    const char* end = t.data() + t.size();
    return !t.empty() && std::from_chars(t.data(), end, out).ptr == end && out > 0;
  };
  for (const std::string& item : split_list(text)) {
    const auto bad = [&] {
      return BadInput("job '" + item + "' is not MODEL:SERVERS[:tpT][:ppP][:mbM] with SERVERS, T, P, M >= 1",
                      where);
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

DesignPoint design_point_from_config(const Config& config, std::optional<opt::OptimizeTarget> optimize) {
  DesignPoint p;
  if (!optimize && config.has("point.optimize")) {
    const std::string v = to_lower(trim(config.get_string("point.optimize")));
    if (v != "none") optimize = opt::parse_optimize_target(v, config.where("point.optimize"));
  }
  p.optimize = optimize;
  if (optimize) p.optimize_settings = opt::optimize_settings_from_config(config, *optimize);
  p.workload = workload_spec_from_config(config);
  if (config.has("model.chakra")) p.workload.chakra = trim(config.get_string("model.chakra"));
  if (config.has("model.chakra_replicas"))
    p.workload.chakra_replicas =
        static_cast<std::uint32_t>(config.get_int("model.chakra_replicas", 1, 1 << 24));
  p.strategy = strategy_spec_from_config(config);
  p.sim = sim::sim_options_from_config(config);
  p.costs = topology::cost_spec_from_config(config);
  if (config.has("optimize.placement"))
    p.placement = opt::parse_placement_kind(config.get_string("optimize.placement"),
                                            config.where("optimize.placement"));
  if (config.has("simulate.jobs") && !trim(config.get_string("simulate.jobs")).empty()) {
    p.jobs = parse_job_list(config.get_string("simulate.jobs"), config.where("simulate.jobs"));
    if (p.jobs.empty())
      throw BadInput("multi-job mode needs at least one job", config.where("simulate.jobs"));
    p.jobs_share_batch = user_set(config, "model.batch_per_gpu");
  }
  // Last: an impossible topology (InvalidDesign) leaves every other key read, so a check that
  // tolerates impossible designs still sees which keys the point uses.
  const LinkClass intra = intra_link_from_config(config);
  p.topology = topology::topology_spec_from_config(config, &intra);
  server_fabrics_from_devices(config, p);
  return p;
}

namespace {

// strategy.zero errors name strategy.zero1 when the user wrote that deprecated alias instead.
bool zero1_alias(const Config& config) {
  return user_set(config, "strategy.zero1") && !user_set(config, "strategy.zero");
}

}  // namespace

KeyOrigins key_origins(const Config& config) {
  KeyOrigins o = KeyOrigins::of(config);
  if (zero1_alias(config)) o.redirect("strategy.zero", "strategy.zero1");
  return o;
}

namespace {

// The origins key_origins(config) would give an error naming e.where(): its key's and the alias's.
KeyOrigins origins_for(const Config& config, const BadInput& e) {
  std::string_view key = e.where();
  if (key.starts_with("key ")) key.remove_prefix(4);
  KeyOrigins o = KeyOrigins::of(config, {key, "strategy.zero1"});
  if (zero1_alias(config)) o.redirect("strategy.zero", "strategy.zero1");
  return o;
}

}  // namespace

void rethrow_at_origin(const Config& config, const BadInput& e) {
  origins_for(config, e).rethrow(e);
}

std::string located_at_origin(const Config& config, const BadInput& e) {
  return origins_for(config, e).located(e);
}

opt::OptimizeProblem optimize_problem(const DesignPoint& point) {
  opt::OptimizeProblem p;
  p.topology = point.topology;
  p.workload = point.workload;
  p.strategy = point.strategy;
  p.sim = point.sim;
  p.costs = point.costs;
  if (point.optimize_settings) p.settings = *point.optimize_settings;
  return p;
}

}  // namespace toposweep
