// `toposweep models`: list the built-in workload models, or describe one.
#include "toposweep/cli/command.hpp"

namespace toposweep::cli {
namespace {

void add_options(po::options_description&) {}

int run(CommandContext&) { return not_built("models"); }

}  // namespace

Command models_command() {
  return Command{"models", "list the built-in workload models, or describe one", "", add_options, run};
}

}  // namespace toposweep::cli
