// topology.* and server.* keys -> TopologySpec: the one place the topology module reads a Config.
// One parser per family, registered by name in kFamilies.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <optional>

#include "toposweep/topology/build.hpp"
#include "toposweep/topology/spec.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/runs.hpp"
#include "toposweep/util/strings.hpp"
#include "toposweep/util/units.hpp"

namespace toposweep::topology {
namespace {

bool explicitly_set(const Config& c, std::string_view key) {
  return c.user_set(key);
}
bool nonempty(const Config& c, std::string_view key) {
  const ConfigEntry* e = c.entry(key);
  return e && !trim(e->value).empty();
}

std::uint32_t get_u32(const Config& c, const std::string& key, std::int64_t min, std::int64_t max = 1 << 26) {
  return static_cast<std::uint32_t>(c.get_int(key, min, max));
}

// topology.optical, with `fallback` standing in for "auto".
std::string optical_device(const Config& c, const std::string& fallback) {
  const ConfigEntry* e = c.entry("topology.optical");
  const std::string v = e ? e->value : "auto";
  if (v == "auto") return fallback;
  if (v != "patch_panel" && v != "ocs" && v != "none")
    throw BadInput("topology.optical must be auto, patch_panel, ocs or none, got '" + v + "'",
                   c.where("topology.optical"));
  return v;
}

// The server's fabric: each server.intra_* key the user left empty comes from `intra` (the
// device's measured link class) or, without one, from the historical 300 GB/s ideal fabric.
}  // namespace

namespace {

// A per-server run list (8*4,4*4) for `key`, expanded over topology.servers; empty when the value
// is one plain value. Families without topology.servers take plain values only.
std::vector<std::string> per_server_values(const Config& c, std::string_view key) {
  if (!nonempty(c, key) || !has_run_counts(c.get_string(key))) return {};
  const std::string where = c.where(key);
  if (!c.has("topology.servers") || c.get_string("topology.kind") == "multidim" ||
      c.get_string("topology.kind") == "file")
    throw BadInput("per-server lists need a topology family with topology.servers (not multidim or file)",
                   where);
  return expand_runs(parse_runs(c.get_string(key), where), get_u32(c, "topology.servers", 1), where);
}

}  // namespace

ServerSpec server_spec_from_config(const Config& c, const LinkClass* intra) {
  ServerSpec s;
  if (const auto gpus = per_server_values(c, "server.gpus"); !gpus.empty()) {
    const std::string where = c.where("server.gpus");
    for (const auto& v : gpus) {
      std::uint32_t n = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc() || end != v.data() + v.size() || n < 1 || n > (1u << 16))
        throw BadInput("'" + v + "': GPUs per server must be a whole number in 1..65536", where);
      s.gpus_of_server.push_back(n);
    }
    s.gpus = *std::max_element(s.gpus_of_server.begin(), s.gpus_of_server.end());
    if (std::all_of(s.gpus_of_server.begin(), s.gpus_of_server.end(), [&](auto g) { return g == s.gpus; }))
      s.gpus_of_server.clear();
  } else {
    s.gpus = get_u32(c, "server.gpus", 1, 1 << 16);
  }
  const LinkClass fallback{300e9, 1, 0, 0};
  const LinkClass& d = intra ? *intra : fallback;
  std::vector<double> intra_runs;  // per server, from a server.intra_bandwidth run list
  if (const auto bw = per_server_values(c, "server.intra_bandwidth"); !bw.empty()) {
    const std::string where = c.where("server.intra_bandwidth");
    for (const auto& v : bw) intra_runs.push_back(parse_quantity(Quantity::Bandwidth, v, where));
    s.intra_bandwidth_Bps = intra_runs[0];
  } else {
    s.intra_bandwidth_Bps =
        nonempty(c, "server.intra_bandwidth") ? c.get_bandwidth("server.intra_bandwidth") : d.bandwidth_Bps;
  }
  s.intra_efficiency = d.efficiency;
  if (nonempty(c, "server.intra_efficiency")) {
    s.intra_efficiency = c.get_double("server.intra_efficiency");
    if (!(s.intra_efficiency > 0 && s.intra_efficiency <= 1))
      throw BadInput("must be in (0, 1]", c.where("server.intra_efficiency"));
  }
  s.intra_latency_s = nonempty(c, "server.intra_latency") ? c.get_time("server.intra_latency") : d.latency_s;
  s.intra_step_latency_s =
      nonempty(c, "server.intra_step_latency") ? c.get_time("server.intra_step_latency") : d.step_latency_s;
  if (!intra_runs.empty()) {
    s.intra_of_server.assign(intra_runs.size(), s.intra());
    for (std::size_t i = 0; i < intra_runs.size(); ++i) s.intra_of_server[i].bandwidth_Bps = intra_runs[i];
    normalize_server_fabrics(s);
  }
  s.link_efficiency = c.has("topology.link_efficiency") ? c.get_double("topology.link_efficiency") : 1.0;
  if (!(s.link_efficiency > 0 && s.link_efficiency <= 1))
    throw BadInput("must be in (0, 1]", c.where("topology.link_efficiency"));
  return s;
}

namespace {

FamilySpec switch_from(const Config& c, const LinkClass* intra) {
  SwitchSpec s;
  s.servers = get_u32(c, "topology.servers", 1);
  s.degree = get_u32(c, "topology.degree", 1, 1 << 16);
  s.link_bandwidth_Bps = c.get_bandwidth("topology.link_bandwidth");
  s.link_latency_s = c.get_time("topology.link_latency");
  s.server = server_spec_from_config(c, intra);
  return s;
}

FamilySpec fattree_from(const Config& c, const LinkClass* intra) {
  FatTreeSpec s;
  s.servers = get_u32(c, "topology.servers", 1);
  s.degree = get_u32(c, "topology.degree", 1, 1 << 10);
  s.tiers = get_u32(c, "topology.fattree_tiers", 2, 3);
  s.radix = get_u32(c, "topology.fattree_radix", 0, 4096);
  s.oversubscription = c.get_double("topology.oversubscription");
  if (!(s.oversubscription > 0))
    throw BadInput("oversubscription must be positive", c.where("topology.oversubscription"));
  s.link_bandwidth_Bps = c.get_bandwidth("topology.link_bandwidth");
  s.link_latency_s = c.get_time("topology.link_latency");
  s.server = server_spec_from_config(c, intra);
  return s;
}

FamilySpec topoopt_from(const Config& c, const LinkClass* intra) {
  TopoOptSpec spec;
  spec.servers = get_u32(c, "topology.servers", 1);
  spec.degree = get_u32(c, "topology.degree", 1);
  spec.link_bandwidth_Bps = c.get_bandwidth("topology.link_bandwidth");
  spec.link_latency_s = c.get_time("topology.link_latency");
  spec.server = server_spec_from_config(c, intra);
  spec.extra_links =
      parse_extra_links(nonempty(c, "topology.extra_links") ? c.get_string("topology.extra_links") : "",
                        c.where("topology.extra_links"));
  spec.optical = optical_device(c, "patch_panel");
  const std::uint32_t n = spec.servers;
  if (spec.degree >= n)
    throw InvalidDesign(
        "degree " + std::to_string(spec.degree) + " must be below the " + std::to_string(n) + " servers",
        c.where("topology.degree"));
  if (nonempty(c, "topology.strides")) {
    for (std::int64_t s : c.get_int_list("topology.strides", 0, UINT32_MAX))
      spec.strides.push_back(static_cast<std::uint32_t>(s));
    return spec;
  }
  spec.ring_group = get_u32(c, "topology.ring_group", 0);
  spec.rings = get_u32(c, "topology.rings", 0);
  if (spec.rings == 0 && spec.degree % 2 != 0 && spec.extra_links.empty())
    throw InvalidDesign(
        "odd degree " + std::to_string(spec.degree) +
            ": TotientPerms rings are bidirectional and use ports in pairs (use an even degree, "
            "topology.rings, or topology.extra_links for the odd port)",
        c.where("topology.degree"));
  return spec;
}

FamilySpec multidim_from(const Config& c, const LinkClass*) {
  if (!nonempty(c, "topology.dims"))
    throw BadInput("multidim needs topology.dims, e.g. ring:4,fc:8,switch:32", "key topology.dims");
  const std::string dims_where = c.where("topology.dims");
  MultiDimSpec spec;
  spec.dims = parse_dims(c.get_list("topology.dims"), dims_where);
  const std::size_t D = spec.dims.size();
  auto per_dim = [&](const std::string& key, Quantity q, const std::string& fallback, bool positive) {
    std::vector<double> v = nonempty(c, key) ? c.get_quantity_list(key, q, positive)
                                             : std::vector<double>{c.get_quantity(fallback, q, positive)};
    if (v.size() == 1) v.assign(D, v[0]);
    if (v.size() != D)
      throw InvalidDesign(
          "need one value per dimension (" + std::to_string(D) + "), got " + std::to_string(v.size()),
          c.where(key));
    return v;
  };
  const auto bw = per_dim("topology.dim_bandwidth", Quantity::Bandwidth, "topology.link_bandwidth", true);
  const auto lat = per_dim("topology.dim_latency", Quantity::Time, "topology.link_latency", false);
  std::uint64_t npus = 1;
  for (std::size_t k = 0; k < D; ++k) {
    spec.dims[k].bandwidth_Bps = bw[k];
    spec.dims[k].latency_s = lat[k];
    npus *= spec.dims[k].size;
  }
  if (nonempty(c, "topology.dim_levels")) spec.levels = c.get_list("topology.dim_levels");
  for (const std::string& l : spec.levels)
    if (l != "chiplet" && l != "package" && l != "node" && l != "pod")
      throw BadInput("dimension level '" + l + "' is not chiplet, package, node or pod",
                     c.where("topology.dim_levels"));
  // NPUs are the compute nodes. When the user also gave servers x GPUs, they must agree.
  if (explicitly_set(c, "topology.servers") || explicitly_set(c, "server.gpus")) {
    const std::uint64_t gpus =
        std::uint64_t(get_u32(c, "topology.servers", 1)) * get_u32(c, "server.gpus", 1, 1 << 16);
    if (gpus != npus)
      throw InvalidDesign("the dimensions hold " + std::to_string(npus) +
                              " NPUs but topology.servers x server.gpus = " + std::to_string(gpus),
                          dims_where);
  }
  return spec;
}

FamilySpec torus_from(const Config& c, const LinkClass* intra) {
  if (!nonempty(c, "topology.dims"))
    throw BadInput("torus needs topology.dims, e.g. 8,8,8", "key topology.dims");
  const std::string where = c.where("topology.dims");
  TorusSpec spec;
  for (std::string item : c.get_list("topology.dims")) {
    if (const auto colon = item.find(':'); colon != std::string::npos) {
      if (to_lower(trim(item.substr(0, colon))) != "ring")
        throw BadInput("torus dimensions are rings; got '" + item + "'", where);
      item = std::string(trim(item.substr(colon + 1)));
    }
    const auto v = parse_plain_number(item);
    if (!v || *v != std::floor(*v) || *v < 2 || *v > 1e7)
      throw BadInput("torus dimension size '" + item + "' must be an integer >= 2", where);
    spec.dims.push_back(static_cast<std::uint32_t>(*v));
  }
  spec.link_bandwidth_Bps = c.get_bandwidth("topology.link_bandwidth");
  spec.link_latency_s = c.get_time("topology.link_latency");
  spec.server = server_spec_from_config(c, intra);
  spec.optical = optical_device(c, "none");
  std::uint64_t n = 1;
  for (auto a : spec.dims) n *= a;
  if (explicitly_set(c, "topology.servers") && n != std::uint64_t(get_u32(c, "topology.servers", 1)))
    throw InvalidDesign("the torus dimensions hold " + std::to_string(n) +
                            " servers but topology.servers = " + c.get_string("topology.servers"),
                        where);
  return spec;
}

FamilySpec expander_from(const Config& c, const LinkClass* intra) {
  ExpanderSpec s;
  s.servers = get_u32(c, "topology.servers", 1);
  s.degree = get_u32(c, "topology.degree", 1);
  if (s.degree >= s.servers)
    throw InvalidDesign(
        "degree " + std::to_string(s.degree) + " must be below the " + std::to_string(s.servers) + " servers",
        c.where("topology.degree"));
  s.link_bandwidth_Bps = c.get_bandwidth("topology.link_bandwidth");
  s.link_latency_s = c.get_time("topology.link_latency");
  s.seed = static_cast<std::uint64_t>(c.get_int("topology.seed", 0));
  s.optical = optical_device(c, "patch_panel");
  s.server = server_spec_from_config(c, intra);
  return s;
}

FamilySpec file_from(const Config& c, const LinkClass* intra) {
  if (!nonempty(c, "topology.file")) throw BadInput("kind = file needs topology.file", "key topology.file");
  FileTopologySpec s;
  s.path = c.get_string("topology.file");
  s.default_latency_s = c.get_time("topology.link_latency");
  s.server = server_spec_from_config(c, intra);
  s.optical = optical_device(c, "none");
  s.gpus_given = explicitly_set(c, "server.gpus");
  return s;
}

FamilySpec rail_from(const Config& c, const LinkClass* intra) {
  RailSpec s;
  s.servers = get_u32(c, "topology.servers", 1);
  s.rails = get_u32(c, "topology.rails", 0, 1 << 16);
  s.planes = get_u32(c, "topology.planes", 1, 1 << 10);
  s.radix = get_u32(c, "topology.rail_radix", 0, 4096);
  s.tiers = get_u32(c, "topology.rail_tiers", 2, 3);
  const std::string spine = to_lower(trim(c.get_string("topology.spine")));
  if (spine != "full" && spine != "none")
    throw BadInput("topology.spine must be full or none, got '" + spine + "'", c.where("topology.spine"));
  s.spine = spine == "full";
  s.oversubscription = c.get_double("topology.oversubscription");
  if (!(s.oversubscription > 0))
    throw BadInput("oversubscription must be positive", c.where("topology.oversubscription"));
  s.link_bandwidth_Bps = c.get_bandwidth("topology.link_bandwidth");
  s.link_latency_s = c.get_time("topology.link_latency");
  s.server = server_spec_from_config(c, intra);
  if (s.radix != 0 && (s.radix < 4 || s.radix % 2 != 0))
    throw BadInput("rail switch radix must be an even number >= 4, got " + std::to_string(s.radix),
                   c.where("topology.rail_radix"));
  return s;
}

FamilySpec dragonfly_from(const Config& c, const LinkClass* intra) {
  DragonflySpec s;
  s.groups = get_u32(c, "topology.groups", 0, 1 << 20);
  s.routers = get_u32(c, "topology.routers_per_group", 1, 1 << 12);
  s.terminals = get_u32(c, "topology.terminals_per_router", 1, 1 << 12);
  s.global_links = get_u32(c, "topology.global_links_per_router", 0, 1 << 12);
  if (c.entry("topology.routing")) {
    const std::string routing = to_lower(trim(c.get_string("topology.routing")));
    if (routing != "minimal" && routing != "valiant")
      throw BadInput("topology.routing must be minimal or valiant, got '" + routing + "'",
                     c.where("topology.routing"));
    s.valiant = routing == "valiant";
  }
  s.link_bandwidth_Bps = c.get_bandwidth("topology.link_bandwidth");
  s.link_latency_s = c.get_time("topology.link_latency");
  s.server = server_spec_from_config(c, intra);
  const std::uint64_t g = s.groups != 0 ? s.groups : std::uint64_t{s.routers} * s.global_links + 1;
  const std::uint64_t servers = g * s.routers * s.terminals;
  if (explicitly_set(c, "topology.servers") && servers != get_u32(c, "topology.servers", 1))
    throw InvalidDesign(
        "the dragonfly holds " + std::to_string(servers) +
            " servers (groups x routers_per_group x terminals_per_router) but topology.servers = " +
            c.get_string("topology.servers"),
        c.where("topology.servers"));
  return s;
}

struct Family {
  const char* name;
  FamilySpec (*from_config)(const Config&, const LinkClass*);
};

// The topology families by name. Adding one: its spec in families.hpp (and FamilySpec), its
// builder, its parser here, one line below.
constexpr Family kFamilies[] = {
    {"switch", switch_from},     {"fattree", fattree_from}, {"topoopt", topoopt_from},
    {"multidim", multidim_from}, {"torus", torus_from},     {"expander", expander_from},
    {"file", file_from},         {"rail", rail_from},       {"dragonfly", dragonfly_from},
};
static_assert(std::size(kFamilies) == std::variant_size_v<FamilySpec>,
              "one parser per FamilySpec alternative, in its order");

}  // namespace

const std::vector<std::string>& topology_family_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& f : kFamilies) v.push_back(f.name);
    return v;
  }();
  return names;
}

std::string family_name(const TopologySpec& spec) {
  return kFamilies[spec.family.index()].name;
}

TopologySpec topology_spec_from_config(const Config& config, const LinkClass* intra_defaults) {
  const std::string kind = config.get_string("topology.kind");
  // Every family routes minimally; valiant is the dragonfly's alone. An explicit `minimal` is
  // accepted anywhere (a sweep row's replay writes every key).
  if (kind != "dragonfly" && explicitly_set(config, "topology.routing") &&
      to_lower(trim(config.get_string("topology.routing"))) != "minimal")
    throw BadInput("topology.routing = valiant applies to topology.kind = dragonfly only, not " + kind,
                   config.where("topology.routing"));
  for (const auto& f : kFamilies)
    if (kind == f.name) {
      TopologySpec spec;
      spec.family = f.from_config(config, intra_defaults);
      spec.allow_disconnected =
          config.entry("topology.allow_disconnected") && config.get_bool("topology.allow_disconnected");
      return spec;
    }
  throw BadInput("unknown topology kind '" + kind + "' (" + join(topology_family_names(), ", ") + ")",
                 config.where("topology.kind"));
}

void normalize_server_fabrics(ServerSpec& s) {
  if (s.intra_of_server.empty()) return;
  const LinkClass first = s.intra_of_server[0];
  for (const LinkClass& l : s.intra_of_server)
    if (!(l == first)) return;
  s.intra_bandwidth_Bps = first.bandwidth_Bps;
  s.intra_efficiency = first.efficiency;
  s.intra_latency_s = first.latency_s;
  s.intra_step_latency_s = first.step_latency_s;
  s.intra_of_server.clear();
}

const ServerSpec* server_of(const TopologySpec& spec) {
  return server_of(const_cast<TopologySpec&>(spec));
}

ServerSpec* server_of(TopologySpec& spec) {
  return std::visit(
      [](auto& f) -> ServerSpec* {
        if constexpr (requires { f.server; })
          return &f.server;
        else
          return nullptr;
      },
      spec.family);
}

}  // namespace toposweep::topology
