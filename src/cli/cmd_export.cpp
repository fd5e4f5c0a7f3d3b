// `toposweep export chakra --out DIR`: one design point's iteration written as Chakra execution
// traces (one per GPU rank), what ASTRA-sim reads; model.chakra = DIR plays them back.
// `toposweep export astra-sim --out DIR`: the same traces with ASTRA-sim's network, system and
// memory inputs for the design point (docs/interop.md, "ASTRA-sim").
#include <iostream>
#include <nlohmann/json.hpp>

#include "toposweep/cli/command.hpp"
#include "toposweep/collective/options.hpp"
#include "toposweep/interop/astra_sim.hpp"
#include "toposweep/interop/chakra.hpp"
#include "toposweep/point/evaluate.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::cli {
namespace {

void add_options(po::options_description& o) {
  o.add_options()("out", po::value<std::string>(), "directory the traces go to (created when missing)")(
      "prefix", po::value<std::string>()->default_value("toposweep"),
      "file names <prefix>.<rank>.et and <prefix>.comm_groups.json");
}

interop::AstraSimInput astra_sim_input(const Config& config, const Network& net) {
  interop::AstraSimInput in;
  in.topology = net.info();
  in.gpus_per_server = net.gpus_per_node();
  in.servers = net.compute_count();
  in.algorithm = collective_algorithm_from_config(config);
  const CollectiveOptions o = collective_options_from_config(config);
  in.chunks = o.chunks;
  in.endpoint_delay_s = o.endpoint_delay_s;
  in.reduction_Bps = o.reduction_Bps;
  return in;
}

int write_astra_sim(CommandContext& ctx, const Evaluation& e, const std::string& dir,
                    const std::string& prefix) {
  const interop::AstraSimExport out =
      interop::write_astra_sim(e.plan, astra_sim_input(ctx.config, *e.network), dir, prefix);
  const double t = e.row.iteration_time_s;
  if (ctx.json) {
    nlohmann::json dims = nlohmann::json::array();
    for (const auto& d : out.dims)
      dims.push_back({{"topology", d.topology},
                      {"npus_count", d.npus},
                      {"bandwidth_GBps", d.bandwidth_GBps},
                      {"latency_ns", d.latency_ns},
                      {"implementation", d.implementation}});
    *ctx.out << nlohmann::json{{"format", "astra-sim"},
                               {"ranks", out.chakra.ranks},
                               {"nodes", out.chakra.nodes},
                               {"network", out.network.string()},
                               {"system", out.system.string()},
                               {"remote_memory", out.remote_memory.string()},
                               {"workload", out.workload.string()},
                               {"comm_groups", out.chakra.comm_groups.string()},
                               {"readme", out.readme.string()},
                               {"dims", std::move(dims)},
                               {"command", out.command},
                               {"iteration_time_s", t}}
                    .dump(2)
             << "\n";
  } else {
    *ctx.out << "toposweep export astra-sim: " << out.chakra.ranks << " ranks, " << out.chakra.nodes
             << " nodes, " << out.dims.size() << "-D network -> " << dir << " (simulated iteration "
             << t * 1e3 << " ms)\nrun: " << out.command << "\n";
  }
  return kExitOk;
}

int run(CommandContext& ctx) {
  if (ctx.positional.size() > 1)
    throw BadInput("unexpected argument '" + ctx.positional[1] + "' (keys go with --set KEY=VALUE)",
                   "command line of 'export'");
  if (ctx.positional.size() != 1 || (ctx.positional[0] != "chakra" && ctx.positional[0] != "astra-sim"))
    throw BadInput(ctx.positional.empty()
                       ? "which format? `toposweep export chakra|astra-sim --out DIR`"
                       : "unknown export format '" + ctx.positional[0] + "' (chakra, astra-sim)",
                   "command line of 'export'");
  if (!ctx.options.count("out") || ctx.options["out"].as<std::string>().empty())
    throw BadInput("--out DIR is required", "command line of 'export'");
  const std::string dir = ctx.options["out"].as<std::string>();
  const std::string prefix = ctx.options["prefix"].as<std::string>();
  if (prefix.empty() || prefix.find('/') != std::string::npos)
    throw BadInput("a prefix is a file name without '/'", "export --prefix");

  PointCache cache;
  const Evaluation e = evaluate_config(ctx.config, cache, Detail::Full);
  if (!e.optimized && !e.jobs.empty())
    throw BadInput("export writes one job; simulate.jobs has several", "key simulate.jobs");
  if (e.optimized)
    throw BadInput("export writes a design as given; point.optimize picks one", "key point.optimize");
  if (!e.simulated)
    throw BadInput("nothing to export: the strategy does not fit in memory (" + e.row.message + ")",
                   "export");
  if (ctx.positional[0] == "astra-sim") return write_astra_sim(ctx, e, dir, prefix);
  const interop::ChakraExport out = interop::write_chakra(e.plan, dir, prefix);
  const double t = e.row.iteration_time_s;
  if (ctx.json) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& f : out.files) files.push_back(f.string());
    *ctx.out << nlohmann::json{{"format", "chakra"},        {"ranks", out.ranks},
                               {"nodes", out.nodes},        {"tasks", e.plan.graph.tasks.size()},
                               {"files", std::move(files)}, {"comm_groups", out.comm_groups.string()},
                               {"iteration_time_s", t}}
                    .dump(2)
             << "\n";
  } else {
    *ctx.out << "toposweep export chakra: " << e.plan.graph.tasks.size() << " tasks as " << out.nodes
             << " nodes over " << out.ranks << " ranks -> " << dir << "/" << prefix << ".{0.."
             << out.ranks - 1 << "}.et, " << out.comm_groups.filename().string() << " (simulated iteration "
             << t * 1e3 << " ms)\n";
  }
  return kExitOk;
}

}  // namespace

Command export_command() {
  return Command{"export",
                 "write one design point's iteration as Chakra execution traces, or as ASTRA-sim's inputs",
                 "chakra|astra-sim", add_options, run};
}

}  // namespace toposweep::cli
