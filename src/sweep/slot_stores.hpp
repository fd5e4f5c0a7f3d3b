#pragma once
// The two slot stores' constructors (slot_store.hpp says what each is); make_slot_store picks.
#include "toposweep/sweep/slot_store.hpp"

namespace toposweep::sweep {

std::unique_ptr<SlotStore> make_shared_memory_store(MPI_Comm comm, int count, int first_initial,
                                                    std::span<const std::int64_t> initial);
std::unique_ptr<SlotStore> make_one_sided_store(MPI_Comm comm, int count, int first_initial,
                                                std::span<const std::int64_t> initial);

}  // namespace toposweep::sweep
