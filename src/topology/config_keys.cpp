#include "toposweep/topology/config_keys.hpp"

#include <fstream>

#include "toposweep/topology/build.hpp"
#include "toposweep/topology/cost.hpp"
#include "toposweep/topology/families.hpp"
#include "toposweep/topology/spec.hpp"
#include "toposweep/util/config_checks.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/runs.hpp"
#include "toposweep/util/strings.hpp"

namespace toposweep::topology {
namespace {

// Torus sizes ("8,8,8") or multidim TYPE:SIZE items ("ring:4,fc:8"), as the kind reads them.
void check_dims(const std::string& value, const std::string& where) {
  const auto items = split_list(value);
  if (items.empty()) return;
  bool typed = false;
  for (const auto& item : items) typed = typed || item.find(':') != std::string::npos;
  if (typed) {
    parse_dims(items, where);
    return;
  }
  checks::integer_list(1, 1 << 26)(value, where);
}

void check_extra_links(const std::string& value, const std::string& where) {
  parse_extra_links(value, where);
}

void check_price_table(const std::string& value, const std::string& where) {
  if (trim(value).empty()) return;
  if (!std::ifstream(value)) throw BadInput("cannot read price table '" + value + "'", where);
  load_price_table(value);
}

}  // namespace

std::vector<KeySpec> config_keys() {
  return {
      {"topology.kind", "switch", "topology family: " + join(topology_family_names(), ", "),
       checks::one_of(topology_family_names())},
      {"topology.servers", "16",
       "number of servers (compute nodes); multidim/torus: checked against dims when set",
       checks::integer(1, 1 << 26)},
      {"topology.degree", "4", "ports per server (topoopt: 2 per bidirectional ring)",
       checks::integer(1, 1 << 26)},
      {"topology.link_bandwidth", "100Gbps", "bandwidth of one port / link, each direction",
       checks::quantity(Quantity::Bandwidth, true)},
      {"topology.link_latency", "1us", "latency of one link", checks::quantity(Quantity::Time, false)},
      {"topology.link_efficiency", "1",
       "fraction of topology.link_bandwidth collectives reach on every link (nccl-tests busbw / line rate; "
       "HDR "
       "InfiniBand 0.96); links are priced at the line rate",
       checks::number_in(1e-6, 1)},
      {"topology.strides", "", "topoopt: explicit ring strides, e.g. 1,5,11 (default: TotientPerms)",
       checks::optional(checks::integer_list(0, UINT32_MAX))},
      {"topology.ring_group", "0",
       "topoopt TotientPerms: data-parallel group size g dividing servers (0 = servers)",
       checks::integer(0, 1 << 26)},
      {"topology.rings", "0", "topoopt TotientPerms: bidirectional rings to pick (0 = degree/2)",
       checks::integer(0, 1 << 26)},
      {"topology.extra_links", "", "topoopt: extra bidirectional links on leftover ports, e.g. 0-5,3-9",
       check_extra_links},
      {"topology.rails", "0", "rail: NICs per server, NIC i on rail i (0 = server.gpus: one per GPU)",
       checks::integer(0, 1 << 16)},
      {"topology.planes", "1",
       "rail: independent rail fabrics; each NIC's bandwidth splits over one port per plane (Alibaba HPN: 2)",
       checks::integer(1, 1 << 10)},
      {"topology.spine", "full",
       "rail: full = spines join every rail of a plane (rail-optimized Clos); none = rail-only (Wang et al. "
       "2024): cross-rail traffic relays through the server",
       checks::one_of({"full", "none"})},
      {"topology.rail_radix", "0",
       "rail: switch ports k, even (0 = smallest that fits; rail-only: one switch per rail)",
       checks::integer(0, 4096)},
      {"topology.rail_tiers", "2",
       "rail: switch tiers, 2 (rail leaves + spines) or 3 (pods of rail leaves + aggregation switches, cores "
       "above: a SuperPOD of several scalable units, Meta's RTSW/CTSW/ATSW)",
       checks::integer(2, 3)},
      {"topology.groups", "0",
       "dragonfly: groups (0 = routers_per_group x global_links_per_router + 1, one link per pair of groups)",
       checks::integer(0, 1 << 20)},
      {"topology.routers_per_group", "4", "dragonfly: routers per group, all-to-all inside it",
       checks::integer(1, 1 << 12)},
      {"topology.terminals_per_router", "2", "dragonfly: servers per router (one port each)",
       checks::integer(1, 1 << 12)},
      {"topology.global_links_per_router", "2", "dragonfly: global ports per router",
       checks::integer(0, 1 << 12)},
      {"topology.routing", "minimal",
       "dragonfly only: minimal (shortest paths) or valiant (between groups, minimally to a random "
       "intermediate group, then minimally on; Kim et al. 2008)",
       checks::one_of({"minimal", "valiant"})},
      {"topology.oversubscription", "1", "fattree, rail: leaf down:up port ratio (1 = full bisection)",
       checks::number_in(1e-9, 1e9)},
      {"topology.fattree_tiers", "3", "fattree: 2 (leaf-spine) or 3 (k-ary fat-tree)", checks::integer(2, 3)},
      {"topology.fattree_radix", "0", "fattree: switch ports k, even (0 = smallest that fits)",
       checks::integer(0, 4096)},
      {"topology.dims", "", "multidim: type:size list, e.g. ring:4,fc:8,switch:32; torus: sizes, e.g. 8,8,8",
       check_dims},
      {"topology.dim_bandwidth", "",
       "multidim: per-NPU bandwidth of each dimension, e.g. 200GB/s,100GB/s (default: link_bandwidth)",
       checks::optional(checks::quantity_list(Quantity::Bandwidth, true))},
      {"topology.dim_latency", "",
       "multidim: latency of each dimension, e.g. 500ns,1us (default: link_latency)",
       checks::optional(checks::quantity_list(Quantity::Time, false))},
      {"topology.dim_levels", "",
       "multidim: cost level of each dimension, chiplet/package/node/pod (default: the top D levels)",
       checks::optional(checks::list_of({"chiplet", "package", "node", "pod"}))},
      {"topology.optical", "auto",
       "direct-connect reconfiguration device priced per port: patch_panel, ocs, none (auto: patch_panel for "
       "topoopt/expander)",
       checks::one_of({"auto", "patch_panel", "ocs", "none"})},
      {"topology.allow_disconnected", "false", "accept a disconnected topology instead of rejecting it",
       checks::boolean()},
      {"topology.file", "", "file: path of an edge-list topology", checks::optional(checks::readable_file())},
      {"topology.seed", "1", "expander: random seed", checks::integer(0)},
      {"server.gpus", "4", "GPUs per server; mixed servers: runs COUNT*SERVERS,... e.g. 8*4,4*4",
       checks::runs(checks::integer(1, 1 << 16))},
      {"server.intra_bandwidth", "",
       "GPU fabric inside a server: line rate per GPU and direction (default: server.device's; 300GB/s "
       "without a device); mixed servers: runs VALUE*COUNT,... e.g. 300GB/s*4,15.75GB/s*4",
       checks::optional(checks::runs(checks::quantity(Quantity::Bandwidth, true)))},
      {"server.intra_efficiency", "",
       "fraction of server.intra_bandwidth collectives reach, nccl-tests busbw / line rate (default: "
       "server.device's)",
       checks::optional(checks::number_in(1e-6, 1))},
      {"server.intra_latency", "", "latency of one collective inside a server (default: server.device's)",
       checks::optional(checks::quantity(Quantity::Time, false))},
      {"server.intra_step_latency", "", "latency of one ring step inside a server (default: server.device's)",
       checks::optional(checks::quantity(Quantity::Time, false))},
      {"costs.table", "",
       "price table file (INI, see inputs/costs/); default: the built-in LIBRA + component table",
       check_price_table},
  };
}

}  // namespace toposweep::topology
