// `toposweep topology`: build one topology and report it (ports, links, diameter, mean hops,
// bisection, cost); --edges adds the arc list to --json, --out writes the edge-list file.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

#include "toposweep/cli/command.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/topology/cost.hpp"
#include "toposweep/topology/edge_list.hpp"
#include "toposweep/topology/report.hpp"
#include "toposweep/topology/spec.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/units.hpp"
#include "toposweep/workload/spec.hpp"

namespace toposweep::cli {
namespace {

void add_options(po::options_description& o) {
  o.add_options()("edges", po::bool_switch(),
                  "with --json: add the arc list [src, dst, bandwidth_Bps, latency_s]")(
      "out", po::value<std::string>(),
      "write the topology as an edge-list file (readable by topology.kind = file)")(
      "similar-cost", po::bool_switch(),
      "also report the fat-tree link bandwidth whose cost equals this network's (TopoOpt's comparison; "
      "fat-tree shape from topology.fattree_*, topology.oversubscription, degree 1)");
}

// Write to a temporary file next to `path`, then rename, so a failure never leaves a torn file.
void write_edge_list_file(const std::string& path, const Network& net) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw RuntimeFailure("cannot write '" + tmp + "'");
    topology::write_edge_list(out, net);
    out.flush();
    if (!out) throw RuntimeFailure("write failed on '" + tmp + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw RuntimeFailure("cannot rename '" + tmp + "' to '" + path + "'");
  }
}

int run(CommandContext& ctx) {
  if (!ctx.positional.empty())
    throw BadInput("unexpected argument '" + ctx.positional[0] + "'", "command line of 'topology'");
  const Config& c = ctx.config;
  // The server's fabric defaults to server.device's measured link class.
  const LinkClass intra = intra_link_from_config(c);
  const Network net = build_network(topology::topology_spec_from_config(c, &intra));
  const topology::PriceTable table = topology::price_table_from_config(c);
  const topology::TopologyReport report = topology::describe_topology(net, table);
  const bool edges = ctx.options["edges"].as<bool>();
  const bool similar = ctx.options["similar-cost"].as<bool>();
  std::optional<topology::SimilarCost> similar_cost;
  if (similar) {
    topology::FatTreeSpec shape;
    shape.servers = net.compute_count();
    shape.degree = 1;
    shape.tiers = static_cast<std::uint32_t>(c.get_int("topology.fattree_tiers", 2, 3));
    shape.radix = static_cast<std::uint32_t>(c.get_int("topology.fattree_radix", 0, 4096));
    shape.oversubscription = c.get_double("topology.oversubscription");
    shape.link_latency_s = c.get_time("topology.link_latency");
    similar_cost = topology::similar_cost_fattree(report.cost.total_usd, shape, table);
  }
  if (ctx.options.count("out")) write_edge_list_file(ctx.options["out"].as<std::string>(), net);

  std::ostream& out = *ctx.out;
  if (ctx.json) {
    nlohmann::json j = topology::report_json(net, report, edges);
    if (similar_cost) {
      j["similar_cost_fattree_link_bandwidth_Bps"] = similar_cost->link_bandwidth_Bps;
      j["similar_cost_fattree_cost_usd"] = similar_cost->cost_usd;
    }
    out << (edges ? j.dump() : j.dump(2)) << "\n";  // an edge list is long: keep it compact
  } else {
    out << topology::report_text(net, report);
    if (similar_cost)
      out << "similar-cost fat-tree: "
          << human_quantity(Quantity::Bandwidth, similar_cost->link_bandwidth_Bps) << " per server port\n";
    if (ctx.options.count("out")) out << "wrote " << ctx.options["out"].as<std::string>() << "\n";
  }
  return kExitOk;
}

}  // namespace

Command topology_command() {
  return Command{"topology",
                 "build one topology and report it (ports, links, diameter, mean hops, bisection, cost)", "",
                 add_options, run};
}

}  // namespace toposweep::cli
