// Writes an iteration plan's task graph as Chakra execution traces, one per GPU rank.
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "chakra_et.pb.h"
#include "chakra_format.hpp"
#include "toposweep/interop/chakra.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::interop {
namespace {

namespace pb = ChakraProtoMsg;
using namespace chakra;
namespace fs = std::filesystem;

pb::AttributeProto& attr(pb::Node& n, std::string_view name) {
  pb::AttributeProto& a = *n.add_attr();
  a.set_name(std::string(name));
  return a;
}
pb::AttributeProto& attr(pb::GlobalMetadata& m, std::string_view name) {
  pb::AttributeProto& a = *m.add_attr();
  a.set_name(std::string(name));
  return a;
}

std::int64_t whole(double x) {
  return x > 0 ? static_cast<std::int64_t>(std::llround(x)) : 0;
}

// Where each rank stands in one group set: the group it is a member of (collectives), or the
// pair it sends on and the pair it receives on (transfers); -1: none.
struct SetRoles {
  std::vector<std::int32_t> group, send_pair, recv_pair;
};

SetRoles roles_of(const GroupSet& gs, std::uint32_t gpus) {
  SetRoles r{std::vector<std::int32_t>(gpus, -1), std::vector<std::int32_t>(gpus, -1),
             std::vector<std::int32_t>(gpus, -1)};
  for (std::size_t g = 0; g < gs.groups.size(); ++g) {
    const auto& members = gs.groups[g];
    for (std::uint32_t m : members)
      if (m < gpus) r.group[m] = static_cast<std::int32_t>(g);
    if (members.size() == 2 && members[0] < gpus && members[1] < gpus) {
      r.send_pair[members[0]] = static_cast<std::int32_t>(g);
      r.recv_pair[members[1]] = static_cast<std::int32_t>(g);
    }
  }
  return r;
}

const char* kind_word(const Task& t) {
  return t.kind == TaskKind::Compute ? "compute" : t.kind == TaskKind::Collective ? "collective" : "transfer";
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw BadInput("cannot write the trace file '" + path.string() + "'", "export --out");
}

void append_message(std::string& out, const google::protobuf::MessageLite& m) {
  const std::string body = m.SerializeAsString();
  append_varint(out, body.size());
  out += body;
}

}  // namespace

ChakraExport write_chakra(const IterationPlan& plan, const fs::path& dir, const std::string& prefix,
                          CommSizeConvention sizes) {
  const TaskGraph& g = plan.graph;
  const std::uint32_t gpus = g.gpus;
  const std::uint32_t pp = std::max<std::uint32_t>(1, plan.pp);
  if (gpus == 0 || gpus % pp != 0) throw RuntimeFailure("write_chakra: a plan without a rank grid");
  const std::uint32_t per_stage = gpus / pp;

  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec))
    throw BadInput("cannot create the directory '" + dir.string() + "'", "export --out");
  // Traces of another prefix would make the directory unreadable as one job; stale ranks of this
  // prefix would be read as extra ranks.
  const std::regex trace_name(R"((.*)\.([0-9]+)\.et)");
  for (const auto& e : fs::directory_iterator(dir)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (!std::regex_match(name, m, trace_name)) continue;
    if (m[1].str() != prefix)
      throw BadInput("'" + dir.string() + "' holds traces of another job ('" + name +
                         "'); export into an empty directory",
                     "export --out");
    if (std::stoull(m[2].str()) >= gpus) fs::remove(e.path());
  }

  std::vector<SetRoles> roles;
  std::vector<std::uint64_t> pg_base;  // the pg_name of group set s's group k is pg_base[s] + k
  // From 1: ASTRA-sim's communicator groups need positive ids (its stream ids start at id x 10^6).
  std::uint64_t next_pg = 1;
  for (const GroupSet& gs : g.group_sets) {
    roles.push_back(roles_of(gs, gpus));
    pg_base.push_back(next_pg);
    next_pg += gs.groups.size();
  }
  for (TaskId t = 0; t < g.tasks.size(); ++t)
    if (g.tasks[t].kind == TaskKind::Transfer)
      for (std::uint32_t r = 0; r < gpus; ++r) {
        const SetRoles& sr = roles[g.tasks[t].group_set];
        if (sr.send_pair[r] >= 0 && sr.recv_pair[r] >= 0)
          throw RuntimeFailure("write_chakra: rank " + std::to_string(r) +
                               " both sends and receives in task " + std::to_string(t));
      }

  ChakraExport out;
  out.ranks = gpus;
  std::vector<char> held(g.tasks.size());
  std::vector<std::int64_t> last_on_stream(g.stream_count());
  for (std::uint32_t rank = 0; rank < gpus; ++rank) {
    std::string bytes;
    pb::GlobalMetadata meta;
    meta.set_version(std::string(kSchemaVersion));
    attr(meta, kRank).set_uint32_val(rank);
    attr(meta, kGpus).set_uint32_val(gpus);
    attr(meta, kDp).set_uint32_val(plan.dp);
    attr(meta, kTp).set_uint32_val(plan.tp);
    attr(meta, kPp).set_uint32_val(plan.pp);
    attr(meta, kCp).set_uint32_val(plan.cp);
    attr(meta, kEp).set_uint32_val(plan.ep);
    if (plan.strategy.etp != 0) attr(meta, kEtp).set_uint32_val(plan.strategy.etp);
    attr(meta, kMicrobatches).set_uint32_val(plan.microbatches);
    attr(meta, kGlobalBatch).set_double_val(plan.global_batch);
    attr(meta, kMemory).set_double_val(plan.memory_per_gpu_bytes);
    pb::AttributeProto& streams = attr(meta, kStreams);
    streams.mutable_string_list();
    for (const std::string& s : g.stream_names) streams.mutable_string_list()->add_values(s);
    pb::AttributeProto& labels = attr(meta, kLabels);
    labels.mutable_string_list();
    for (const std::string& l : g.labels) labels.mutable_string_list()->add_values(l);
    append_message(bytes, meta);

    std::fill(held.begin(), held.end(), 0);
    std::fill(last_on_stream.begin(), last_on_stream.end(), -1);
    const std::uint32_t stage_of_rank = rank / per_stage;
    for (TaskId id = 0; id < g.tasks.size(); ++id) {
      const Task& t = g.tasks[id];
      pb::Node n;
      n.set_id(id);
      if (t.kind == TaskKind::Compute) {
        if (t.stage != stage_of_rank) continue;
        n.set_type(pb::COMP_NODE);
        n.set_duration_micros(static_cast<std::uint64_t>(whole(t.duration_s * t.repeat * 1e6)));
        attr(n, kIsCpuOp).set_bool_val(false);
        attr(n, kNumOps).set_int64_val(whole(t.flops * t.repeat));
        attr(n, kDuration).set_double_val(t.duration_s);
        attr(n, kFlops).set_double_val(t.flops);
        if (t.sm_share > 0) attr(n, kSmShare).set_double_val(t.sm_share);
      } else {
        const SetRoles& sr = roles[t.group_set];
        const auto& groups = g.group_sets[t.group_set].groups;
        std::int32_t group = -1;
        if (t.kind == TaskKind::Collective) {
          group = sr.group[rank];
          if (group < 0) continue;
          n.set_type(pb::COMM_COLL_NODE);
          attr(n, kIsCpuOp).set_bool_val(false);
          attr(n, kCommType).set_int64_val(comm_type_of(t.op));
        } else {
          const bool sends = sr.send_pair[rank] >= 0;
          group = sends ? sr.send_pair[rank] : sr.recv_pair[rank];
          if (group < 0) continue;
          n.set_type(sends ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
          attr(n, kIsCpuOp).set_bool_val(false);
          attr(n, kCommSrc).set_int32_val(static_cast<std::int32_t>(groups[group][0]));
          attr(n, kCommDst).set_int32_val(static_cast<std::int32_t>(groups[group][1]));
          attr(n, kCommTag).set_int32_val(static_cast<std::int32_t>(id));
        }
        const bool share = sizes == CommSizeConvention::AstraSim && t.kind == TaskKind::Collective &&
                           t.op == CollectiveOp::AllGather;
        attr(n, kCommSize)
            .set_int64_val(
                whole(t.bytes * t.repeat / (share ? static_cast<double>(groups[group].size()) : 1.0)));
        attr(n, kPgName).set_string_val(std::to_string(pg_base[t.group_set] + group));
        attr(n, kBytes).set_double_val(t.bytes);
        attr(n, kPurpose).set_uint32_val(static_cast<std::uint32_t>(t.purpose));
        if (t.is_mutable) attr(n, kMutable).set_bool_val(true);
        if (t.dedup.active()) {
          auto& list = *attr(n, kDedup).mutable_uint64_list();
          for (std::uint16_t x : {t.dedup.top_k, t.dedup.experts, t.dedup.groups, t.dedup.group_topk})
            list.add_values(x);
        }
        if (const auto& axis = g.group_sets[t.group_set].axis)
          attr(n, kAxis).set_uint32_val(static_cast<std::uint32_t>(*axis));
      }
      n.set_name(t.label != 0 && t.label < g.labels.size()
                     ? g.labels[t.label]
                     : std::string(kind_word(t)) + "." + std::to_string(id));
      if (t.repeat != 1) attr(n, kRepeat).set_uint32_val(t.repeat);
      attr(n, kStream).set_uint32_val(t.stream);
      attr(n, kPhase).set_uint32_val(static_cast<std::uint32_t>(t.phase));
      attr(n, kStage).set_uint32_val(t.stage);
      if (t.layer != kNoLayer) attr(n, kLayer).set_uint32_val(t.layer);
      attr(n, kMicrobatch).set_uint32_val(t.microbatch);
      if (t.label != 0) attr(n, kLabel).set_uint32_val(t.label);
      // Dependencies on this rank's nodes are Chakra's data dependencies; those on nodes other
      // ranks run (a receive's send, ...) cannot be, and travel in toposweep's own attribute.
      pb::AttributeProto* remote = nullptr;
      for (TaskId d : g.deps_of(id)) {
        if (held[d]) {
          n.add_data_deps(d);
        } else {
          if (!remote) remote = &attr(n, kRemoteDeps);
          remote->mutable_uint64_list()->add_values(d);
        }
      }
      // Stream order: the previous node of this rank on the same stream.
      const std::int64_t prev = t.stream < last_on_stream.size() ? last_on_stream[t.stream] : -1;
      if (prev >= 0) {
        const auto deps = g.deps_of(id);
        if (std::find(deps.begin(), deps.end(), static_cast<TaskId>(prev)) == deps.end())
          n.add_ctrl_deps(prev);
      }
      if (t.stream < last_on_stream.size()) last_on_stream[t.stream] = id;
      held[id] = 1;
      append_message(bytes, n);
      ++out.nodes;
    }
    const fs::path path = dir / (prefix + "." + std::to_string(rank) + ".et");
    write_file(path, bytes);
    out.files.push_back(path);
  }

  // ASTRA-sim's communicator groups: each pg_name's ranks, in the order the ring visits them.
  nlohmann::ordered_json groups = nlohmann::ordered_json::object();
  for (std::size_t s = 0; s < g.group_sets.size(); ++s)
    for (std::size_t k = 0; k < g.group_sets[s].groups.size(); ++k)
      groups[std::to_string(pg_base[s] + k)] = g.group_sets[s].groups[k];
  out.comm_groups = dir / (prefix + std::string(kCommGroupsSuffix));
  write_file(out.comm_groups, groups.dump() + "\n");
  return out;
}

}  // namespace toposweep::interop
