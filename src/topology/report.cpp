#include "toposweep/topology/report.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "toposweep/topology/families.hpp"
#include "toposweep/topology/metrics.hpp"
#include "toposweep/util/units.hpp"

namespace toposweep::topology {

nlohmann::json bom_json(const CostBreakdown& c) {
  using nlohmann::json;
  json chassis = json::array(), links = json::array();
  for (const ChassisLine& l : c.chassis)
    chassis.push_back({{"radix", l.radix},
                       {"speed_bps", l.speed_bps},
                       {"count", l.count},
                       {"unit_usd", l.unit_usd},
                       {"usd", l.count * l.unit_usd}});
  for (const MediaLine& m : c.media)
    links.push_back({{"reach", reach_name(m.reach)},
                     {"speed_bps", m.speed_bps},
                     {"cables", m.cables},
                     {"cable_usd", m.cable_usd},
                     {"transceivers", m.transceivers},
                     {"transceiver_usd", m.transceiver_usd},
                     {"usd", m.cables * m.cable_usd + m.transceivers * m.transceiver_usd}});
  return {{"switch_chassis", std::move(chassis)}, {"links", std::move(links)}};
}

TopologyReport describe_topology(const Network& net, const PriceTable& table) {
  TopologyReport r;
  r.hops = hop_stats(net);
  r.bisection = bisection_bandwidth(net);
  r.ports = port_stats(net);
  r.cost = network_cost(net, table);
  r.price_table = table.name;
  return r;
}

nlohmann::json report_json(const Network& net, const TopologyReport& r, bool with_edges) {
  using nlohmann::json;
  const TopologyInfo& info = net.info();
  json j;
  j["kind"] = info.kind;
  j["servers"] = net.compute_count();
  j["switches"] = net.switch_count();
  j["gpus"] = net.gpu_count();
  j["gpus_per_server"] = net.gpus_per_node();
  j["intra_bandwidth_Bps"] = net.intra_bandwidth_Bps();
  j["intra_efficiency"] = net.intra_link().efficiency;
  j["intra_latency_s"] = net.intra_link().latency_s;
  j["intra_step_latency_s"] = net.intra_link().step_latency_s;
  if (!net.uniform_servers()) {
    json per = json::array();
    for (VertexId v = 0; v < net.compute_count(); ++v) per.push_back(net.intra_link(v).bandwidth_Bps);
    j["server_intra_bandwidth_Bps"] = std::move(per);
  }
  j["link_efficiency"] = net.link_efficiency();
  j["links"] = net.arc_count();
  // Ports per server (docs/topology.md, `degree`): the family's configured degree, else the
  // measured one where uniform, else null.
  if (info.degree > 0)
    j["degree"] = info.degree;
  else
    j["degree"] = r.ports.min_ports == r.ports.max_ports ? json(r.ports.min_ports) : json(nullptr);
  j["ports_per_server_min"] = r.ports.min_ports;
  j["ports_per_server_max"] = r.ports.max_ports;
  j["ports_total"] = r.ports.total_ports;
  j["egress_Bps_min"] = r.ports.min_egress_Bps;
  j["egress_Bps_max"] = r.ports.max_egress_Bps;
  if (info.link_bandwidth_Bps > 0) j["link_bandwidth_Bps"] = info.link_bandwidth_Bps;
  if (info.link_bandwidth_Bps > 0) j["link_latency_s"] = info.link_latency_s;
  j["connected"] = r.hops.connected();
  j["unreachable_pairs"] = r.hops.unreachable_pairs;
  j["diameter"] = r.hops.diameter;
  j["mean_hops"] = r.hops.mean_hops;
  j["bisection_Bps"] = r.bisection.bandwidth_Bps;
  j["bisection_method"] = r.bisection.method;
  j["cost_usd"] = r.cost.total_usd;
  j["cost_model"] = r.cost.model;
  j["cost_breakdown"] = r.cost.by_component;
  if (!r.cost.count.empty()) j["cost_counts"] = r.cost.count;
  if (r.cost.model == "parts") j["bom"] = bom_json(r.cost);
  j["price_table"] = r.price_table;
  if (info.kind == "topoopt") {
    j["strides"] = info.strides;
    j["ring_group"] = info.ring_group;
    json extra = json::array();
    for (const auto& [a, b] : info.extra_links) extra.push_back({a, b});
    j["extra_links"] = extra;
  }
  if (!info.optical.empty()) j["optical"] = info.optical;
  if (!info.dims.empty()) {
    json dims = json::array();
    for (std::size_t k = 0; k < info.dims.size(); ++k)
      dims.push_back({{"type", dimension_type_name(info.dims[k].type)},
                      {"size", info.dims[k].size},
                      {"bandwidth_Bps", info.dims[k].bandwidth_Bps},
                      {"latency_s", info.dims[k].latency_s},
                      {"level", k < info.dim_levels.size() ? info.dim_levels[k] : ""}});
    j["dims"] = dims;
  }
  if (!info.torus_dims.empty()) j["torus_dims"] = info.torus_dims;
  if (info.fattree_tiers != 0) {
    j["fattree_tiers"] = info.fattree_tiers;
    j["fattree_radix"] = info.fattree_radix;
    j["oversubscription"] = info.oversubscription;
  }
  if (info.rails != 0) {
    j["rails"] = info.rails;
    j["planes"] = info.planes;
    j["spine"] = info.rail_spine;
    j["rail_radix"] = info.fattree_radix;
    // Bill of materials by switch role, from each switch's level (hops to the nearest server):
    // leaves 1, spines or aggregation switches 2, cores 3.
    const std::vector<std::uint32_t> level = switch_levels(net);
    std::uint32_t count[4] = {0, 0, 0, 0};
    for (VertexId v = net.compute_count(); v < net.vertex_count(); ++v) count[std::min(level[v], 3u)] += 1;
    const std::uint32_t leaves = count[1], spines = count[2], cores = count[3];
    j["rail_tiers"] = cores > 0 ? 3 : spines > 0 ? 2 : 1;
    j["rail_leaf_switches"] = leaves;
    j["rail_spine_switches"] = spines;
    j["rail_core_switches"] = cores;
    if (info.rail_spine == "full" || info.oversubscription > 0) j["oversubscription"] = info.oversubscription;
  }
  if (with_edges) {
    json edges = json::array();
    for (const Arc& a : net.arcs()) edges.push_back({a.src, a.dst, a.bandwidth_Bps, a.latency_s});
    j["edges"] = std::move(edges);
  }
  return j;
}

std::string report_text(const Network& net, const TopologyReport& r) {
  const TopologyInfo& info = net.info();
  std::ostringstream o;
  o << "topology   " << info.kind;
  if (info.kind == "topoopt") {
    o << "  strides";
    for (std::size_t i = 0; i < info.strides.size(); ++i) o << (i ? "," : " ") << info.strides[i];
    if (!info.extra_links.empty()) o << "  + " << info.extra_links.size() << " extra links";
  }
  if (!info.dims.empty()) {
    o << " ";
    for (std::size_t k = 0; k < info.dims.size(); ++k)
      o << (k ? " x " : " ") << dimension_type_name(info.dims[k].type) << ":" << info.dims[k].size << " @ "
        << human_quantity(Quantity::Bandwidth, info.dims[k].bandwidth_Bps);
  }
  if (info.fattree_tiers != 0)
    o << "  " << info.fattree_tiers << " tiers, radix " << info.fattree_radix << ", oversubscription "
      << info.oversubscription << ":1";
  o << "\n";
  o << "servers    " << net.compute_count() << " (" << net.gpu_count() << " GPUs, " << net.gpus_per_node()
    << " per server)\n";
  o << "switches   " << net.switch_count() << "\n";
  o << "links      " << net.arc_count() << " directed arcs, " << r.ports.total_ports << " ports\n";
  o << "ports      " << r.ports.min_ports;
  if (r.ports.max_ports != r.ports.min_ports) o << "-" << r.ports.max_ports;
  o << " per server, egress " << human_quantity(Quantity::Bandwidth, r.ports.min_egress_Bps);
  if (r.ports.max_egress_Bps > r.ports.min_egress_Bps * (1 + 1e-9))  // not just rounding
    o << "-" << human_quantity(Quantity::Bandwidth, r.ports.max_egress_Bps);
  o << "\n";
  o << "hops       diameter " << r.hops.diameter << ", mean " << r.hops.mean_hops;
  if (!r.hops.connected()) o << "  (DISCONNECTED: " << r.hops.unreachable_pairs << " unreachable pairs)";
  o << "\n";
  o << "bisection  " << human_quantity(Quantity::Bandwidth, r.bisection.bandwidth_Bps) << " ("
    << r.bisection.method << ")\n";
  o << "cost       US$" << static_cast<long long>(std::llround(r.cost.total_usd)) << " (" << r.cost.model
    << ", " << r.price_table << ")\n";
  for (const auto& [part, usd] : r.cost.by_component) {
    o << "  " << part << std::string(part.size() < 18 ? 18 - part.size() : 1, ' ') << "US$"
      << static_cast<long long>(std::llround(usd));
    if (const auto it = r.cost.count.find(part); it != r.cost.count.end()) o << "  (" << it->second << ")";
    o << "\n";
  }
  // Parts: the bill of materials, speeds in Gb/s as the price table lists them.
  for (const ChassisLine& l : r.cost.chassis)
    o << "  chassis " << l.radix << " x " << l.speed_bps / 1e9 << "G: " << l.count << " x US$"
      << static_cast<long long>(std::llround(l.unit_usd)) << "\n";
  for (const MediaLine& m : r.cost.media) {
    o << "  " << reach_name(m.reach) << " " << m.speed_bps / 1e9 << "G: " << m.cables << " cables x US$"
      << static_cast<long long>(std::llround(m.cable_usd));
    if (m.transceivers > 0)
      o << ", " << m.transceivers << " transceivers x US$"
        << static_cast<long long>(std::llround(m.transceiver_usd));
    o << "\n";
  }
  return o.str();
}

}  // namespace toposweep::topology
