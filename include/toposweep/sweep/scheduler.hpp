#pragma once
// The sweep's dynamic load balancing: counters on rank 0 (a SlotStore: shared memory with the
// processor's atomics when every rank is on one node, else a one-sided MPI window) that every rank
// reads and updates without rank 0's help. It hands out chunks of the to-do list, counts the points done
// (for rank 0's progress lines) and carries two flags every rank reads with each claim: stop (a
// rank saw SIGTERM/SIGINT) and error (1 + the rank that failed first), so that the others leave at
// their next chunk.
//
// Chunks keep each rank on a contiguous stretch of the to-do list, so that the points whose
// networks, plans and collective timings a rank has cached stay on that rank: the list is cut into
// contiguous blocks, one per rank (more when a block would exceed 2^32 - 1 positions), and rank r
// claims from the fronts of its own blocks, in order. A rank whose blocks are empty claims from
// the back of the block with the most positions left, so owner and helper meet in the middle
// instead of alternating chunks (perf-1024.ini on 2 ranks: the evaluation's rank-seconds were
// ~1.35x one rank's when both ranks took turns along one list). Each block's remaining
// [front, back) is one 64-bit slot (two 32-bit offsets into the block), taken by compare-and-swap.
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "toposweep/sweep/mpi.hpp"
#include "toposweep/sweep/slot_store.hpp"

namespace toposweep::sweep {

// Point counts of chunks: all points, infeasible ones, failed ones.
using ChunkCounts = std::array<std::int64_t, 3>;

class ChunkScheduler {
 public:
  // Collective over `comm`: cuts positions [0, total) into blocks and makes the slot store (on
  // rank 0) of the given kind, filled.
  ChunkScheduler(MPI_Comm comm, std::int64_t total, SlotStoreKind store = SlotStoreKind::Auto);
  // Collective: frees the store. Every rank of `comm` must get here, so the
  // scheduler's scope must end where every rank is, whatever happened on each (run_sweep catches
  // every exception of its loop before leaving that scope).
  ~ChunkScheduler();
  ChunkScheduler(const ChunkScheduler&) = delete;
  ChunkScheduler& operator=(const ChunkScheduler&) = delete;

  struct Claim {
    std::int64_t first = 0;  // the claimed positions [first, last); empty when none are left
    std::int64_t last = 0;
    std::int64_t left = 0;  // positions still unclaimed in the claimed chunk's block
    bool stop = false;      // some rank asked to stop
    bool error = false;     // some rank failed
    bool empty() const { return first >= last; }
  };
  // Claims up to `count` (>= 1) consecutive positions of the to-do list and reads the stop and
  // error flags.
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

  // The store the slots are in (shared memory or one-sided).
  SlotStoreKind store_kind() const;

  // Wall time this rank spent in claim() and add_done(): the cost of scheduling.
  double seconds() const { return seconds_; }

  // How positions [0, total) are cut for `ranks` ranks: the first position of each block, and
  // total at the end (blocks.size() - 1 blocks, a multiple of ranks).
  static std::vector<std::int64_t> block_starts(std::int64_t total, int ranks);

 private:
  // Reads block `b`'s slot, and the two flags into `flags` (one flush).
  std::int64_t read_block(int b, Claim& flags);
  // The block with the most positions left and its slot, or -1; reads the flags into `flags` too.
  int fullest_block(std::int64_t& slot, Claim& flags);

  std::unique_ptr<SlotStore> slots_;
  std::vector<std::int64_t> starts_;
  int next_owned_ = 0, owned_end_ = 0;  // this rank's blocks not yet started
  int block_ = -1;                      // the block being worked on, or -1
  bool from_back_ = false;              // claiming from its back (a block of another rank)
  double seconds_ = 0;
};

}  // namespace toposweep::sweep
