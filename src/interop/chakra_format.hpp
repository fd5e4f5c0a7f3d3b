#pragma once
// What the Chakra writer and reader share: attribute names, the varint length prefix, the
// mapping of collective operations to Chakra's comm_type values. Internal to src/interop.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "toposweep/util/collective_op.hpp"

namespace toposweep::interop::chakra {

// The schema version written to GlobalMetadata (Chakra's converters write this one).
inline constexpr std::string_view kSchemaVersion = "0.0.4";
inline constexpr std::string_view kCommGroupsSuffix = ".comm_groups.json";

// Chakra's own node attributes (their types as Chakra's feeder reads them).
inline constexpr std::string_view kIsCpuOp = "is_cpu_op";   // bool_val
inline constexpr std::string_view kNumOps = "num_ops";      // int64_val
inline constexpr std::string_view kCommType = "comm_type";  // int64_val, CollectiveCommType
inline constexpr std::string_view kCommSize = "comm_size";  // int64_val, bytes
inline constexpr std::string_view kCommSrc = "comm_src";    // int32_val
inline constexpr std::string_view kCommDst = "comm_dst";    // int32_val
inline constexpr std::string_view kCommTag = "comm_tag";    // int32_val
inline constexpr std::string_view kPgName = "pg_name";      // string_val

// toposweep's additions (other readers ignore them): what makes the read-back graph the same
// task for task. On nodes:
inline constexpr std::string_view kDuration = "toposweep.duration_s";     // double_val, per operation
inline constexpr std::string_view kFlops = "toposweep.flops";             // double_val, per operation
inline constexpr std::string_view kBytes = "toposweep.bytes";             // double_val, per operation
inline constexpr std::string_view kRepeat = "toposweep.repeat";           // uint32_val (absent: 1)
inline constexpr std::string_view kStream = "toposweep.stream";           // uint32_val, index
inline constexpr std::string_view kPhase = "toposweep.phase";             // uint32_val, TaskPhase
inline constexpr std::string_view kPurpose = "toposweep.purpose";         // uint32_val, CommPurpose
inline constexpr std::string_view kStage = "toposweep.stage";             // uint32_val
inline constexpr std::string_view kLayer = "toposweep.layer";             // uint32_val (absent: none)
inline constexpr std::string_view kMicrobatch = "toposweep.microbatch";   // uint32_val
inline constexpr std::string_view kLabel = "toposweep.label";             // uint32_val, index
inline constexpr std::string_view kMutable = "toposweep.mutable";         // bool_val
inline constexpr std::string_view kAxis = "toposweep.axis";               // uint32_val, Axis
inline constexpr std::string_view kRemoteDeps = "toposweep.remote_deps";  // uint64_list
inline constexpr std::string_view kSmShare = "toposweep.sm_share";        // double_val (absent: 0)
// An All-to-All whose tokens go once per destination node (strategy.ep_dispatcher = deepep):
// Task::dedup as [top_k, experts, groups, group_topk]; absent on every other node.
inline constexpr std::string_view kDedup = "toposweep.dedup";  // uint64_list
// On GlobalMetadata:
inline constexpr std::string_view kRank = "toposweep.rank";                    // uint32_val
inline constexpr std::string_view kGpus = "toposweep.gpus";                    // uint32_val
inline constexpr std::string_view kStreams = "toposweep.streams";              // string_list
inline constexpr std::string_view kLabels = "toposweep.labels";                // string_list
inline constexpr std::string_view kGlobalBatch = "toposweep.global_batch";     // double_val
inline constexpr std::string_view kMemory = "toposweep.memory_per_gpu_bytes";  // double_val
inline constexpr std::string_view kDp = "toposweep.dp", kTp = "toposweep.tp", kPp = "toposweep.pp",
                                  kCp = "toposweep.cp", kEp = "toposweep.ep",
                                  kMicrobatches = "toposweep.microbatches";  // uint32_val
inline constexpr std::string_view kEtp = "toposweep.etp";  // uint32_val: strategy.etp, absent when 0

// Chakra's CollectiveCommType values.
enum CommType : std::int64_t {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};

inline std::int64_t comm_type_of(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce:
      return kAllReduce;
    case CollectiveOp::ReduceScatter:
      return kReduceScatter;
    case CollectiveOp::AllGather:
      return kAllGather;
    case CollectiveOp::AllToAll:
      return kAllToAll;
    case CollectiveOp::Broadcast:
      return kBroadcast;
    case CollectiveOp::Reduce:
      return kReduce;
  }
  return kAllReduce;
}

// The operation of a comm_type toposweep can play; nullopt for the others (gather, scatter,
// barrier) and for values Chakra does not define.
inline std::optional<CollectiveOp> op_of_comm_type(std::int64_t t) {
  switch (t) {
    case kAllReduce:
      return CollectiveOp::AllReduce;
    case kReduce:
      return CollectiveOp::Reduce;
    case kAllGather:
      return CollectiveOp::AllGather;
    case kBroadcast:
      return CollectiveOp::Broadcast;
    case kAllToAll:
      return CollectiveOp::AllToAll;
    case kReduceScatter:
    case kReduceScatterBlock:
      return CollectiveOp::ReduceScatter;
    default:
      return std::nullopt;
  }
}

// Appends `v` as a protobuf varint (the length prefix of each message).
inline void append_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

}  // namespace toposweep::interop::chakra
