// The scheduler's slots in an MPI window on rank 0, used through passive-target one-sided calls.
#include <algorithm>
#include <vector>

#include "slot_stores.hpp"

namespace toposweep::sweep {
namespace {

class OneSidedStore final : public SlotStore {
 public:
  OneSidedStore(MPI_Comm comm, int count, int first_initial, std::span<const std::int64_t> initial) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    std::int64_t* window = nullptr;
    const MPI_Aint bytes =
        rank == 0 ? static_cast<MPI_Aint>(count) * static_cast<MPI_Aint>(sizeof(std::int64_t)) : 0;
    MPI_Win_allocate(bytes, sizeof(std::int64_t), MPI_INFO_NULL, comm, &window, &win_);
    if (rank == 0) {
      std::fill(window, window + count, 0);
      std::copy(initial.begin(), initial.end(), window + first_initial);
    }
    MPI_Barrier(comm);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
  }
  ~OneSidedStore() override {
    MPI_Win_unlock_all(win_);
    MPI_Win_free(&win_);
  }

  SlotStoreKind kind() const override { return SlotStoreKind::OneSided; }
  void load(std::span<const int> slots, std::int64_t* out) override {
    // Accumulate-family reads are atomic with respect to the compare-and-swaps; one flush for all.
    for (std::size_t i = 0; i < slots.size(); ++i)
      MPI_Fetch_and_op(nullptr, &out[i], MPI_INT64_T, 0, slots[i], MPI_NO_OP, win_);
    MPI_Win_flush(0, win_);
  }
  void load_range(int first, int count, std::int64_t* out) override {
    MPI_Get_accumulate(nullptr, 0, MPI_INT64_T, out, count, MPI_INT64_T, 0, first, count, MPI_INT64_T,
                       MPI_NO_OP, win_);
    MPI_Win_flush(0, win_);
  }
  std::int64_t compare_and_swap(int slot, std::int64_t expected, std::int64_t desired) override {
    std::int64_t seen = 0;
    MPI_Compare_and_swap(&desired, &expected, &seen, MPI_INT64_T, 0, slot, win_);
    MPI_Win_flush(0, win_);
    return seen;
  }
  void add(int first, const std::int64_t* values, int count) override {
    MPI_Accumulate(values, count, MPI_INT64_T, 0, first, count, MPI_INT64_T, MPI_SUM, win_);
    MPI_Win_flush(0, win_);
  }
  void store(int slot, std::int64_t value) override {
    MPI_Accumulate(&value, 1, MPI_INT64_T, 0, slot, 1, MPI_INT64_T, MPI_REPLACE, win_);
    MPI_Win_flush(0, win_);
  }

 private:
  MPI_Win win_ = MPI_WIN_NULL;
};

}  // namespace

std::unique_ptr<SlotStore> make_one_sided_store(MPI_Comm comm, int count, int first_initial,
                                                std::span<const std::int64_t> initial) {
  return std::make_unique<OneSidedStore>(comm, count, first_initial, initial);
}

}  // namespace toposweep::sweep
