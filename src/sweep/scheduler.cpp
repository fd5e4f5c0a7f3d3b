#include "toposweep/sweep/scheduler.hpp"

#include <algorithm>
#include <chrono>

namespace toposweep::sweep {
namespace {

// Slots of the store on rank 0. kStop and kError are adjacent so one fetch per claim reads both;
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

ChunkScheduler::ChunkScheduler(MPI_Comm comm, std::int64_t total, SlotStoreKind store) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  starts_ = block_starts(total, ranks);
  const int blocks = static_cast<int>(starts_.size()) - 1, per_rank = blocks / ranks;
  next_owned_ = rank * per_rank;
  owned_end_ = next_owned_ + per_rank;
  std::vector<std::int64_t> initial(static_cast<std::size_t>(blocks));
  for (int b = 0; b < blocks; ++b) initial[b] = pack(0, starts_[b + 1] - starts_[b]);
  slots_ = make_slot_store(comm, kBlocks + blocks, kBlocks, initial, store);
}

ChunkScheduler::~ChunkScheduler() = default;

SlotStoreKind ChunkScheduler::store_kind() const {
  return slots_->kind();
}

std::int64_t ChunkScheduler::read_block(int b, Claim& flags) {
  const int which[3] = {kBlocks + b, kStop, kError};
  std::int64_t seen[3] = {0, 0, 0};
  slots_->load(which, seen);
  flags.stop = seen[1] != 0;
  flags.error = seen[2] != 0;
  return seen[0];
}

int ChunkScheduler::fullest_block(std::int64_t& slot, Claim& flags) {
  const int blocks = static_cast<int>(starts_.size()) - 1;
  std::vector<std::int64_t> all(static_cast<std::size_t>(kBlocks + blocks));
  slots_->load_range(0, kBlocks + blocks, all.data());
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
      const std::int64_t seen = slots_->compare_and_swap(kBlocks + block_, slot, want);
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
  slots_->add(kDone, counts.data(), 3);
}

ChunkCounts ChunkScheduler::done() {
  ChunkCounts c = {0, 0, 0};
  slots_->load_range(kDone, 3, c.data());
  return c;
}

void ChunkScheduler::request_stop() {
  slots_->store(kStop, 1);
}

void ChunkScheduler::publish_failure(int rank) {
  // The first failure wins the slot, so the message names the cause, not a later consequence.
  slots_->compare_and_swap(kError, 0, rank + 1);
}

int ChunkScheduler::first_failed_rank() {
  std::int64_t first_failed = 0;
  const int which[1] = {kError};
  slots_->load(which, &first_failed);
  return static_cast<int>(first_failed) - 1;
}

}  // namespace toposweep::sweep
