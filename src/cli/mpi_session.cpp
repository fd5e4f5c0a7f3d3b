#include "toposweep/cli/mpi_session.hpp"

#include <cstdlib>

#include "toposweep/sweep/mpi.hpp"

namespace toposweep::cli {
namespace {

extern "C" void finalize_mpi() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace

MpiSession::MpiSession() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    MPI_Init(nullptr, nullptr);
    std::atexit(finalize_mpi);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

}  // namespace toposweep::cli
