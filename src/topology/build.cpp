#include "toposweep/topology/build.hpp"

#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "toposweep/topology/edge_list.hpp"
#include "toposweep/topology/families.hpp"
#include "toposweep/topology/metrics.hpp"
#include "toposweep/topology/totient_perms.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"
#include "toposweep/util/units.hpp"

namespace toposweep {
namespace {

using namespace topology;

bool explicitly_set(const Config& c, const std::string& key) {
  return c.has(key) && c.entries().at(key).origin != "default";
}
bool nonempty(const Config& c, const std::string& key) {
  return c.has(key) && !trim(c.get_string(key)).empty();
}

std::uint32_t get_u32(const Config& c, const std::string& key, std::int64_t min, std::int64_t max = 1 << 26) {
  return static_cast<std::uint32_t>(c.get_int(key, min, max));
}

// topology.optical, with `fallback` standing in for "auto".
std::string optical_device(const Config& c, const std::string& fallback) {
  const std::string v = c.has("topology.optical") ? c.get_string("topology.optical") : "auto";
  if (v == "auto") return fallback;
  if (v != "patch_panel" && v != "ocs" && v != "none")
    throw BadInput("topology.optical must be auto, patch_panel, ocs or none, got '" + v + "'",
                   c.where("topology.optical"));
  return v;
}

ServerSpec server_spec(const Config& c) {
  ServerSpec s;
  s.gpus = get_u32(c, "server.gpus", 1, 1 << 16);
  s.intra_bandwidth_Bps = c.get_bandwidth("server.intra_bandwidth");
  return s;
}

Network build_topoopt_from(const Config& c) {
  TopoOptSpec spec;
  spec.servers = get_u32(c, "topology.servers", 1);
  spec.degree = get_u32(c, "topology.degree", 1);
  spec.link_bandwidth_Bps = c.get_bandwidth("topology.link_bandwidth");
  spec.link_latency_s = c.get_time("topology.link_latency");
  spec.server = server_spec(c);
  spec.extra_links = parse_extra_links(nonempty(c, "topology.extra_links") ? c.get_string("topology.extra_links") : "", c.where("topology.extra_links"));
  spec.optical = optical_device(c, "patch_panel");
  const std::uint32_t n = spec.servers;
  if (spec.degree >= n)
    throw InvalidDesign(
        "degree " + std::to_string(spec.degree) + " must be below the " + std::to_string(n) + " servers",
        c.where("topology.degree"));
  if (nonempty(c, "topology.strides")) {
    for (std::int64_t s : c.get_int_list("topology.strides", 0, UINT32_MAX))
      spec.strides.push_back(static_cast<std::uint32_t>(s));
    return build_topoopt(spec, c.where("topology.strides"));
  }
  std::uint32_t g = get_u32(c, "topology.ring_group", 0);
  if (g == 0) g = n;
  std::uint32_t rings = get_u32(c, "topology.rings", 0);
  if (rings == 0) {
    if (spec.degree % 2 != 0 && spec.extra_links.empty())
      throw InvalidDesign(
          "odd degree " + std::to_string(spec.degree) +
              ": TotientPerms rings are bidirectional and use ports in pairs (use an even degree, "
              "topology.rings, or topology.extra_links for the odd port)",
          c.where("topology.degree"));
    rings = spec.degree / 2;
  }
  spec.ring_group = g;
  spec.strides = totient_perms(n, g, rings, c.where("topology.ring_group"));
  return build_topoopt(spec, c.where("topology.rings"));
}

Network build_multidim_from(const Config& c) {
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
  return build_multidim(spec, dims_where);
}

Network build_torus_from(const Config& c) {
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
  spec.server = server_spec(c);
  spec.optical = optical_device(c, "none");
  std::uint64_t n = 1;
  for (auto a : spec.dims) n *= a;
  if (explicitly_set(c, "topology.servers") && n != std::uint64_t(get_u32(c, "topology.servers", 1)))
    throw InvalidDesign("the torus dimensions hold " + std::to_string(n) +
                       " servers but topology.servers = " + c.get_string("topology.servers"),
                   where);
  return build_torus(spec, where);
}

Network build_by_kind(const Config& c) {
  const std::string kind = c.get_string("topology.kind");
  if (kind == "switch") {
    SwitchSpec s;
    s.servers = get_u32(c, "topology.servers", 1);
    s.degree = get_u32(c, "topology.degree", 1, 1 << 16);
    s.link_bandwidth_Bps = c.get_bandwidth("topology.link_bandwidth");
    s.link_latency_s = c.get_time("topology.link_latency");
    s.server = server_spec(c);
    return build_switch(s);
  }
  if (kind == "fattree") {
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
    s.server = server_spec(c);
    return build_fattree(s);
  }
  if (kind == "topoopt") return build_topoopt_from(c);
  if (kind == "multidim") return build_multidim_from(c);
  if (kind == "torus") return build_torus_from(c);
  if (kind == "expander") {
    ExpanderSpec s;
    s.servers = get_u32(c, "topology.servers", 1);
    s.degree = get_u32(c, "topology.degree", 1);
    if (s.degree >= s.servers)
      throw InvalidDesign("degree " + std::to_string(s.degree) + " must be below the " +
                              std::to_string(s.servers) + " servers",
                          c.where("topology.degree"));
    s.link_bandwidth_Bps = c.get_bandwidth("topology.link_bandwidth");
    s.link_latency_s = c.get_time("topology.link_latency");
    s.seed = static_cast<std::uint64_t>(c.get_int("topology.seed", 0));
    s.optical = optical_device(c, "patch_panel");
    s.server = server_spec(c);
    return build_expander(s);
  }
  if (kind == "file") {
    if (!nonempty(c, "topology.file")) throw BadInput("kind = file needs topology.file", "key topology.file");
    EdgeListOptions o;
    o.default_latency_s = c.get_time("topology.link_latency");
    o.server = server_spec(c);
    o.optical = optical_device(c, "none");
    return read_edge_list_file(c.get_string("topology.file"), o);
  }
  throw BadInput(
      "unknown topology kind '" + kind + "' (switch, fattree, topoopt, multidim, torus, expander, file)",
      c.where("topology.kind"));
}

}  // namespace

std::vector<std::pair<std::uint32_t, std::uint32_t>> parse_extra_links(const std::string& text,
                                                                       const std::string& where) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> links;
  if (trim(text).empty()) return links;
  for (const std::string& item : split_list(text)) {
    const auto dash = item.find('-');
    const auto a = dash == std::string::npos ? std::nullopt : parse_plain_number(trim(item.substr(0, dash)));
    const auto b = dash == std::string::npos ? std::nullopt : parse_plain_number(trim(item.substr(dash + 1)));
    if (!a || !b || *a < 0 || *b < 0 || *a != std::floor(*a) || *b != std::floor(*b) || *a > 4e9 || *b > 4e9)
      throw BadInput("extra link '" + item + "' is not A-B with server ids", where);
    links.emplace_back(static_cast<std::uint32_t>(*a), static_cast<std::uint32_t>(*b));
  }
  return links;
}

Network build_network(const Config& config) {
  Network net = build_by_kind(config);
  const bool allow =
      config.has("topology.allow_disconnected") && config.get_bool("topology.allow_disconnected");
  if (!allow)
    require_connected(
        net, "topology.kind = " + net.info().kind + "; set topology.allow_disconnected = true to accept it");
  return net;
}

}  // namespace toposweep
