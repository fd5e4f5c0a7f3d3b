#pragma once
// MPI for the commands that use it (`sweep`, and `optimize` launched on several ranks): MPI_Init
// on first use, MPI_Finalize at exit. MPI is finalised at exit, not when a command returns: rank
// 0 prints the error line after `run` (in run_main), and MPI_Finalize waits for every rank, so no
// rank can exit before that line is out. Finalising earlier let the other ranks exit 1 first, and
// mpirun, which ends the job at the first non-zero exit, sometimes killed rank 0 before it had
// printed.
namespace toposweep::cli {

class MpiSession {
 public:
  MpiSession();
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace toposweep::cli
