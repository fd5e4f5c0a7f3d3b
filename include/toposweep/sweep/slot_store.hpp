#pragma once
// Where the chunk scheduler keeps its counters: an array of 64-bit slots on one rank that every
// rank of a communicator reads and updates without that rank's help. Two stores keep the same
// slots with the same operations, so the scheduler's protocol (scheduler.cpp) is written once:
//
// - SharedMemory: the slots live in an MPI-3 shared-memory window (MPI_Win_allocate_shared) and
//   are read and updated with the processor's own atomic instructions (std::atomic_ref), as
//   threads of one process would. No one-sided MPI call is made after the window is created, so
//   nothing depends on how an MPI library emulates remote atomics. Needs every rank of the
//   communicator on one node (one shared-memory domain).
// - OneSided: the slots live in an MPI window on rank 0 and are used through passive-target
//   one-sided operations (MPI_Compare_and_swap, MPI_Get_accumulate, MPI_Accumulate). Spans nodes.
//   Open MPI 4.1's osc/rdma emulates these atomics over btl/vader for ranks that share a node, and
//   that segfaults in containers without ptrace unless btl_vader_single_copy_mechanism=none
//   (docs/sweep.md, "MPI libraries").
//
// `sweep.scheduler = auto` (the default) takes SharedMemory when every rank shares one node, and
// OneSided otherwise.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "toposweep/sweep/mpi.hpp"

namespace toposweep::sweep {

enum class SlotStoreKind { Auto, SharedMemory, OneSided };

// "auto", "shared_memory", "one_sided" (the values of sweep.scheduler).
SlotStoreKind parse_slot_store_kind(const std::string& name);
std::string spell(SlotStoreKind kind);

class SlotStore {
 public:
  virtual ~SlotStore() = default;
  SlotStore(const SlotStore&) = delete;
  SlotStore& operator=(const SlotStore&) = delete;

  // Which store this is (never Auto).
  virtual SlotStoreKind kind() const = 0;
  // out[i] = slot[slots[i]], for every i (each read atomic on its own).
  virtual void load(std::span<const int> slots, std::int64_t* out) = 0;
  // out[i] = slot[first + i] for i < count.
  virtual void load_range(int first, int count, std::int64_t* out) = 0;
  // Atomically: seen = slot; if seen == expected, slot = desired. Returns seen.
  virtual std::int64_t compare_and_swap(int slot, std::int64_t expected, std::int64_t desired) = 0;
  // slot[first + i] += values[i] for i < count, each addition atomic.
  virtual void add(int first, const std::int64_t* values, int count) = 0;
  // slot = value, atomically.
  virtual void store(int slot, std::int64_t value) = 0;

 protected:
  SlotStore() = default;
};

// Collective over `comm`: `count` slots on rank 0, every one 0, then `initial[i]` into slot
// `first_initial + i`. `kind` Auto picks as described above; SharedMemory on a communicator that
// spans nodes is a RuntimeFailure.
std::unique_ptr<SlotStore> make_slot_store(MPI_Comm comm, int count, int first_initial,
                                           std::span<const std::int64_t> initial, SlotStoreKind kind);

// Whether every rank of `comm` is on one shared-memory node (collective).
bool all_on_one_node(MPI_Comm comm);

}  // namespace toposweep::sweep
