#pragma once
// The CLI framework: each command lives in its own src/cli/cmd_<name>.cpp and is listed in
// src/cli/commands.cpp. run_main() parses the common options, builds the effective Config and
// maps exceptions to exit codes in one place.
#include <boost/program_options.hpp>
#include <iosfwd>
#include <string>
#include <vector>

#include "toposweep/util/config.hpp"
#include "toposweep/util/log.hpp"

namespace toposweep::cli {

namespace po = boost::program_options;

struct CommandContext {
  Config config;      // validated, registry defaults filled in
  bool json = false;  // --json: one JSON object on stdout, nothing else there
  Logger log;
  std::vector<std::string> positional;  // arguments after the command that are not options
  po::variables_map options;            // command-specific options
  std::ostream* out = nullptr;          // stdout
};

struct Command {
  std::string name;
  std::string summary;
  std::string positional_usage;  // e.g. "[NAME]" or "RESULTS.h5"
  void (*add_options)(po::options_description&) = nullptr;
  int (*run)(CommandContext&) = nullptr;
  // After a successful run, warn about keys set explicitly that the command never read (in the
  // sections it reads at all). The sweep reports them per sub-space itself.
  bool warn_unused_keys = true;
};

const std::vector<Command>& all_commands();
KeyRegistry all_config_keys();

// Parses argv, runs the command, prints errors; returns the process exit status.
int run_main(int argc, char** argv);

}  // namespace toposweep::cli
