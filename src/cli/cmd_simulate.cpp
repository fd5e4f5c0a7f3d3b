// `toposweep simulate`: simulate one training iteration of one design point.
#include "toposweep/cli/command.hpp"

namespace toposweep::cli {
namespace {

void add_options(po::options_description&) {}

int run(CommandContext&) { return not_built("simulate"); }

}  // namespace

Command simulate_command() {
  return Command{"simulate", "simulate one training iteration of one design point", "", add_options, run};
}

}  // namespace toposweep::cli
