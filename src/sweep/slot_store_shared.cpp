// The scheduler's slots in an MPI-3 shared-memory window, used with the processor's atomics.
#include <algorithm>
#include <atomic>

#include "slot_stores.hpp"

namespace toposweep::sweep {
namespace {

// Slots are shared between processes: their atomics must not need a lock (a lock-free atomic is
// address-free, so it works through two mappings of the same memory).
static_assert(std::atomic_ref<std::int64_t>::is_always_lock_free);

class SharedMemoryStore final : public SlotStore {
 public:
  SharedMemoryStore(MPI_Comm comm, int count, int first_initial, std::span<const std::int64_t> initial) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    void* mine = nullptr;
    const MPI_Aint bytes =
        rank == 0 ? static_cast<MPI_Aint>(count) * static_cast<MPI_Aint>(sizeof(std::int64_t)) : 0;
    MPI_Win_allocate_shared(bytes, sizeof(std::int64_t), MPI_INFO_NULL, comm, &mine, &win_);
    MPI_Aint size = 0;
    int disp = 0;
    void* base = nullptr;
    MPI_Win_shared_query(win_, 0, &size, &disp, &base);
    slots_ = static_cast<std::int64_t*>(base);
    if (rank == 0) {
      for (int i = 0; i < count; ++i) at(i).store(0);
      for (std::size_t i = 0; i < initial.size(); ++i)
        at(first_initial + static_cast<int>(i)).store(initial[i]);
    }
    // The barrier orders rank 0's stores before every other rank's first load (seq_cst stores,
    // then a synchronising MPI call).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    MPI_Barrier(comm);
  }
  ~SharedMemoryStore() override { MPI_Win_free(&win_); }

  SlotStoreKind kind() const override { return SlotStoreKind::SharedMemory; }
  void load(std::span<const int> slots, std::int64_t* out) override {
    for (std::size_t i = 0; i < slots.size(); ++i) out[i] = at(slots[i]).load();
  }
  void load_range(int first, int count, std::int64_t* out) override {
    for (int i = 0; i < count; ++i) out[i] = at(first + i).load();
  }
  std::int64_t compare_and_swap(int slot, std::int64_t expected, std::int64_t desired) override {
    at(slot).compare_exchange_strong(expected, desired);
    return expected;  // what the slot held: `expected` is replaced by it on failure
  }
  void add(int first, const std::int64_t* values, int count) override {
    for (int i = 0; i < count; ++i) at(first + i).fetch_add(values[i]);
  }
  void store(int slot, std::int64_t value) override { at(slot).store(value); }

 private:
  std::atomic_ref<std::int64_t> at(int slot) { return std::atomic_ref<std::int64_t>(slots_[slot]); }

  MPI_Win win_ = MPI_WIN_NULL;
  std::int64_t* slots_ = nullptr;
};

}  // namespace

std::unique_ptr<SlotStore> make_shared_memory_store(MPI_Comm comm, int count, int first_initial,
                                                    std::span<const std::int64_t> initial) {
  return std::make_unique<SharedMemoryStore>(comm, count, first_initial, initial);
}

}  // namespace toposweep::sweep
