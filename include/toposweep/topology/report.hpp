#pragma once
// Everything `toposweep topology` reports about one network (also reused by other commands
// that embed a "topology" object in their JSON): counts, ports, hops, bisection, cost.
#include <nlohmann/json.hpp>
#include <string>

#include "toposweep/topology/cost.hpp"
#include "toposweep/topology/metrics.hpp"
#include "toposweep/topology/network.hpp"

namespace toposweep::topology {

struct TopologyReport {
  HopStats hops;
  Bisection bisection;
  PortStats ports;
  CostBreakdown cost;
  std::string price_table;
};

TopologyReport describe_topology(const Network& network, const PriceTable& table);

// The `topology --json` object (docs/topology.md): kind, servers, switches, gpus, links, degree,
// diameter, mean_hops, bisection_Bps, cost_usd, cost_breakdown, strides (topoopt), and more.
// `with_edges` adds "edges": [[src, dst, bandwidth_Bps, latency_s], ...].
nlohmann::json report_json(const Network& network, const TopologyReport& report, bool with_edges = false);

// The parts model's bill of materials: {"switch_chassis": [{radix, speed_bps, count, unit_usd,
// usd}], "links": [{reach, speed_bps, cables, cable_usd, transceivers, transceiver_usd, usd}]}.
// report_json adds it as "bom" when the cost model is "parts".
nlohmann::json bom_json(const CostBreakdown& cost);

// A few lines for humans.
std::string report_text(const Network& network, const TopologyReport& report);

}  // namespace toposweep::topology
