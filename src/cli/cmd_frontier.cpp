// `toposweep frontier`: Pareto frontier of a results file.
#include "toposweep/cli/command.hpp"

namespace toposweep::cli {
namespace {

void add_options(po::options_description&) {}

int run(CommandContext&) { return not_built("frontier"); }

}  // namespace

Command frontier_command() {
  return Command{"frontier", "Pareto frontier of a results file", "", add_options, run};
}

}  // namespace toposweep::cli
