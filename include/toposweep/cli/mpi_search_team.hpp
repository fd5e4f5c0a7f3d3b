#pragma once
// The MPI ranks of a launch as a strategy search team (opt/search_team.hpp), for
// `mpirun -n N toposweep optimize --target strategy`.
#include <memory>

#include "toposweep/opt/search_team.hpp"

namespace toposweep::cli {

// When an MPI launcher started this process with more than one rank: MPI initialised (finalised
// at exit) and the team of MPI_COMM_WORLD. Otherwise (no launcher, or one rank) null, and MPI
// stays uninitialised: `optimize` never needs mpirun.
std::unique_ptr<opt::SearchTeam> mpi_search_team_if_launched();

}  // namespace toposweep::cli
