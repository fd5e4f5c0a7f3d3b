// The toposweep executable: everything lives in the library; this only dispatches.
#include "toposweep/cli/command.hpp"

int main(int argc, char** argv) { return toposweep::cli::run_main(argc, argv); }
