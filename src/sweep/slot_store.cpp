#include "toposweep/sweep/slot_store.hpp"

#include "slot_stores.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::sweep {

SlotStoreKind parse_slot_store_kind(const std::string& name) {
  if (name == "auto") return SlotStoreKind::Auto;
  if (name == "shared_memory") return SlotStoreKind::SharedMemory;
  if (name == "one_sided") return SlotStoreKind::OneSided;
  throw BadInput("'" + name + "' is not auto, shared_memory or one_sided", "sweep.scheduler");
}

std::string spell(SlotStoreKind kind) {
  switch (kind) {
    case SlotStoreKind::Auto:
      return "auto";
    case SlotStoreKind::SharedMemory:
      return "shared_memory";
    case SlotStoreKind::OneSided:
      return "one_sided";
  }
  return "?";
}

bool all_on_one_node(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_size = 0, size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_size(comm, &size);
  MPI_Comm_free(&node);
  // Every rank computes the same answer only if every node is whole; agree on it.
  int here = node_size == size ? 1 : 0, all = 0;
  MPI_Allreduce(&here, &all, 1, MPI_INT, MPI_MIN, comm);
  return all != 0;
}

std::unique_ptr<SlotStore> make_slot_store(MPI_Comm comm, int count, int first_initial,
                                           std::span<const std::int64_t> initial, SlotStoreKind kind) {
  const bool one_node = all_on_one_node(comm);
  if (kind == SlotStoreKind::Auto) kind = one_node ? SlotStoreKind::SharedMemory : SlotStoreKind::OneSided;
  if (kind == SlotStoreKind::SharedMemory && !one_node)
    throw RuntimeFailure(
        "sweep.scheduler = shared_memory needs every rank on one node; these ranks span several: use auto "
        "or one_sided");
  if (kind == SlotStoreKind::SharedMemory)
    return make_shared_memory_store(comm, count, first_initial, initial);
  return make_one_sided_store(comm, count, first_initial, initial);
}

}  // namespace toposweep::sweep
