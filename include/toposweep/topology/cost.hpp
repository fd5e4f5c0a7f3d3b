#pragma once
// Network cost. Multi-dimensional networks use LIBRA's per-dimension model (US$ per GB/s of
// per-NPU bandwidth, N * bw_k * unit_k); every other family counts components (NIC ports,
// transceivers, electrical switch ports, patch-panel or OCS ports, fibres) priced by port
// speed, or, where the table has parts sections ([switch_chassis], [copper], [multimode],
// [singlemode]), parts: switch chassis by radix and speed and each link's cable and
// transceivers by its reach class. Price tables are INI files (inputs/costs/*.ini document
// the format and sources).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "toposweep/topology/families.hpp"
#include "toposweep/topology/network.hpp"
#include "toposweep/util/config.hpp"

namespace toposweep::topology {

struct PriceTable {
  std::string name;  // file path, or "built-in (inputs/costs/libra.ini)"
  // Per-dimension prices, US$ per GB/s (1e9 B/s) of per-NPU bandwidth, by level
  // (chiplet, package, node, pod). A level without a switch price cannot host a Switch dim.
  std::map<std::string, double> link_per_GBps, switch_per_GBps, nic_per_GBps;
  // US$ per port, by port speed in bits per second.
  std::map<double, double> nic_port, transceiver, switch_port;
  double patch_panel_port = 0, ocs_port = 0, fibre = 0;  // US$ each

  // Parts sections (opt-in; a table without them prices as above, unchanged).
  // US$ per switch chassis, by (port speed in bits per second, radix).
  std::map<std::pair<double, std::uint32_t>, double> switch_chassis;
  // One reach class of link media: US$ per cable (one per link) and per transceiver (one per
  // link end), by speed in bits per second. Copper (DAC) has no transceivers; an empty list
  // costs nothing (an AOC priced as a cable).
  struct Media {
    std::map<double, double> cable, transceiver;
    bool empty() const { return cable.empty() && transceiver.empty(); }
  };
  Media copper, multimode, singlemode;
  bool has_parts() const { return !switch_chassis.empty(); }
};

// Reach class of a link, assigned from its tier (cost_model.cpp, link_reach): copper (DAC,
// in-rack, <= 3 m), multimode (SR / AOC, <= 100 m, in a row), singlemode (DR / FR, <= 2 km,
// across the hall).
enum class Reach { Copper, Multimode, Singlemode };
const char* reach_name(Reach r);

// Which price table a design point uses: a file, or the built-in table when `table` is empty.
struct CostSpec {
  std::string table;
  bool operator==(const CostSpec&) const = default;
};
CostSpec cost_spec_from_config(const Config& config);  // costs.table
PriceTable price_table(const CostSpec& spec);          // BadInput naming costs.table or the file's line

// The built-in table, identical to inputs/costs/libra.ini.
PriceTable builtin_price_table();
// Parse the INI text of a price table; errors name `name:line`.
PriceTable parse_price_table(const std::string& text, const std::string& name);
PriceTable load_price_table(const std::string& path);
// costs.table when set, else the built-in table.
PriceTable price_table_from_config(const Config& config);

// Price of one port of `bits_per_s` from a by-speed list (linear between listed speeds, the
// smallest part below them, proportional above the largest). BadInput if the list is empty.
double price_at_speed(const std::map<double, double>& by_speed, double bits_per_s, const std::string& what,
                      const std::string& table_name);

// Bill of materials of the parts model: chassis by (radix, speed), media by (reach, speed).
struct ChassisLine {
  std::uint32_t radix = 0;
  double speed_bps = 0;
  double count = 0, unit_usd = 0;
};
struct MediaLine {
  Reach reach = Reach::Copper;
  double speed_bps = 0;
  double cables = 0, transceivers = 0;  // one cable per link, one transceiver per optical link end
  double cable_usd = 0, transceiver_usd = 0;
};

struct CostBreakdown {
  double total_usd = 0;
  std::string model;  // "per_dimension" (LIBRA), "components" or "parts"
  // component -> US$: per_dimension: link, switch, nic; components: nic_port, transceiver,
  // switch_port, patch_panel_port or ocs_port, fibre; parts: nic_port, switch_chassis,
  // copper_cable, multimode_cable, multimode_transceiver, singlemode_cable,
  // singlemode_transceiver, patch_panel_port or ocs_port. Components that cost nothing are omitted.
  std::map<std::string, double> by_component;
  std::map<std::string, double> count;  // components and parts: how many of each
  std::vector<ChassisLine> chassis;     // parts: by (speed, radix)
  std::vector<MediaLine> media;         // parts: by (reach, speed)
};

CostBreakdown network_cost(const Network& network, const PriceTable& table);

// LIBRA cost of one dimension of an N-NPU network: N * bw[GB/s] * (link + switch + nic).
double libra_dimension_cost(std::uint64_t npus, const Dimension& dim, const std::string& level,
                            const PriceTable& table);

// Cost of a direct-connect network of n servers with d ports of `link_bandwidth_Bps` each,
// ports patched through `optical` ("patch_panel", "ocs" or "none"): n*d NIC ports,
// transceivers and optical ports, n*d/2 fibres (parts tables: n*d singlemode transceivers,
// n*d/2 singlemode cables). Equals network_cost of such a topoopt network.
CostBreakdown direct_connect_cost(std::uint32_t servers, std::uint32_t degree, double link_bandwidth_Bps,
                                  const std::string& optical, const PriceTable& table);

// TopoOpt's "similar cost" comparison: the per-port link bandwidth of a fat-tree of `shape`
// (servers, degree, tiers, radix, oversubscription; its link_bandwidth is ignored) whose cost
// equals `target_usd`, found by bisection (cost grows with speed). BadInput when even a
// 1 Mb/s fat-tree costs more than the target, or when the table has parts sections (chassis
// come at listed speeds only: the cost is not a function of any speed).
struct SimilarCost {
  double link_bandwidth_Bps = 0;
  double cost_usd = 0;  // cost of the fat-tree found (equal to the target up to 1e-9 relative)
};
SimilarCost similar_cost_fattree(double target_usd, FatTreeSpec shape, const PriceTable& table);

}  // namespace toposweep::topology
