// `toposweep export chakra --out DIR`: one design point's iteration written as Chakra execution
// traces (one per GPU rank), what ASTRA-sim reads; model.chakra = DIR plays them back.
#include <iostream>
#include <nlohmann/json.hpp>

#include "toposweep/cli/command.hpp"
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

int run(CommandContext& ctx) {
  if (ctx.positional.size() > 1)
    throw BadInput("unexpected argument '" + ctx.positional[1] + "' (keys go with --set KEY=VALUE)",
                   "command line of 'export'");
  if (ctx.positional.size() != 1 || ctx.positional[0] != "chakra")
    throw BadInput(ctx.positional.empty() ? "which format? `toposweep export chakra --out DIR`"
                                          : "unknown export format '" + ctx.positional[0] + "' (chakra)",
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
  return Command{"export", "write one design point's iteration as Chakra execution traces (ASTRA-sim)",
                 "chakra", add_options, run};
}

}  // namespace toposweep::cli
