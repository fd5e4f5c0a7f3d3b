#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "toposweep/cli/command.hpp"
#include "toposweep/opt/design_point.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/version.hpp"

namespace toposweep::cli {
namespace {

void print_usage(std::ostream& os) {
  os << "usage: toposweep <command> [options]\n\n"
        "Co-design the training network and the parallelization strategy of DNN workloads.\n\n"
        "commands:\n";
  for (const auto& c : all_commands()) {
    os << "  " << c.name << std::string(12 - std::min<std::size_t>(11, c.name.size()), ' ') << c.summary
       << "\n";
  }
  os << "\nEvery command takes --help, --config FILE (repeatable, later files win), --set KEY=VALUE\n"
        "(repeatable, wins over files), --json, --log-level LEVEL and --show-config.\n"
        "toposweep --version prints the version and git revision.\n"
        "toposweep --list-keys prints every configuration key with its default.\n";
}

po::options_description common_options() {
  po::options_description common("common options");
  common.add_options()("help,h", "show this help")("config",
                                                   po::value<std::vector<std::string>>()->composing(),
                                                   "INI config file (repeatable; later files win)")(
      "set", po::value<std::vector<std::string>>()->composing(), "KEY=VALUE (repeatable; wins over files)")(
      "json", po::bool_switch(), "print one JSON object on stdout")(
      "log-level", po::value<std::string>()->default_value("info"), "debug, info, warn, error or quiet")(
      "show-config", po::bool_switch(), "print the effective configuration and exit");
  return common;
}

void list_keys(std::ostream& os) {
  const KeyRegistry registry = all_config_keys();
  for (const auto& k : registry.specs()) {
    os << k.name;
    if (!k.default_value.empty()) os << " = " << k.default_value;
    os << "\n    " << k.help << "\n";
  }
}

// The rank of this process when an MPI launcher (mpirun, srun) started it, else 0; read from the
// launchers' environment because errors can come before MPI is initialised.
int launched_rank() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char* v = std::getenv(var)) return std::atoi(v);
  return 0;
}

// Keys set in a file or with --set that the command never read, in the sections it did read
// (a config file shared by several commands keeps, say, model.* keys `topology` has no use for).
void warn_unused_keys(const std::string& command, const CommandContext& ctx,
                      const std::set<std::string>& reads) {
  std::set<std::string> sections;
  for (const auto& k : reads) sections.insert(k.substr(0, k.find('.')));
  for (const auto& [key, e] : ctx.config.entries()) {
    if (e.origin == "default" || reads.count(key) || key.starts_with("space.") || key.starts_with("sweep."))
      continue;
    if (!sections.count(key.substr(0, key.find('.')))) continue;
    ctx.log.warn("key " + key + " (set at " + e.origin + ") is not used by this '" + command + "'");
  }
}

int run_command(const Command& cmd, int argc, char** argv) {
  po::options_description specific(cmd.name + " options");
  if (cmd.add_options) cmd.add_options(specific);
  po::options_description all;
  all.add(specific).add(common_options());
  po::options_description hidden;
  hidden.add_options()("args", po::value<std::vector<std::string>>(), "positional arguments");
  po::options_description parse_set;
  parse_set.add(all).add(hidden);
  po::positional_options_description pos;
  pos.add("args", -1);

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(parse_set).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw BadInput(e.what(), "command line of '" + cmd.name + "'");
  }
  if (vm.count("help")) {
    std::cout << "usage: toposweep " << cmd.name << " [options]"
              << (cmd.positional_usage.empty() ? "" : " " + cmd.positional_usage) << "\n\n"
              << cmd.summary << "\n\n"
              << all << "\nConfiguration keys: toposweep --list-keys\n";
    return kExitOk;
  }

  CommandContext ctx;
  ctx.log = Logger(parse_log_level(vm["log-level"].as<std::string>()));
  if (ctx.log.enabled(LogLevel::Info))
    opt::set_strategy_search_progress(
        [log = ctx.log](std::uint64_t done, std::uint64_t left, double seconds) {
          char line[200];
          std::snprintf(line, sizeof line,
                        "strategy search: %llu simulated, at most %llu left, %.0f s (ETA at most %.0f s)",
                        static_cast<unsigned long long>(done), static_cast<unsigned long long>(left), seconds,
                        seconds / static_cast<double>(done) * static_cast<double>(left));
          log.info(line);
        });
  ctx.json = vm["json"].as<bool>();
  ctx.out = &std::cout;
  if (vm.count("args")) ctx.positional = vm["args"].as<std::vector<std::string>>();
  if (vm.count("config"))
    for (const auto& f : vm["config"].as<std::vector<std::string>>()) load_ini_file(ctx.config, f);
  if (vm.count("set"))
    for (const auto& s : vm["set"].as<std::vector<std::string>>()) apply_set(ctx.config, s);
  validate_and_default(ctx.config, all_config_keys());
  if (vm["show-config"].as<bool>()) {
    std::cout << ctx.config.to_ini(true);
    return kExitOk;
  }
  ctx.options = std::move(vm);
  auto reads = std::make_shared<std::set<std::string>>();
  if (cmd.warn_unused_keys) ctx.config.record_reads(reads);
  const int status = cmd.run(ctx);
  if (status == kExitOk && cmd.warn_unused_keys) {
    ctx.config.record_reads(nullptr);
    warn_unused_keys(cmd.name, ctx, *reads);
  }
  return status;
}

}  // namespace

int run_main(int argc, char** argv) {
  try {
    if (argc < 2) {
      print_usage(std::cerr);
      throw BadInput("no command given", "command line");
    }
    const std::string first = argv[1];
    if (first == "--help" || first == "-h" || first == "help") {
      print_usage(std::cout);
      return kExitOk;
    }
    if (first == "--version") {
      std::cout << "toposweep " << version_string() << " (git " << git_revision() << ")\n";
      return kExitOk;
    }
    if (first == "--list-keys") {
      list_keys(std::cout);
      return kExitOk;
    }
    for (const auto& cmd : all_commands())
      if (cmd.name == first) return run_command(cmd, argc - 1, argv + 1);
    throw BadInput("unknown command '" + first + "' (toposweep --help lists them)", "command line");
  } catch (const BadInput& e) {
    std::cout.flush();
    // Bad input is the same on every rank of an MPI launch: one line, from rank 0.
    if (launched_rank() == 0) std::cerr << "toposweep: error: " << e.what() << " (" << e.where() << ")\n";
    return kExitBadInput;
  } catch (const Interrupted& e) {
    std::cout.flush();
    std::cerr << "toposweep: interrupted: " << e.what() << "\n";
    return kExitInterrupted;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "toposweep: failure: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace toposweep::cli
