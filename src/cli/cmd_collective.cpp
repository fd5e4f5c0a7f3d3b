// `toposweep collective`: time one collective on one topology with one algorithm.
#include "toposweep/cli/command.hpp"

namespace toposweep::cli {
namespace {

void add_options(po::options_description&) {}

int run(CommandContext&) { return not_built("collective"); }

}  // namespace

Command collective_command() {
  return Command{"collective", "time one collective on one topology with one algorithm", "", add_options, run};
}

}  // namespace toposweep::cli
