// `toposweep sweep`: explore a design space; run under mpirun or srun; writes HDF5.
#include "toposweep/cli/command.hpp"

namespace toposweep::cli {
namespace {

void add_options(po::options_description&) {}

int run(CommandContext&) { return not_built("sweep"); }

}  // namespace

Command sweep_command() {
  return Command{"sweep", "explore a design space; run under mpirun or srun; writes HDF5", "", add_options, run};
}

}  // namespace toposweep::cli
