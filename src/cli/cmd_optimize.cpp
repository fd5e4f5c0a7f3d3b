// `toposweep optimize`: optimize one design point (alternating topology/strategy, bandwidth allocation).
#include "toposweep/cli/command.hpp"

namespace toposweep::cli {
namespace {

void add_options(po::options_description&) {}

int run(CommandContext&) { return not_built("optimize"); }

}  // namespace

Command optimize_command() {
  return Command{"optimize", "optimize one design point (alternating topology/strategy, bandwidth allocation)", "", add_options, run};
}

}  // namespace toposweep::cli
