// `toposweep topology`: build one topology and report it (ports, links, diameter, mean hops, bisection, cost).
#include "toposweep/cli/command.hpp"

namespace toposweep::cli {
namespace {

void add_options(po::options_description&) {}

int run(CommandContext&) { return not_built("topology"); }

}  // namespace

Command topology_command() {
  return Command{"topology", "build one topology and report it (ports, links, diameter, mean hops, bisection, cost)", "", add_options, run};
}

}  // namespace toposweep::cli
