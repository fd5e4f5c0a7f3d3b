// The chunk scheduler on several real ranks (mpirun -n N): every position of the to-do list is
// claimed exactly once, each rank starts at the front of its own block and goes forward in it,
// and a rank that helps with another's block takes from its back, going backward, so owner and
// helper meet. Chunk sizes are pseudo-random (1..7 points) and each claim is followed by a short
// pause (rank 0: 20 us, the others 0-2 us), so the others reach rank 0's block and race it for
// its slot (a claim that read and replaced the slot without compare-and-swap failed here within a
// few runs). Exit 0 on success; rank 0 prints what failed.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include "toposweep/sweep/scheduler.hpp"

using toposweep::sweep::ChunkScheduler;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::int64_t total = argc > 1 ? std::atoll(argv[1]) : 1000;
  std::vector<std::int64_t> mine;  // first, last, first, last, ...
  {
    ChunkScheduler s(MPI_COMM_WORLD, total);
    std::mt19937 rng(static_cast<unsigned>(rank) * 7919u + 1u);
    while (true) {
      const auto c = s.claim(1 + static_cast<std::int64_t>(rng() % 7));
      if (c.empty()) break;
      mine.push_back(c.first);
      mine.push_back(c.last);
      // Rank 0 is slow, so the others finish their blocks and help with its block.
      std::this_thread::sleep_for(std::chrono::microseconds(rank == 0 ? 20 : rng() % 3));
    }
  }
  int n = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(ranks)), offsets(static_cast<std::size_t>(ranks));
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<std::int64_t> all;
  if (rank == 0) {
    int sum = 0;
    for (int r = 0; r < ranks; ++r)
      offsets[static_cast<std::size_t>(r)] = sum, sum += counts[static_cast<std::size_t>(r)];
    all.resize(static_cast<std::size_t>(sum));
  }
  MPI_Gatherv(mine.data(), n, MPI_INT64_T, all.data(), counts.data(), offsets.data(), MPI_INT64_T, 0,
              MPI_COMM_WORLD);
  int failed = 0;
  if (rank == 0) {
    auto fail = [&](const char* what, int r, long long a, long long b) {
      std::fprintf(stderr, "FAIL: %s (rank %d, %lld..%lld)\n", what, r, a, b);
      failed = 1;
    };
    const auto starts = ChunkScheduler::block_starts(total, ranks);
    const std::size_t per_rank = (starts.size() - 1) / static_cast<std::size_t>(ranks);
    std::vector<int> claimed(static_cast<std::size_t>(total), 0);
    for (int r = 0; r < ranks; ++r) {
      const std::int64_t* c = all.data() + offsets[static_cast<std::size_t>(r)];
      const int pairs = counts[static_cast<std::size_t>(r)] / 2;
      const std::int64_t own_begin = starts[static_cast<std::size_t>(r) * per_rank];
      const std::int64_t own_end = starts[static_cast<std::size_t>(r + 1) * per_rank];
      if (own_end > own_begin && (pairs == 0 || c[0] != own_begin))
        fail("a rank's first chunk is not the front of its own block", r, pairs ? c[0] : -1, own_begin);
      std::int64_t own_next = own_begin, helped_prev = -1;
      std::ptrdiff_t helped_block = -1;
      for (int k = 0; k < pairs; ++k) {
        const std::int64_t a = c[2 * k], b = c[2 * k + 1];
        if (!(0 <= a && a < b && b <= total)) {
          fail("a chunk outside the list", r, a, b);
          continue;
        }
        for (std::int64_t p = a; p < b; ++p) ++claimed[static_cast<std::size_t>(p)];
        if (a >= own_begin && b <= own_end) {
          if (a != own_next) fail("a rank's own chunks are not consecutive from the front", r, a, b);
          own_next = b;
        } else {
          // Helping: a rank's chunks in another's block go backward (each before the previous),
          // so with the owner's chunks forward from the front, the block's owner holds a prefix.
          const auto blk = std::upper_bound(starts.begin(), starts.end(), a) - starts.begin() - 1;
          if (blk == helped_block && b > helped_prev)
            fail("a helper's chunks in one block do not go backward", r, a, b);
          helped_block = blk;
          helped_prev = a;
        }
      }
    }
    for (std::int64_t p = 0; p < total; ++p)
      if (claimed[static_cast<std::size_t>(p)] != 1) {
        fail("a position claimed other than exactly once", -1, p, claimed[static_cast<std::size_t>(p)]);
        break;
      }
    if (!failed)
      std::printf("scheduler_claims: %lld positions on %d ranks: each claimed once\n",
                  static_cast<long long>(total), ranks);
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
