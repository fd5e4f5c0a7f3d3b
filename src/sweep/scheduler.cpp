#include "toposweep/sweep/scheduler.hpp"

#include <algorithm>
#include <chrono>

namespace toposweep::sweep {
namespace {

// Slots of the window on rank 0. kStop and kError are adjacent so one fetch per claim reads both.
enum Slot : int { kNext = 0, kDone = 1, kInfeasible = 2, kFailed = 3, kStop = 4, kError = 5, kSlots = 6 };

class Timed {
 public:
  explicit Timed(double& total) : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~Timed() { total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
  Timed(const Timed&) = delete;
  Timed& operator=(const Timed&) = delete;

 private:
  double& total_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

ChunkScheduler::ChunkScheduler(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::int64_t* slots = nullptr;
  MPI_Win_allocate(rank == 0 ? kSlots * sizeof(std::int64_t) : 0, sizeof(std::int64_t), MPI_INFO_NULL, comm,
                   &slots, &win_);
  if (rank == 0) std::fill(slots, slots + kSlots, 0);
  MPI_Barrier(comm);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
}

ChunkScheduler::~ChunkScheduler() {
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
}

ChunkScheduler::Claim ChunkScheduler::claim(std::int64_t count) {
  const Timed timed(seconds_);
  std::int64_t first = 0, stop_or_error[2] = {0, 0};
  MPI_Fetch_and_op(&count, &first, MPI_INT64_T, 0, kNext, MPI_SUM, win_);
  MPI_Get_accumulate(nullptr, 0, MPI_INT64_T, stop_or_error, 2, MPI_INT64_T, 0, kStop, 2, MPI_INT64_T,
                     MPI_NO_OP, win_);
  MPI_Win_flush(0, win_);
  return Claim{first, stop_or_error[0] != 0, stop_or_error[1] != 0};
}

void ChunkScheduler::add_done(const ChunkCounts& counts) {
  const Timed timed(seconds_);
  MPI_Accumulate(counts.data(), 3, MPI_INT64_T, 0, kDone, 3, MPI_INT64_T, MPI_SUM, win_);
  MPI_Win_flush(0, win_);
}

ChunkCounts ChunkScheduler::done() {
  ChunkCounts c = {0, 0, 0};
  MPI_Get_accumulate(nullptr, 0, MPI_INT64_T, c.data(), 3, MPI_INT64_T, 0, kDone, 3, MPI_INT64_T, MPI_NO_OP,
                     win_);
  MPI_Win_flush(0, win_);
  return c;
}

void ChunkScheduler::request_stop() {
  const std::int64_t one = 1;
  MPI_Accumulate(&one, 1, MPI_INT64_T, 0, kStop, 1, MPI_INT64_T, MPI_REPLACE, win_);
  MPI_Win_flush(0, win_);
}

void ChunkScheduler::publish_failure(int rank) {
  // The first failure wins the slot, so the message names the cause, not a later consequence.
  const std::int64_t mine = rank + 1, none = 0;
  std::int64_t previous = 0;
  MPI_Compare_and_swap(&mine, &none, &previous, MPI_INT64_T, 0, kError, win_);
  MPI_Win_flush(0, win_);
}

int ChunkScheduler::first_failed_rank() {
  std::int64_t first_failed = 0;
  MPI_Fetch_and_op(nullptr, &first_failed, MPI_INT64_T, 0, kError, MPI_NO_OP, win_);
  MPI_Win_flush(0, win_);
  return static_cast<int>(first_failed) - 1;
}

}  // namespace toposweep::sweep
