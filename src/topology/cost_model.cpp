#include <algorithm>
#include <cmath>

#include "toposweep/topology/cost.hpp"
#include "toposweep/topology/metrics.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::topology {
namespace {

double per_level(const std::map<std::string, double>& m, const std::string& level) {
  const auto it = m.find(level);
  return it == m.end() ? -1 : it->second;
}

void add(CostBreakdown& c, const std::string& part, double count, double unit_price) {
  if (count <= 0) return;
  c.count[part] += count;
  c.by_component[part] += count * unit_price;
}

void finish(CostBreakdown& c) {
  c.total_usd = 0;
  for (auto it = c.by_component.begin(); it != c.by_component.end();) {
    if (it->second == 0) {
      it = c.by_component.erase(it);
      continue;
    }
    c.total_usd += it->second;
    ++it;
  }
}

// Adds dimension `dim` of an N-NPU network at `level` to the per-dimension breakdown.
void add_dimension(CostBreakdown& c, std::uint64_t N, const Dimension& dim, const std::string& level,
                   const PriceTable& t) {
  const double GBps = dim.bandwidth_Bps / 1e9;
  const double link = per_level(t.link_per_GBps, level);
  if (link < 0) throw BadInput("no link price for level " + level + " (link." + level + ")", t.name);
  c.by_component["link"] += N * GBps * link;
  if (dim.type != DimensionType::Switch) return;
  const double sw = per_level(t.switch_per_GBps, level);
  if (sw < 0)
    throw BadInput("a switch dimension at level " + level + " needs a switch." + level + " price", t.name);
  c.by_component["switch"] += N * GBps * sw;
  const double nic = per_level(t.nic_per_GBps, level);
  if (nic > 0) c.by_component["nic"] += N * GBps * nic;
}

CostBreakdown per_dimension_cost(const Network& net, const PriceTable& t) {
  CostBreakdown c;
  c.model = "per_dimension";
  const auto& dims = net.info().dims;
  const auto& levels =
      net.info().dim_levels.empty() ? default_dim_levels(dims.size()) : net.info().dim_levels;
  for (std::size_t k = 0; k < dims.size(); ++k) add_dimension(c, net.compute_count(), dims[k], levels[k], t);
  finish(c);
  return c;
}

// One component's running count and price over the arcs. Summed in arc order from zero, as the
// breakdown's map entries were when each arc added to them, so the totals are the same bits; the
// maps get one update per component instead of one per arc (issue 20: every sweep rank prices
// every network it meets).
struct PartSum {
  const char* name;
  double count = 0, usd = 0;
  bool used = false;
  void add(double n, double unit_price) {
    if (n <= 0) return;
    count += n;
    usd += n * unit_price;
    used = true;
  }
};

// price_at_speed of one table, remembering the last speed asked (a network's arcs mostly share one).
class SpeedPrice {
 public:
  SpeedPrice(const std::map<double, double>& by_speed, const char* what, const std::string& table)
      : by_speed_(by_speed), what_(what), table_(table) {}
  double at(double bits) {
    if (bits != bits_) bits_ = bits, price_ = price_at_speed(by_speed_, bits, what_, table_);
    return price_;
  }

 private:
  const std::map<double, double>& by_speed_;
  std::string what_;
  const std::string& table_;
  double bits_ = -1, price_ = 0;
};

CostBreakdown component_cost(const Network& net, const PriceTable& t) {
  CostBreakdown c;
  c.model = "components";
  const std::string& optical = net.info().optical;
  const bool patch_panel = optical == "patch_panel", ocs = optical == "ocs";
  PartSum nic{"nic_port"}, patch{"patch_panel_port"}, ocs_port{"ocs_port"}, switch_port{"switch_port"},
      transceiver{"transceiver"}, fibre{"fibre"};
  SpeedPrice nic_price(t.nic_port, "nic_port", t.name), switch_price(t.switch_port, "switch_port", t.name),
      transceiver_price(t.transceiver, "transceiver", t.name);
  for (const Arc& a : net.arcs()) {
    // An arc is one direction of a duplex link: it accounts for the port at its source end
    // (the reverse arc accounts for the other end) and half the fibre.
    const double ports = arc_ports(net, a);
    // Priced at the line rate (arcs carry the achievable rate).
    const double bits = a.bandwidth_Bps / net.link_efficiency() * 8 / ports;
    if (!net.is_switch(a.src)) {
      nic.add(ports, nic_price.at(bits));
      if (!net.is_switch(a.dst)) {
        if (patch_panel) patch.add(ports, t.patch_panel_port);
        if (ocs) ocs_port.add(ports, t.ocs_port);
      }
    } else {
      switch_port.add(ports, switch_price.at(bits));
    }
    transceiver.add(ports, transceiver_price.at(bits));
    fibre.add(ports / 2, t.fibre);
  }
  for (const PartSum* p : {&nic, &patch, &ocs_port, &switch_port, &transceiver, &fibre})
    if (p->used) {
      c.count[p->name] += p->count;
      c.by_component[p->name] += p->usd;
    }
  finish(c);
  return c;
}

// ---- Parts model (tables with [switch_chassis], [multimode], [singlemode], optional [copper]).

// The entry of `by_speed` at `bits` (to rounding: arcs carry line rate x efficiency), or end().
std::map<double, double>::const_iterator at_speed(const std::map<double, double>& by_speed, double bits) {
  const auto it = by_speed.lower_bound(bits * (1 - 1e-9));
  return it != by_speed.end() && it->first <= bits * (1 + 1e-9) ? it : by_speed.end();
}

// The reach class of an arc's link, from its tier (docs/topology.md, cost). One place for every
// family: server to its first switch (fat-tree leaf, rail switch, dragonfly router, the switch
// family) and dragonfly links inside a group are copper where the table has a DAC at the speed,
// else multimode; leaf to spine or aggregation multimode; links above (aggregation to core),
// dragonfly global links and direct server-to-server links (topoopt, torus, expander, through
// their patch panel or OCS) singlemode.
Reach link_reach(const Network& net, const std::vector<std::uint32_t>& level, const Arc& a, bool copper_ok) {
  const bool s1 = net.is_switch(a.src), s2 = net.is_switch(a.dst);
  const Reach in_rack = copper_ok ? Reach::Copper : Reach::Multimode;
  if (!s1 && !s2) return Reach::Singlemode;
  if (!s1 || !s2) return in_rack;
  const std::uint32_t lo = std::min(level[a.src], level[a.dst]), hi = std::max(level[a.src], level[a.dst]);
  if (const std::uint32_t g = net.info().dragonfly_routers; g > 0 && lo == 1 && hi == 1) {
    const std::uint32_t c = net.compute_count();
    return (a.src - c) / g == (a.dst - c) / g ? in_rack : Reach::Singlemode;
  }
  return hi <= 2 ? Reach::Multimode : Reach::Singlemode;
}

const PriceTable::Media& media_of(const PriceTable& t, Reach r) {
  return r == Reach::Copper ? t.copper : r == Reach::Multimode ? t.multimode : t.singlemode;
}

// Price of one cable or transceiver of `r` at `bits`: listed speeds as price_at_speed; an empty
// list costs nothing (copper has no transceivers, an AOC no separate ones).
double media_price(const PriceTable& t, Reach r, bool cable, double bits) {
  const auto& m = media_of(t, r);
  const auto& list = cable ? m.cable : m.transceiver;
  if (list.empty()) return 0;
  return price_at_speed(list, bits, std::string(reach_name(r)) + (cable ? " cable" : " transceiver"), t.name);
}

// The chassis that houses a switch of `ports` ports at `bits`: the smallest listed radix >= ports
// at that speed. InvalidDesign (a sweep counts the point infeasible) when none is listed.
std::pair<std::uint32_t, double> pick_chassis(const PriceTable& t, std::uint32_t ports, double bits) {
  for (auto it = t.switch_chassis.lower_bound({bits * (1 - 1e-9), 0});
       it != t.switch_chassis.end() && it->first.first <= bits * (1 + 1e-9); ++it)
    if (it->first.second >= ports) return {it->first.second, it->second};
  throw InvalidDesign("no switch chassis of " + std::to_string(ports) + " or more ports at " +
                          std::to_string(bits / 1e9) + " Gb/s in the price table's [switch_chassis]",
                      t.name);
}

CostBreakdown parts_cost(const Network& net, const PriceTable& t) {
  CostBreakdown c;
  c.model = "parts";
  const std::string& optical = net.info().optical;
  const bool patch_panel = optical == "patch_panel", ocs = optical == "ocs";
  const std::vector<std::uint32_t> level = switch_levels(net);
  // (reach, speed) -> cables, transceivers; (speed, radix) -> switches.
  std::map<std::pair<Reach, double>, std::pair<double, double>> media;
  std::map<std::pair<double, std::uint32_t>, std::pair<double, double>> chassis;  // count, unit
  PartSum nic{"nic_port"}, patch{"patch_panel_port"}, ocs_port{"ocs_port"};
  SpeedPrice nic_price(t.nic_port, "nic_port", t.name);
  std::vector<std::uint32_t> switch_ports(net.switch_count(), 0);
  std::vector<double> switch_bits(net.switch_count(), 0);
  for (const Arc& a : net.arcs()) {
    // As component_cost: an arc accounts for the port (NIC or switch) and transceiver at its
    // source end and half the cable.
    const double ports = arc_ports(net, a);
    const double bits = a.bandwidth_Bps / net.link_efficiency() * 8 / ports;
    if (!net.is_switch(a.src)) {
      nic.add(ports, nic_price.at(bits));
      if (!net.is_switch(a.dst)) {
        if (patch_panel) patch.add(ports, t.patch_panel_port);
        if (ocs) ocs_port.add(ports, t.ocs_port);
      }
    } else {
      const std::uint32_t s = a.src - net.compute_count();
      switch_ports[s] += static_cast<std::uint32_t>(ports);
      switch_bits[s] = std::max(switch_bits[s], bits);
    }
    const bool copper_ok = at_speed(t.copper.cable, bits) != t.copper.cable.end();
    const Reach r = link_reach(net, level, a, copper_ok);
    auto& [cables, transceivers] = media[{r, bits}];
    cables += ports / 2;
    if (r != Reach::Copper) transceivers += ports;
  }
  for (std::uint32_t s = 0; s < net.switch_count(); ++s) {
    if (switch_ports[s] == 0) continue;  // a switch with no links is not bought
    const auto [radix, price] = pick_chassis(t, switch_ports[s], switch_bits[s]);
    auto& line = chassis[{switch_bits[s], radix}];
    line.first += 1;
    line.second = price;
  }
  for (const auto& [key, line] : chassis) {
    c.chassis.push_back({key.second, key.first, line.first, line.second});
    add(c, "switch_chassis", line.first, line.second);
  }
  for (const auto& [key, n] : media) {
    const auto [r, bits] = key;
    MediaLine m{r, bits, n.first, n.second, media_price(t, r, true, bits), media_price(t, r, false, bits)};
    c.media.push_back(m);
    add(c, std::string(reach_name(r)) + "_cable", m.cables, m.cable_usd);
    if (r != Reach::Copper)
      add(c, std::string(reach_name(r)) + "_transceiver", m.transceivers, m.transceiver_usd);
  }
  for (const PartSum* p : {&nic, &patch, &ocs_port})
    if (p->used) {
      c.count[p->name] += p->count;
      c.by_component[p->name] += p->usd;
    }
  finish(c);
  return c;
}

}  // namespace

const char* reach_name(Reach r) {
  return r == Reach::Copper ? "copper" : r == Reach::Multimode ? "multimode" : "singlemode";
}

double libra_dimension_cost(std::uint64_t npus, const Dimension& dim, const std::string& level,
                            const PriceTable& table) {
  CostBreakdown c;
  add_dimension(c, npus, dim, level, table);
  finish(c);
  return c.total_usd;
}

CostBreakdown network_cost(const Network& net, const PriceTable& table) {
  if (net.info().kind == "multidim") return per_dimension_cost(net, table);
  if (table.has_parts()) return parts_cost(net, table);
  return component_cost(net, table);
}

CostBreakdown direct_connect_cost(std::uint32_t servers, std::uint32_t degree, double link_bandwidth_Bps,
                                  const std::string& optical, const PriceTable& t) {
  CostBreakdown c;
  c.model = "components";
  const double ports = double(servers) * degree, bits = link_bandwidth_Bps * 8;
  if (t.has_parts()) {
    // Every link a singlemode link through the panel (link_reach): the same sums as parts_cost.
    c.model = "parts";
    const MediaLine m{Reach::Singlemode,
                      bits,
                      ports / 2,
                      ports,
                      media_price(t, Reach::Singlemode, true, bits),
                      media_price(t, Reach::Singlemode, false, bits)};
    c.media.push_back(m);
    add(c, "nic_port", ports, price_at_speed(t.nic_port, bits, "nic_port", t.name));
    add(c, "singlemode_cable", m.cables, m.cable_usd);
    add(c, "singlemode_transceiver", m.transceivers, m.transceiver_usd);
    if (optical == "patch_panel") add(c, "patch_panel_port", ports, t.patch_panel_port);
    if (optical == "ocs") add(c, "ocs_port", ports, t.ocs_port);
    finish(c);
    return c;
  }
  add(c, "nic_port", ports, price_at_speed(t.nic_port, bits, "nic_port", t.name));
  add(c, "transceiver", ports, price_at_speed(t.transceiver, bits, "transceiver", t.name));
  if (optical == "patch_panel") add(c, "patch_panel_port", ports, t.patch_panel_port);
  if (optical == "ocs") add(c, "ocs_port", ports, t.ocs_port);
  add(c, "fibre", ports / 2, t.fibre);
  finish(c);
  return c;
}

SimilarCost similar_cost_fattree(double target_usd, FatTreeSpec shape, const PriceTable& table) {
  if (table.has_parts())
    throw BadInput(
        "the similar-cost fat-tree needs a price table without parts sections ([switch_chassis] "
        "prices listed speeds only)",
        table.name);
  auto cost_at = [&](double bw) {
    shape.link_bandwidth_Bps = bw;
    return network_cost(build_fattree(shape), table).total_usd;
  };
  double lo = 1e6 / 8, hi = 1e6 / 8;  // 1 Mb/s
  if (cost_at(lo) > target_usd)
    throw BadInput("even a 1 Mb/s fat-tree of this shape costs more than US$" + std::to_string(target_usd),
                   "similar cost");
  while (cost_at(hi) < target_usd) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (cost_at(mid) < target_usd ? lo : hi) = mid;
  }
  return {hi, cost_at(hi)};
}

}  // namespace toposweep::topology
