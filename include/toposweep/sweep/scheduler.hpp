#pragma once
// The sweep's dynamic load balancing: a one-sided MPI window on rank 0 that every rank reads and
// updates without rank 0's help. It hands out chunks of the to-do list (an atomic fetch-and-add on
// the next position), counts the points done (for rank 0's progress lines) and carries two flags
// every rank reads with each claim: stop (a rank saw SIGTERM/SIGINT) and error (1 + the rank that
// failed first), so that the others leave at their next chunk.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <array>
#include <cstdint>

namespace toposweep::sweep {

// Point counts of chunks: all points, infeasible ones, failed ones.
using ChunkCounts = std::array<std::int64_t, 3>;

class ChunkScheduler {
 public:
  // Collective over `comm`: allocates the window (on rank 0), zeroes it and opens a shared
  // passive-target epoch on every rank.
  explicit ChunkScheduler(MPI_Comm comm);
  // Collective: closes the epoch and frees the window. Every rank of `comm` must get here, so the
  // scheduler's scope must end where every rank is, whatever happened on each (run_sweep catches
  // every exception of its loop before leaving that scope).
  ~ChunkScheduler();
  ChunkScheduler(const ChunkScheduler&) = delete;
  ChunkScheduler& operator=(const ChunkScheduler&) = delete;

  struct Claim {
    std::int64_t first = 0;  // first position of the claimed chunk (may be past the end)
    bool stop = false;       // some rank asked to stop
    bool error = false;      // some rank failed
  };
  // Claims the next `count` positions of the to-do list and reads the stop and error flags.
  Claim claim(std::int64_t count);
  // Adds a finished chunk's counts to the progress totals.
  void add_done(const ChunkCounts& counts);
  // The progress totals of every rank so far (this run).
  ChunkCounts done();
  void request_stop();
  // Records `rank` as the failed rank unless another rank did first.
  void publish_failure(int rank);
  // The rank that published the first failure, or -1.
  int first_failed_rank();

  // Wall time this rank spent in claim() and add_done(): the cost of scheduling.
  double seconds() const { return seconds_; }

 private:
  MPI_Win win_;
  double seconds_ = 0;
};

}  // namespace toposweep::sweep
