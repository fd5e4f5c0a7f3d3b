#pragma once
// Chakra execution traces (MLCommons; what ASTRA-sim reads): an iteration plan's task graph
// written as one trace per GPU rank, and such a directory read back as a plan (docs/interop.md).
//
// A rank's trace is `<prefix>.<rank>.et`: a GlobalMetadata message, then Node messages, each
// preceded by its length as a varint (Chakra's protolib encodeMessage). Next to them
// `<prefix>.comm_groups.json` maps each process-group name (a node's pg_name) to its ranks in
// ring order, ASTRA-sim's communicator-group file.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "toposweep/workload/iteration.hpp"

namespace toposweep::interop {

struct ChakraExport {
  std::uint32_t ranks = 0;
  std::uint64_t nodes = 0;                   // over all ranks' files
  std::vector<std::filesystem::path> files;  // the traces, by rank
  std::filesystem::path comm_groups;
};

// What a collective node's comm_size counts. NcclTests: the task's bytes (an AllGather's gathered
// buffer, as nccl-tests reports it). AstraSim: an AllGather's comm_size is each rank's share,
// bytes / group size, since ASTRA-sim's all-gather sends comm_size per step and ends with group
// size x comm_size; the other collectives are the same in both.
enum class CommSizeConvention { NcclTests, AstraSim };

// Writes plan's graph into `dir` (created when missing). Every task becomes a node, with the
// task's id as node id, in the file of each rank that runs it: compute on every rank of its
// stage, a collective on every member of its groups, a transfer as a send on each pair's source
// and a receive on its destination. Leftover traces of the same prefix (ranks the plan no longer
// has) are removed. BadInput when `dir` holds traces of another prefix or cannot be written.
ChakraExport write_chakra(const IterationPlan& plan, const std::filesystem::path& dir,
                          const std::string& prefix = "toposweep",
                          CommSizeConvention sizes = CommSizeConvention::NcclTests);

// Reads the traces in `dir` (one prefix; ranks 0..N-1, each file present) into a plan on N GPUs.
// A malformed trace throws BadInput naming the file, the node id and the field.
// `replicas` > 1 (model.chakra_replicas): `dir` holds one rank's trace (rank 0), played on that
// many data-parallel ranks: every rank runs every node, each collective spans all of them (the
// trace's process groups and any communicator-group file are not used), and point-to-point
// sends or receives are refused.
IterationPlan read_chakra(const std::filesystem::path& dir, std::uint32_t replicas = 1);

}  // namespace toposweep::interop
