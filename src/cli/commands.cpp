#include "toposweep/cli/command.hpp"
#include "toposweep/collective/config_keys.hpp"
#include "toposweep/frontier/config_keys.hpp"
#include "toposweep/interop/config_keys.hpp"
#include "toposweep/opt/config_keys.hpp"
#include "toposweep/point/config_keys.hpp"
#include "toposweep/sim/config_keys.hpp"
#include "toposweep/sweep/config_keys.hpp"
#include "toposweep/topology/config_keys.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/workload/config_keys.hpp"

namespace toposweep::cli {

Command topology_command();
Command collective_command();
Command simulate_command();
Command optimize_command();
Command sweep_command();
Command frontier_command();
Command models_command();
Command export_command();

const std::vector<Command>& all_commands() {
  static const std::vector<Command> commands = {topology_command(), collective_command(), simulate_command(),
                                                optimize_command(), sweep_command(),      frontier_command(),
                                                models_command(),   export_command()};
  return commands;
}

KeyRegistry all_config_keys() {
  KeyRegistry r;
  r.add(util::config_keys());
  r.add(workload::config_keys());
  r.add(interop::config_keys());
  r.add(topology::config_keys());
  r.add(collective::config_keys());
  r.add(sim::config_keys());
  r.add(opt::config_keys());
  r.add(point::config_keys());
  r.add(frontier::config_keys());
  r.add(sweep::config_keys());
  return r;
}

}  // namespace toposweep::cli
