// The chunk scheduler on several real ranks (mpirun -n N, a GoogleTest program with its own main):
// every position of the to-do list is claimed exactly once, each rank starts at the front of its
// own block and goes forward in it, and a rank that helps with another's block takes from its
// back, going backward, so owner and helper meet. Chunk sizes are pseudo-random (1..7 points) and
// each claim is followed by a short pause (rank 0: 20 us, the others 0-2 us), so the others reach
// rank 0's block and race it for its slot (a claim that read and replaced the slot without
// compare-and-swap failed here within a few runs). Rank 0 checks what every rank claimed.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "toposweep/sweep/scheduler.hpp"

namespace toposweep::sweep {
namespace {

// The store under test: --store=shared_memory (default) or --store=one_sided.
SlotStoreKind g_store = SlotStoreKind::SharedMemory;

using Chunk = std::pair<std::int64_t, std::int64_t>;  // [first, last)

// Every rank claims until nothing is left; rank 0 gets each rank's chunks in claim order.
std::vector<std::vector<Chunk>> claim_everything(std::int64_t total, int rank, int ranks) {
  std::vector<std::int64_t> mine;  // first, last, first, last, ...
  {
    ChunkScheduler s(MPI_COMM_WORLD, total, g_store);
    EXPECT_EQ(s.store_kind(), g_store);
    std::mt19937 rng(static_cast<unsigned>(rank) * 7919u + 1u);
    while (true) {
      const auto c = s.claim(1 + static_cast<std::int64_t>(rng() % 7));
      if (c.empty()) break;
      mine.push_back(c.first);
      mine.push_back(c.last);
      std::this_thread::sleep_for(std::chrono::microseconds(rank == 0 ? 20 : rng() % 3));
    }
  }
  const int n = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(ranks)), offsets(static_cast<std::size_t>(ranks));
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int sum = 0;
  for (int r = 0; r < ranks && rank == 0; ++r) offsets[r] = sum, sum += counts[r];
  std::vector<std::int64_t> all(static_cast<std::size_t>(sum));
  MPI_Gatherv(mine.data(), n, MPI_INT64_T, all.data(), counts.data(), offsets.data(), MPI_INT64_T, 0,
              MPI_COMM_WORLD);
  std::vector<std::vector<Chunk>> by_rank(static_cast<std::size_t>(rank == 0 ? ranks : 0));
  for (std::size_t r = 0; r < by_rank.size(); ++r)
    for (int k = 0; k < counts[r]; k += 2)
      by_rank[r].emplace_back(all[offsets[r] + k], all[offsets[r] + k + 1]);
  return by_rank;
}

TEST(ChunkSchedulerOnRanks, EveryPositionOnceOwnersForwardHelpersBackward) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::int64_t total = 5000;
  const auto by_rank = claim_everything(total, rank, ranks);
  if (rank != 0) return;
  const auto starts = ChunkScheduler::block_starts(total, ranks);
  ASSERT_EQ(starts.size(), static_cast<std::size_t>(ranks) + 1);  // one block per rank
  std::vector<int> claimed(static_cast<std::size_t>(total), 0);
  for (int r = 0; r < ranks; ++r) {
    const auto& chunks = by_rank[static_cast<std::size_t>(r)];
    const std::int64_t own_begin = starts[r], own_end = starts[r + 1];
    ASSERT_FALSE(chunks.empty()) << "rank " << r;
    EXPECT_EQ(chunks.front().first, own_begin) << "rank " << r << "'s first chunk is its block's front";
    std::int64_t own_next = own_begin, helped_prev = -1;
    std::ptrdiff_t helped_block = -1;
    for (const auto& [a, b] : chunks) {
      ASSERT_TRUE(0 <= a && a < b && b <= total) << "rank " << r << ": " << a << ".." << b;
      for (std::int64_t p = a; p < b; ++p) ++claimed[static_cast<std::size_t>(p)];
      if (a >= own_begin && b <= own_end) {
        EXPECT_EQ(a, own_next) << "rank " << r << "'s own chunks go forward from the front";
        own_next = b;
      } else {
        // A helper's chunks in one block go backward (each before the previous), so with the
        // owner's forward from the front, the owner holds a prefix of its block.
        const auto blk = std::upper_bound(starts.begin(), starts.end(), a) - starts.begin() - 1;
        if (blk == helped_block) {
          EXPECT_LE(b, helped_prev) << "rank " << r << " helping: " << a << ".." << b;
        }
        helped_block = blk;
        helped_prev = a;
      }
    }
  }
  EXPECT_EQ(std::count(claimed.begin(), claimed.end(), 1), total) << "every position claimed exactly once";
}

}  // namespace
}  // namespace toposweep::sweep

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--store=", 0) == 0)
      toposweep::sweep::g_store = toposweep::sweep::parse_slot_store_kind(std::string(argv[i]).substr(8));
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0)
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
