#include <cmath>
#include <fstream>
#include <sstream>

#include "toposweep/topology/cost.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/units.hpp"

namespace toposweep::topology {
namespace {

// Keep in sync with inputs/costs/libra.ini (a test compares them value by value).
constexpr const char* kBuiltinTable = R"INI(
[per_dimension]
link.chiplet = 2.0
link.package = 4.0
link.node = 4.0
link.pod = 7.8
switch.package = 13.0
switch.node = 13.0
switch.pod = 18.0
nic.pod = 31.6
[nic_port]
10Gbps = 100
25Gbps = 150
40Gbps = 250
100Gbps = 400
200Gbps = 700
400Gbps = 1200
800Gbps = 2000
[transceiver]
10Gbps = 20
25Gbps = 40
40Gbps = 60
100Gbps = 100
200Gbps = 250
400Gbps = 500
800Gbps = 900
[switch_port]
10Gbps = 50
25Gbps = 80
40Gbps = 120
100Gbps = 200
200Gbps = 350
400Gbps = 600
800Gbps = 1000
[passive]
patch_panel_port = 100
ocs_port = 500
fibre = 30
)INI";

bool is_level(const std::string& s) {
  return s == "chiplet" || s == "package" || s == "node" || s == "pod";
}

// [switch_chassis] RADIXxSPEED = price, e.g. 64x400Gbps = 25000.
void add_chassis(PriceTable& t, const std::string& item, double price, const std::string& origin) {
  const auto x = item.find('x');
  const std::string radix_text = item.substr(0, x == std::string::npos ? 0 : x);
  const auto radix = parse_plain_number(radix_text);
  if (x == std::string::npos || !radix || *radix < 1 || *radix != std::floor(*radix) || *radix > 1e6)
    throw BadInput("expected RADIXxSPEED = price (e.g. 64x400Gbps = 25000), got '" + item + "'", origin);
  const double speed_Bps = parse_bandwidth(item.substr(x + 1), origin);
  if (!(speed_Bps > 0)) throw BadInput("port speed must be positive", origin);
  t.switch_chassis[{speed_Bps * 8, static_cast<std::uint32_t>(*radix)}] = price;
}

// [copper|multimode|singlemode] cable.SPEED = price (per link), transceiver.SPEED = price (per end).
void add_media(PriceTable::Media& m, const std::string& section, const std::string& item, double price,
               const std::string& origin) {
  const auto dot = item.find('.');
  const std::string part = item.substr(0, dot == std::string::npos ? 0 : dot);
  if (dot == std::string::npos || (part != "cable" && part != "transceiver"))
    throw BadInput(
        "expected cable.SPEED or transceiver.SPEED = price (e.g. cable.400Gbps = 100), got '" + item + "'",
        origin);
  if (part == "transceiver" && section == "copper")
    throw BadInput("copper (DAC) links have no transceivers: price the cable (cable.SPEED)", origin);
  const double speed_Bps = parse_bandwidth(item.substr(dot + 1), origin);
  if (!(speed_Bps > 0)) throw BadInput("port speed must be positive", origin);
  (part == "cable" ? m.cable : m.transceiver)[speed_Bps * 8] = price;
}

}  // namespace

PriceTable parse_price_table(const std::string& text, const std::string& name) {
  Config raw;
  load_ini_text(raw, text, name);
  PriceTable t;
  t.name = name;
  for (const auto& [key, entry] : raw.entries()) {
    const auto dot = key.find('.');
    const std::string section = key.substr(0, dot == std::string::npos ? 0 : dot);
    const std::string item = dot == std::string::npos ? key : key.substr(dot + 1);
    const auto value = parse_plain_number(entry.value);
    if (!value || *value < 0 || !std::isfinite(*value))
      throw BadInput("price '" + entry.value + "' of " + key + " must be a non-negative number (US$)",
                     entry.origin);
    if (section == "per_dimension") {
      const auto d2 = item.find('.');
      const std::string part = item.substr(0, d2 == std::string::npos ? 0 : d2);
      const std::string level = d2 == std::string::npos ? "" : item.substr(d2 + 1);
      if (!is_level(level) || (part != "link" && part != "switch" && part != "nic"))
        throw BadInput("expected link|switch|nic.chiplet|package|node|pod, got '" + item + "'", entry.origin);
      (part == "link"     ? t.link_per_GBps
       : part == "switch" ? t.switch_per_GBps
                          : t.nic_per_GBps)[level] = *value;
    } else if (section == "nic_port" || section == "transceiver" || section == "switch_port") {
      const double speed_Bps = parse_bandwidth(item, entry.origin);
      if (!(speed_Bps > 0)) throw BadInput("port speed must be positive", entry.origin);
      (section == "nic_port"      ? t.nic_port
       : section == "transceiver" ? t.transceiver
                                  : t.switch_port)[speed_Bps * 8] = *value;
    } else if (section == "passive") {
      if (item == "patch_panel_port")
        t.patch_panel_port = *value;
      else if (item == "ocs_port")
        t.ocs_port = *value;
      else if (item == "fibre")
        t.fibre = *value;
      else
        throw BadInput("unknown passive part '" + item + "' (patch_panel_port, ocs_port, fibre)",
                       entry.origin);
    } else if (section == "switch_chassis") {
      add_chassis(t, item, *value, entry.origin);
    } else if (section == "copper" || section == "multimode" || section == "singlemode") {
      add_media(section == "copper"      ? t.copper
                : section == "multimode" ? t.multimode
                                         : t.singlemode,
                section, item, *value, entry.origin);
    } else {
      throw BadInput("unknown price-table entry '" + key +
                         "' (sections: per_dimension, nic_port, transceiver, switch_port, passive, "
                         "switch_chassis, copper, multimode, singlemode)",
                     entry.origin);
    }
  }
  const bool parts =
      !t.switch_chassis.empty() || !t.copper.empty() || !t.multimode.empty() || !t.singlemode.empty();
  if (parts && (t.switch_chassis.empty() || t.multimode.empty() || t.singlemode.empty()))
    throw BadInput(
        "a price table with parts sections needs [switch_chassis], [multimode] and [singlemode] "
        "([copper] is optional)",
        name);
  return t;
}

PriceTable builtin_price_table() {
  return parse_price_table(kBuiltinTable, "built-in (inputs/costs/libra.ini)");
}

PriceTable load_price_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw BadInput("cannot read price table '" + path + "'", "costs.table");
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse_price_table(buf.str(), path);
}

CostSpec cost_spec_from_config(const Config& config) {
  CostSpec s;
  if (config.has("costs.table")) s.table = config.get_string("costs.table");
  return s;
}

PriceTable price_table(const CostSpec& spec) {
  if (spec.table.empty()) return builtin_price_table();
  // A missing file is the key's fault; a malformed one is reported at its own file:line.
  if (!std::ifstream(spec.table))
    throw BadInput("cannot read price table '" + spec.table + "'", "key costs.table");
  return load_price_table(spec.table);
}

PriceTable price_table_from_config(const Config& config) {
  const CostSpec spec = cost_spec_from_config(config);
  try {
    return price_table(spec);
  } catch (const BadInput& e) {
    if (e.where() != "key costs.table") throw;
    throw BadInput(e.what(), config.where("costs.table"));
  }
}

double price_at_speed(const std::map<double, double>& by_speed, double bits_per_s, const std::string& what,
                      const std::string& table_name) {
  if (by_speed.empty()) throw BadInput("the price table has no " + what + " prices", table_name);
  const auto hi = by_speed.lower_bound(bits_per_s);
  if (hi == by_speed.begin()) return hi->second;  // at or below the smallest part
  if (hi == by_speed.end()) {
    const auto& [speed, price] = *by_speed.rbegin();
    return price * bits_per_s / speed;
  }
  if (hi->first == bits_per_s) return hi->second;
  const auto lo = std::prev(hi);
  const double f = (bits_per_s - lo->first) / (hi->first - lo->first);
  return lo->second + f * (hi->second - lo->second);
}

}  // namespace toposweep::topology
