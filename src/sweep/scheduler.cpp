#include "toposweep/sweep/scheduler.hpp"

#include <algorithm>
#include <chrono>

namespace toposweep::sweep {
namespace {

// Slots of the window on rank 0. kStop and kError are adjacent so one fetch per claim reads both;
// the blocks' slots follow kBlocks.
enum Slot : int { kStop = 0, kError = 1, kDone = 2, kBlocks = 5 };

// A block's slot: the offsets of its first and one-past-last unclaimed positions.
constexpr std::int64_t kMaxBlock = 0xFFFFFFFFLL;
std::int64_t pack(std::int64_t front, std::int64_t back) {
  return static_cast<std::int64_t>((static_cast<std::uint64_t>(front) << 32) |
                                   static_cast<std::uint64_t>(back));
}
std::int64_t front_of(std::int64_t slot) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(slot) >> 32);
}
std::int64_t back_of(std::int64_t slot) {
  return slot & kMaxBlock;
}

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

std::vector<std::int64_t> ChunkScheduler::block_starts(std::int64_t total, int ranks) {
  const std::int64_t r = std::max(ranks, 1);
  // As few rounds of one block per rank as keep every block within 32-bit offsets.
  const std::int64_t needed = (total + kMaxBlock - 1) / kMaxBlock;
  const std::int64_t blocks = r * std::max<std::int64_t>(1, (needed + r - 1) / r);
  std::vector<std::int64_t> starts(static_cast<std::size_t>(blocks) + 1);
  const std::int64_t size = total / blocks, extra = total % blocks;
  for (std::int64_t b = 0; b <= blocks; ++b)
    starts[static_cast<std::size_t>(b)] = b * size + std::min(b, extra);
  return starts;
}

ChunkScheduler::ChunkScheduler(MPI_Comm comm, std::int64_t total) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  starts_ = block_starts(total, ranks);
  const int blocks = static_cast<int>(starts_.size()) - 1, per_rank = blocks / ranks;
  next_owned_ = rank * per_rank;
  owned_end_ = next_owned_ + per_rank;
  const int slots = kBlocks + blocks;
  std::int64_t* window = nullptr;
  MPI_Win_allocate(rank == 0 ? slots * static_cast<MPI_Aint>(sizeof(std::int64_t)) : 0, sizeof(std::int64_t),
                   MPI_INFO_NULL, comm, &window, &win_);
  if (rank == 0) {
    std::fill(window, window + kBlocks, 0);
    for (int b = 0; b < blocks; ++b) window[kBlocks + b] = pack(0, starts_[b + 1] - starts_[b]);
  }
  MPI_Barrier(comm);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
}

ChunkScheduler::~ChunkScheduler() {
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
}

std::int64_t ChunkScheduler::read_block(int b, Claim& flags) {
  std::int64_t slot = 0, stop_or_error[2] = {0, 0};
  MPI_Fetch_and_op(nullptr, &slot, MPI_INT64_T, 0, kBlocks + b, MPI_NO_OP, win_);
  MPI_Get_accumulate(nullptr, 0, MPI_INT64_T, stop_or_error, 2, MPI_INT64_T, 0, kStop, 2, MPI_INT64_T,
                     MPI_NO_OP, win_);
  MPI_Win_flush(0, win_);
  flags.stop = stop_or_error[0] != 0;
  flags.error = stop_or_error[1] != 0;
  return slot;
}

int ChunkScheduler::fullest_block(std::int64_t& slot, Claim& flags) {
  const int blocks = static_cast<int>(starts_.size()) - 1;
  std::vector<std::int64_t> all(static_cast<std::size_t>(kBlocks + blocks));
  MPI_Get_accumulate(nullptr, 0, MPI_INT64_T, all.data(), kBlocks + blocks, MPI_INT64_T, 0, 0,
                     kBlocks + blocks, MPI_INT64_T, MPI_NO_OP, win_);
  MPI_Win_flush(0, win_);
  flags.stop = all[kStop] != 0;
  flags.error = all[kError] != 0;
  int best = -1;
  std::int64_t most = 0;
  for (int b = 0; b < blocks; ++b) {
    const std::int64_t s = all[static_cast<std::size_t>(kBlocks + b)], left = back_of(s) - front_of(s);
    if (left > most) best = b, most = left, slot = s;
  }
  return best;
}

ChunkScheduler::Claim ChunkScheduler::claim(std::int64_t count) {
  const Timed timed(seconds_);
  count = std::max<std::int64_t>(count, 1);
  Claim c;
  c.first = c.last = starts_.back();
  while (true) {
    std::int64_t slot = 0;
    if (block_ < 0 && next_owned_ < owned_end_) {
      block_ = next_owned_++;
      from_back_ = false;
    }
    if (block_ >= 0) {
      slot = read_block(block_, c);
    } else {
      block_ = fullest_block(slot, c);
      if (block_ < 0) return c;  // nothing left anywhere
      from_back_ = true;
    }
    if (c.stop || c.error) return c;
    // Take `count` from this block's front (or back) unless another rank changed its slot first.
    while (front_of(slot) < back_of(slot)) {
      const std::int64_t front = front_of(slot), back = back_of(slot), n = std::min(count, back - front);
      const std::int64_t want = from_back_ ? pack(front, back - n) : pack(front + n, back);
      std::int64_t seen = 0;
      MPI_Compare_and_swap(&want, &slot, &seen, MPI_INT64_T, 0, kBlocks + block_, win_);
      MPI_Win_flush(0, win_);
      if (seen == slot) {
        const std::int64_t base = starts_[static_cast<std::size_t>(block_)];
        c.first = base + (from_back_ ? back - n : front);
        c.last = c.first + n;
        c.left = back - front - n;
        return c;
      }
      slot = seen;
    }
    block_ = -1;  // this block is used up: the next of ours, or help another
  }
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
