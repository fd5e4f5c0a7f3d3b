// `toposweep models`: list the built-in workload models (and devices), or describe one model —
// a built-in name or a model JSON file. With --gpus N also count the global strategies of the
// model on N GPUs of server.device and how many fit in memory.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "toposweep/cli/command.hpp"
#include "toposweep/opt/settings.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/runs.hpp"
#include "toposweep/util/units.hpp"
#include "toposweep/workload/device.hpp"
#include "toposweep/workload/enumerate.hpp"
#include "toposweep/workload/model_library.hpp"
#include "toposweep/workload/workload.hpp"

namespace toposweep::cli {
namespace {

using nlohmann::json;

void add_options(po::options_description& o) {
  o.add_options()("layers", po::bool_switch(), "describe: print the per-layer table")(
      "gpus", po::value<std::uint32_t>(),
      "describe: count the valid global strategies on this many GPUs (device server.device, batch model.*) "
      "and how many fit in memory");
}

std::string human(double x) {
  char buf[32];
  if (x >= 1e15)
    std::snprintf(buf, sizeof buf, "%.3gP", x / 1e15);
  else if (x >= 1e12)
    std::snprintf(buf, sizeof buf, "%.3gT", x / 1e12);
  else if (x >= 1e9)
    std::snprintf(buf, sizeof buf, "%.3gB", x / 1e9);
  else if (x >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3gM", x / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

int list(CommandContext& ctx) {
  json models = json::array();
  for (const auto& name : builtin_model_names()) {
    const Model m = builtin_model(name);
    models.push_back({{"name", m.name},
                      {"family", model_family_name(m.family)},
                      {"parameters", m.parameters()},
                      {"layers", m.layers.size()},
                      {"forward_flops_per_sample", m.forward_flops_per_sample()},
                      {"sample_unit", m.sample_unit},
                      {"batch_per_gpu", m.default_batch_per_gpu},
                      {"description", m.description}});
  }
  json devices = json::array();
  for (const auto& name : builtin_device_names()) devices.push_back(device_to_json(builtin_device(name)));
  if (ctx.json) {
    *ctx.out << json{{"models", models}, {"devices", devices}}.dump(2) << "\n";
    return kExitOk;
  }
  std::printf("%-14s %-15s %10s %7s %14s  %s\n", "model", "family", "params", "layers", "fwd FLOP/sample",
              "description");
  for (const auto& m : models)
    std::printf("%-14s %-15s %10s %7zu %14s  %s\n", m["name"].get<std::string>().c_str(),
                m["family"].get<std::string>().c_str(), human(m["parameters"].get<double>()).c_str(),
                m["layers"].get<std::size_t>(), human(m["forward_flops_per_sample"].get<double>()).c_str(),
                m["description"].get<std::string>().c_str());
  std::printf("\n%-8s %12s %10s %12s\n", "device", "fp16 FLOP/s", "HBM", "HBM B/s");
  for (const auto& d : devices)
    std::printf("%-8s %12s %10s %12s\n", d["name"].get<std::string>().c_str(),
                human(d["peak_flops"]["fp16"].get<double>()).c_str(),
                human_quantity(Quantity::Size, d["hbm_capacity_bytes"].get<double>()).c_str(),
                human_quantity(Quantity::Bandwidth, d["hbm_bandwidth_Bps"].get<double>()).c_str());
  std::fflush(stdout);
  return kExitOk;
}

int describe(CommandContext& ctx, const std::string& name) {
  const Model m = resolve_model(name, "command line of 'models'");
  json j = model_to_json(m);
  if (ctx.options.count("gpus")) {
    const std::uint32_t gpus = ctx.options["gpus"].as<std::uint32_t>();
    if (gpus == 0) throw BadInput("--gpus must be at least 1", "command line of 'models'");
    Config c = ctx.config;
    c.set("model.name", name, "command line");
    const Workload w = workload_from_config(c, gpus);
    // The strategy search's own space: the optimize.* knob lists, tp within a server of
    // server.gpus GPUs unless optimize.tp_across_servers.
    StrategySpace space = opt::optimize_settings_from_config(c, opt::OptimizeTarget::Strategy).space;
    if (has_run_counts(c.get_string("server.gpus")))
      throw BadInput(
          "models --gpus counts GPUs of one server size; per-server lists are for simulate, optimize "
          "and sweep",
          c.where("server.gpus"));
    space.gpus_per_server = static_cast<std::uint32_t>(c.get_int("server.gpus", 1, 1 << 20));
    const StrategyCount count = for_each_strategy(w, gpus, space, {});
    j["strategies"] = {{"gpus", gpus},
                       {"device", w.device.name},
                       {"global_batch", w.global_batch},
                       {"checked", count.checked},
                       {"feasible", count.feasible},
                       {"infeasible", count.infeasible}};
  }
  if (ctx.json) {
    *ctx.out << j.dump(2) << "\n";
    return kExitOk;
  }
  std::printf("%s: %s\n", m.name.c_str(), m.description.c_str());
  std::printf("family %s, sample = one %s, default batch %u per GPU\n", model_family_name(m.family),
              m.sample_unit.c_str(), m.default_batch_per_gpu);
  std::printf("parameters %.6g (dense %.6g, tables %.6g)\n", m.parameters(), m.dense_parameters(),
              m.table_parameters());
  std::printf("forward FLOPs per %s %.6g, backward %.6g\n", m.sample_unit.c_str(),
              m.forward_flops_per_sample(), m.backward_flops_per_sample());
  std::printf("layers %zu (pipeline can split %u)\n", m.layers.size(), m.pipeline_units());
  if (m.has_tables())
    std::printf("embedding tables %zu (e.g. %s: %.6g rows x %g, %g lookups/sample, %s)\n", m.tables.size(),
                m.tables[0].name.c_str(), m.tables[0].rows, m.tables[0].dim, m.tables[0].lookups_per_sample,
                m.tables[0].pooled ? "pooled" : "concatenated");
  if (j.contains("strategies")) {
    const auto& s = j["strategies"];
    std::printf("strategies on %u %s GPUs (global batch %g): %llu valid, %llu fit in memory, %llu do not\n",
                s["gpus"].get<std::uint32_t>(), s["device"].get<std::string>().c_str(),
                s["global_batch"].get<double>(),
                static_cast<unsigned long long>(s["checked"].get<std::uint64_t>()),
                static_cast<unsigned long long>(s["feasible"].get<std::uint64_t>()),
                static_cast<unsigned long long>(s["infeasible"].get<std::uint64_t>()));
  }
  if (ctx.options["layers"].as<bool>()) {
    std::printf("\n%-22s %-18s %12s %12s %12s %12s\n", "layer", "kind", "params", "fwd FLOPs", "in elems",
                "out elems");
    for (const auto& l : m.layers)
      std::printf("%-22s %-18s %12.6g %12.6g %12.6g %12.6g\n", l.name.c_str(), layer_kind_name(l.kind),
                  l.parameters(), l.forward_flops, l.input_elements, l.output_elements);
  }
  std::fflush(stdout);
  return kExitOk;
}

int run(CommandContext& ctx) {
  if (ctx.positional.size() > 1)
    throw BadInput("expected at most one model name, got '" + ctx.positional[1] + "'",
                   "command line of 'models'");
  return ctx.positional.empty() ? list(ctx) : describe(ctx, ctx.positional[0]);
}

}  // namespace

Command models_command() {
  return Command{"models", "list the built-in workload models, or describe one", "[NAME|MODEL.json]",
                 add_options, run};
}

}  // namespace toposweep::cli
