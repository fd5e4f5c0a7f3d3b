// Reads a directory of Chakra execution traces (one per rank) back into an iteration plan.
#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <queue>
#include <regex>
#include <set>
#include <sstream>

#include "chakra_et.pb.h"
#include "chakra_format.hpp"
#include "toposweep/interop/chakra.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::interop {
namespace {

namespace pb = ChakraProtoMsg;
using namespace chakra;
namespace fs = std::filesystem;

constexpr std::uint64_t kNoNode = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint32_t kUnsetStream = std::numeric_limits<std::uint32_t>::max();

[[noreturn]] void bad(const std::string& what, const fs::path& file, std::uint64_t node,
                      std::string_view field) {
  std::string where = "chakra trace " + file.string();
  if (node != kNoNode) where += ", node " + std::to_string(node);
  if (!field.empty()) where += ", field " + std::string(field);
  throw BadInput(what, where);
}

struct RankTrace {
  fs::path file;
  pb::GlobalMetadata meta;
  std::vector<pb::Node> nodes;
  std::map<std::uint64_t, std::size_t> index;  // node id -> position in nodes
};

// The messages of one file: varint length, message, ... (Chakra's protolib decodeMessage).
RankTrace read_trace(const fs::path& file) {
  RankTrace r;
  r.file = file;
  std::ifstream f(file, std::ios::binary);
  if (!f) bad("cannot read the trace file", file, kNoNode, "");
  std::ostringstream ss;
  ss << f.rdbuf();
  const std::string data = ss.str();
  std::size_t pos = 0;
  bool first = true;
  while (pos < data.size()) {
    const std::size_t at = pos;
    std::uint64_t len = 0;
    int shift = 0;
    bool done = false;
    while (pos < data.size() && shift < 35) {
      const auto byte = static_cast<unsigned char>(data[pos++]);
      len |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      shift += 7;
      if (!(byte & 0x80)) {
        done = true;
        break;
      }
    }
    const std::uint64_t after = r.nodes.empty() ? kNoNode : r.nodes.back().id();
    const std::string which =
        first ? "the GlobalMetadata" : "the message after node " + std::to_string(after);
    if (!done)
      bad("bad varint length prefix at byte " + std::to_string(at) + " (" + which + ")", file, kNoNode,
          "length prefix");
    if (len > data.size() - pos)
      bad("message at byte " + std::to_string(at) + " (" + which + ") claims " + std::to_string(len) +
              " bytes but only " + std::to_string(data.size() - pos) + " remain",
          file, kNoNode, "length prefix");
    const char* body = data.data() + pos;
    pos += len;
    if (first) {
      if (!r.meta.ParseFromArray(body, static_cast<int>(len)))
        bad("the GlobalMetadata message does not parse", file, kNoNode, "GlobalMetadata");
      first = false;
      continue;
    }
    pb::Node n;
    if (!n.ParseFromArray(body, static_cast<int>(len)))
      bad("a Node message at byte " + std::to_string(at) + " (" + which + ") does not parse", file, kNoNode,
          "Node");
    if (!r.index.emplace(n.id(), r.nodes.size()).second) bad("duplicate node id", file, n.id(), "id");
    r.nodes.push_back(std::move(n));
  }
  if (first) bad("empty trace: no GlobalMetadata", file, kNoNode, "GlobalMetadata");
  return r;
}

const pb::AttributeProto* find_attr(const google::protobuf::RepeatedPtrField<pb::AttributeProto>& attrs,
                                    std::string_view name) {
  for (const auto& a : attrs)
    if (a.name() == name) return &a;
  return nullptr;
}

// A typed attribute: absent -> nullopt; present with another type -> BadInput.
struct NodeView {
  const RankTrace& trace;
  const pb::Node& node;

  const pb::AttributeProto* get(std::string_view name, pb::AttributeProto::ValueCase want) const {
    const pb::AttributeProto* a = find_attr(node.attr(), name);
    if (a && a->value_case() != want) bad("attribute of an unexpected type", trace.file, node.id(), name);
    return a;
  }
  std::optional<std::int64_t> i64(std::string_view name) const {
    const auto* a = get(name, pb::AttributeProto::kInt64Val);
    return a ? std::optional<std::int64_t>(a->int64_val()) : std::nullopt;
  }
  std::optional<std::int32_t> i32(std::string_view name) const {
    const auto* a = get(name, pb::AttributeProto::kInt32Val);
    return a ? std::optional<std::int32_t>(a->int32_val()) : std::nullopt;
  }
  std::optional<std::uint32_t> u32(std::string_view name) const {
    const auto* a = get(name, pb::AttributeProto::kUint32Val);
    return a ? std::optional<std::uint32_t>(a->uint32_val()) : std::nullopt;
  }
  std::optional<double> f64(std::string_view name) const {
    const auto* a = get(name, pb::AttributeProto::kDoubleVal);
    return a ? std::optional<double>(a->double_val()) : std::nullopt;
  }
  std::optional<bool> boolean(std::string_view name) const {
    const auto* a = get(name, pb::AttributeProto::kBoolVal);
    return a ? std::optional<bool>(a->bool_val()) : std::nullopt;
  }
  std::optional<std::string> str(std::string_view name) const {
    const auto* a = get(name, pb::AttributeProto::kStringVal);
    return a ? std::optional<std::string>(a->string_val()) : std::nullopt;
  }
  [[noreturn]] void fail(const std::string& what, std::string_view field) const {
    bad(what, trace.file, node.id(), field);
  }
};

std::optional<std::uint32_t> meta_u32(const RankTrace& t, std::string_view name) {
  const pb::AttributeProto* a = find_attr(t.meta.attr(), name);
  if (!a) return std::nullopt;
  if (a->value_case() != pb::AttributeProto::kUint32Val)
    bad("attribute of an unexpected type", t.file, kNoNode, "GlobalMetadata " + std::string(name));
  return a->uint32_val();
}
std::optional<double> meta_f64(const RankTrace& t, std::string_view name) {
  const pb::AttributeProto* a = find_attr(t.meta.attr(), name);
  if (!a) return std::nullopt;
  if (a->value_case() != pb::AttributeProto::kDoubleVal)
    bad("attribute of an unexpected type", t.file, kNoNode, "GlobalMetadata " + std::string(name));
  return a->double_val();
}
std::optional<std::vector<std::string>> meta_strings(const RankTrace& t, std::string_view name) {
  const pb::AttributeProto* a = find_attr(t.meta.attr(), name);
  if (!a) return std::nullopt;
  if (a->value_case() != pb::AttributeProto::kStringList)
    bad("attribute of an unexpected type", t.file, kNoNode, "GlobalMetadata " + std::string(name));
  return std::vector<std::string>(a->string_list().values().begin(), a->string_list().values().end());
}

enum class NodeClass { Compute, Collective, Transfer };

NodeClass class_of(const NodeView& v) {
  switch (v.node.type()) {
    case pb::COMP_NODE:
    case pb::METADATA_NODE:
    case pb::MEM_LOAD_NODE:
    case pb::MEM_STORE_NODE:
      return NodeClass::Compute;
    // A communication node marked is_cpu_op is the host's call (Chakra's PyTorch converter keeps
    // the c10d operator next to the GPU kernel): host time, like any CPU operator.
    case pb::COMM_COLL_NODE:
      return v.boolean(kIsCpuOp).value_or(false) ? NodeClass::Compute : NodeClass::Collective;
    case pb::COMM_SEND_NODE:
    case pb::COMM_RECV_NODE:
      return v.boolean(kIsCpuOp).value_or(false) ? NodeClass::Compute : NodeClass::Transfer;
    default:
      v.fail(
          "node type " + std::to_string(static_cast<int>(v.node.type())) + " is not one toposweep can play",
          "type");
  }
}

// pg_names order numerically when they are numbers (toposweep's and PyTorch's), else as text.
struct PgLess {
  bool operator()(const std::string& a, const std::string& b) const {
    const bool na = !a.empty() && a.size() < 19 && std::all_of(a.begin(), a.end(), ::isdigit);
    const bool nb = !b.empty() && b.size() < 19 && std::all_of(b.begin(), b.end(), ::isdigit);
    if (na != nb) return na;
    if (na) return std::stoull(a) < std::stoull(b);
    return a < b;
  }
};

// One operation over all ranks: the rank files holding it.
struct Merged {
  NodeClass cls = NodeClass::Compute;
  std::vector<std::pair<std::uint32_t, const pb::Node*>> holders;
};

}  // namespace

IterationPlan read_chakra(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw BadInput("'" + dir.string() + "' is not a directory of Chakra traces",
                   "chakra trace " + dir.string());
  const std::regex trace_name(R"((.*)\.([0-9]+)\.et)");
  std::string prefix;
  std::map<std::uint64_t, fs::path> by_rank;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (!std::regex_match(name, m, trace_name)) continue;
    if (!prefix.empty() && m[1].str() != prefix)
      throw BadInput(
          "traces of two prefixes ('" + prefix + "', '" + m[1].str() + "'); keep one job per directory",
          "chakra trace " + dir.string());
    prefix = m[1].str();
    if (m[2].str().size() > 9) bad("rank number too large", e.path(), kNoNode, "file name");
    by_rank[std::stoull(m[2].str())] = e.path();
  }
  if (by_rank.empty())
    throw BadInput("no <prefix>.<rank>.et files in '" + dir.string() + "'", "chakra trace " + dir.string());
  const auto gpus = static_cast<std::uint32_t>(by_rank.size());
  for (std::uint32_t r = 0; r < gpus; ++r)
    if (!by_rank.count(r))
      throw BadInput("rank " + std::to_string(r) + "'s file " + prefix + "." + std::to_string(r) +
                         ".et is missing (ranks run 0.." + std::to_string(gpus - 1) + ")",
                     "chakra trace " + dir.string());

  std::vector<RankTrace> traces;
  for (const auto& [rank, path] : by_rank) traces.push_back(read_trace(path));

  // Communicator groups, when the directory has ASTRA-sim's file: their ring order.
  std::map<std::string, std::vector<std::uint32_t>, PgLess> comm_groups;
  const fs::path groups_file = dir / (prefix + std::string(kCommGroupsSuffix));
  if (fs::exists(groups_file, ec)) {
    std::ifstream f(groups_file);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(f);
      for (const auto& [name, ranks] : j.items()) {
        std::vector<std::uint32_t> list;
        for (const auto& r : ranks) {
          const auto v = r.get<std::int64_t>();
          if (v < 0 || v >= gpus)
            throw BadInput(
                "group '" + name + "' lists rank " + std::to_string(v) + " of " + std::to_string(gpus),
                "chakra trace " + groups_file.string());
          list.push_back(static_cast<std::uint32_t>(v));
        }
        comm_groups[name] = std::move(list);
      }
    } catch (const nlohmann::json::exception& e) {
      throw BadInput(std::string("not a communicator-group file: ") + e.what(),
                     "chakra trace " + groups_file.string());
    }
  }

  const RankTrace& head = traces.front();
  const bool ours = find_attr(head.meta.attr(), kGpus) != nullptr;
  if (ours && *meta_u32(head, kGpus) != gpus)
    bad("the traces were written for " + std::to_string(*meta_u32(head, kGpus)) +
            " ranks but the directory holds " + std::to_string(gpus),
        head.file, kNoNode, "GlobalMetadata " + std::string(kGpus));
  if (ours)
    for (std::uint32_t r = 0; r < gpus; ++r)
      if (const auto written = meta_u32(traces[r], kRank); written && *written != r)
        bad("the file of rank " + std::to_string(r) + " holds rank " + std::to_string(*written) + "'s trace",
            traces[r].file, kNoNode, "GlobalMetadata " + std::string(kRank));

  // Merge the ranks' nodes by id, checking each file's references.
  std::map<std::uint64_t, Merged> merged;
  for (std::uint32_t rank = 0; rank < gpus; ++rank) {
    const RankTrace& tr = traces[rank];
    for (const pb::Node& n : tr.nodes) {
      const NodeView v{tr, n};
      const NodeClass cls = class_of(v);
      for (std::uint64_t d : n.data_deps())
        if (!tr.index.count(d))
          v.fail("depends on node " + std::to_string(d) + ", which is not in this file", "data_deps");
      // Control dependencies order nodes but are not dependencies here (nor in Chakra's feeder):
      // toposweep writes them for stream order, which its stream attribute restores, always on
      // nodes of the same file (checked); Chakra's PyTorch converter also writes them for
      // parents it left out and for a node itself (not checked).
      if (ours)
        for (std::uint64_t d : n.ctrl_deps())
          if (!tr.index.count(d))
            v.fail("depends on node " + std::to_string(d) + ", which is not in this file", "ctrl_deps");
      auto [it, fresh] = merged.try_emplace(n.id());
      if (fresh) {
        it->second.cls = cls;
      } else if (it->second.cls != cls) {
        v.fail("node type differs from the node of the same id in rank " +
                   std::to_string(it->second.holders.front().first) + "'s file",
               "type");
      }
      it->second.holders.emplace_back(rank, &n);
    }
  }

  // Dependencies of each operation: every rank's data dependencies and toposweep's cross-rank
  // ones.
  std::map<std::uint64_t, std::vector<std::uint64_t>> deps_of;
  for (auto& [id, m] : merged) {
    std::set<std::uint64_t> d;
    for (const auto& [rank, node] : m.holders) {
      const NodeView v{traces[rank], *node};
      d.insert(node->data_deps().begin(), node->data_deps().end());
      if (const auto* remote = v.get(kRemoteDeps, pb::AttributeProto::kUint64List))
        for (std::uint64_t r : remote->uint64_list().values()) {
          if (!merged.count(r))
            v.fail("depends on node " + std::to_string(r) + ", which no rank's file holds", kRemoteDeps);
          d.insert(r);
        }
      if (d.count(id)) v.fail("depends on itself", "data_deps");
    }
    deps_of[id].assign(d.begin(), d.end());
  }

  // Task order: dependencies first, else by node id (a toposweep trace keeps its task ids).
  std::map<std::uint64_t, std::uint32_t> waiting;
  std::map<std::uint64_t, std::vector<std::uint64_t>> users;
  for (const auto& [id, d] : deps_of) {
    waiting[id] = static_cast<std::uint32_t>(d.size());
    for (std::uint64_t x : d) users[x].push_back(id);
  }
  std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<>> ready;
  for (const auto& [id, w] : waiting)
    if (w == 0) ready.push(id);
  std::vector<std::uint64_t> order;
  std::map<std::uint64_t, TaskId> task_of;
  while (!ready.empty()) {
    const std::uint64_t id = ready.top();
    ready.pop();
    task_of[id] = static_cast<TaskId>(order.size());
    order.push_back(id);
    for (std::uint64_t u : users[id])
      if (--waiting[u] == 0) ready.push(u);
  }
  if (order.size() != merged.size()) {
    for (const auto& [id, w] : waiting)
      if (w > 0) {
        const auto& [rank, node] = merged[id].holders.front();
        bad("the dependencies form a cycle through this node", traces[rank].file, id, "data_deps");
      }
  }

  IterationPlan plan;
  TaskGraph& g = plan.graph;
  g.gpus = gpus;
  if (ours) {
    g.stream_names = meta_strings(head, kStreams).value_or(std::vector<std::string>{});
    g.labels = meta_strings(head, kLabels).value_or(std::vector<std::string>{""});
    if (g.labels.empty()) g.labels.push_back("");
  }
  std::uint32_t foreign_compute = kUnsetStream, foreign_comm = kUnsetStream, foreign_cpu = kUnsetStream;
  std::map<std::string, std::uint32_t> label_ids;
  std::map<std::pair<std::vector<std::vector<std::uint32_t>>, int>, std::uint32_t> set_ids;
  std::uint32_t max_stage = 0;

  for (std::uint64_t id : order) {
    const Merged& m = merged[id];
    const auto& [rank0, node0] = m.holders.front();
    const NodeView v0{traces[rank0], *node0};
    Task t;
    t.kind = m.cls == NodeClass::Compute      ? TaskKind::Compute
             : m.cls == NodeClass::Collective ? TaskKind::Collective
                                              : TaskKind::Transfer;
    t.repeat = v0.u32(kRepeat).value_or(1);
    if (t.repeat == 0) v0.fail("repeat 0", kRepeat);
    if (const auto s = v0.u32(kStream)) {
      if (*s >= g.stream_names.size())
        v0.fail("stream " + std::to_string(*s) + " is not in the metadata's list", kStream);
      t.stream = *s;
    } else {
      // A foreign trace: GPU kernels on one stream, CPU operators on another, communication on
      // a third (in node order, under the data dependencies).
      const bool cpu = m.cls == NodeClass::Compute && v0.boolean(kIsCpuOp).value_or(false);
      std::uint32_t& foreign = cpu                           ? foreign_cpu
                               : m.cls == NodeClass::Compute ? foreign_compute
                                                             : foreign_comm;
      if (foreign == kUnsetStream)
        foreign = g.add_stream(cpu                           ? "chakra.cpu"
                               : m.cls == NodeClass::Compute ? "chakra.compute"
                                                             : "chakra.comm");
      t.stream = foreign;
    }
    t.phase = static_cast<TaskPhase>(std::min<std::uint32_t>(v0.u32(kPhase).value_or(3), 3));
    t.stage = v0.u32(kStage).value_or(0);
    if (ours && t.stage >= std::max<std::uint32_t>(1, meta_u32(head, kPp).value_or(1)))
      v0.fail("stage " + std::to_string(t.stage) + " beyond the metadata's pp", kStage);
    max_stage = std::max(max_stage, t.stage);
    t.layer = v0.u32(kLayer).value_or(kNoLayer);
    t.microbatch = v0.u32(kMicrobatch).value_or(0);
    if (const auto l = v0.u32(kLabel)) {
      if (*l >= g.labels.size())
        v0.fail("label " + std::to_string(*l) + " is not in the metadata's list", kLabel);
      t.label = *l;
    } else if (!ours && !node0->name().empty()) {
      auto [it, fresh] = label_ids.try_emplace(node0->name(), 0);
      if (fresh) it->second = g.add_label(node0->name());
      t.label = it->second;
    }

    if (m.cls == NodeClass::Compute) {
      // The slowest rank's time stands for all (a toposweep trace records one time for all).
      for (const auto& [rank, node] : m.holders) {
        const NodeView v{traces[rank], *node};
        const double d =
            v.f64(kDuration).value_or(static_cast<double>(node->duration_micros()) * 1e-6 / t.repeat);
        const double f = v.f64(kFlops).value_or(static_cast<double>(v.i64(kNumOps).value_or(0)) / t.repeat);
        if (!(d >= 0)) v.fail("negative duration", kDuration);
        t.duration_s = std::max(t.duration_s, d);
        t.flops = std::max(t.flops, f);
      }
    } else {
      t.purpose = static_cast<CommPurpose>(
          std::min<std::uint32_t>(v0.u32(kPurpose).value_or(static_cast<std::uint32_t>(CommPurpose::Other)),
                                  static_cast<std::uint32_t>(CommPurpose::Other)));
      t.is_mutable = v0.boolean(kMutable).value_or(false);
      // Bytes per operation: toposweep's exact value, else comm_size.
      for (const auto& [rank, node] : m.holders) {
        const NodeView v{traces[rank], *node};
        double b = 0;
        if (const auto exact = v.f64(kBytes)) {
          b = *exact;
        } else {
          const auto size = v.i64(kCommSize);
          if (!size) v.fail("a communication node without comm_size", kCommSize);
          if (*size < 0) v.fail("negative comm_size " + std::to_string(*size), kCommSize);
          b = static_cast<double>(*size) / t.repeat;
        }
        t.bytes = std::max(t.bytes, b);
      }
      GroupSet gs;
      if (const auto axis = v0.u32(kAxis)) {
        if (*axis >= kAxisCount) v0.fail("axis " + std::to_string(*axis) + " out of range", kAxis);
        gs.axis = static_cast<Axis>(*axis);
      }
      std::map<std::string, std::vector<std::uint32_t>, PgLess> groups;  // pg_name -> ranks
      if (m.cls == NodeClass::Collective) {
        std::optional<std::int64_t> type;
        for (const auto& [rank, node] : m.holders) {
          const NodeView v{traces[rank], *node};
          const auto ct = v.i64(kCommType);
          if (!ct) v.fail("a collective node without comm_type", kCommType);
          const auto op = op_of_comm_type(*ct);
          if (!op)
            v.fail(*ct >= kAllReduce && *ct <= kBarrier ? "comm_type " + std::to_string(*ct) +
                                                              " (gather, scatter or "
                                                              "barrier) is not one "
                                                              "toposweep can play"
                                                        : "unknown comm_type " + std::to_string(*ct),
                   kCommType);
          if (type && *type != *ct)
            v.fail("comm_type " + std::to_string(*ct) + " differs from rank " + std::to_string(rank0) +
                       "'s " + std::to_string(*type),
                   kCommType);
          type = *ct;
          t.op = *op;
          groups[v.str(kPgName).value_or("")].push_back(rank);
        }
        for (auto& [name, members] : groups) {
          const auto listed = comm_groups.find(name);
          if (listed != comm_groups.end()) {
            std::vector<std::uint32_t> sorted = listed->second;
            std::sort(sorted.begin(), sorted.end());
            if (sorted != members) {
              const auto& [rank, node] = m.holders.front();
              bad("process group '" + name + "' has " + std::to_string(listed->second.size()) +
                      " ranks in the communicator-group file but " + std::to_string(members.size()) +
                      " ranks' traces hold this node",
                  traces[rank].file, id, kPgName);
            }
            members = listed->second;
          }
          gs.groups.push_back(members);
        }
      } else {
        // Point-to-point: each send needs the receive of the same id on its destination.
        std::map<std::uint32_t, std::uint32_t> recv_from;  // receiving rank -> source
        for (const auto& [rank, node] : m.holders) {
          const NodeView v{traces[rank], *node};
          if (node->type() != pb::COMM_RECV_NODE) continue;
          const auto src = v.i32(kCommSrc);
          if (!src) v.fail("a receive without comm_src", kCommSrc);
          if (*src < 0 || static_cast<std::uint32_t>(*src) >= gpus ||
              static_cast<std::uint32_t>(*src) == rank)
            v.fail("comm_src " + std::to_string(*src) + " is not another rank of " + std::to_string(gpus),
                   kCommSrc);
          recv_from[rank] = static_cast<std::uint32_t>(*src);
        }
        std::size_t sends = 0;
        for (const auto& [rank, node] : m.holders) {
          const NodeView v{traces[rank], *node};
          if (node->type() != pb::COMM_SEND_NODE) continue;
          const auto dst = v.i32(kCommDst);
          if (!dst) v.fail("a send without comm_dst", kCommDst);
          if (*dst < 0 || static_cast<std::uint32_t>(*dst) >= gpus ||
              static_cast<std::uint32_t>(*dst) == rank)
            v.fail("comm_dst " + std::to_string(*dst) + " is not another rank of " + std::to_string(gpus),
                   kCommDst);
          const auto d = static_cast<std::uint32_t>(*dst);
          const auto r = recv_from.find(d);
          if (r == recv_from.end() || r->second != rank)
            v.fail("no receive of this node id from rank " + std::to_string(rank) + " in rank " +
                       std::to_string(d) + "'s file",
                   kCommDst);
          std::string pg = v.str(kPgName).value_or("");
          if (pg.empty() || groups.count(pg)) pg = "~" + std::to_string(rank);
          groups[pg] = {rank, d};
          ++sends;
        }
        if (sends != recv_from.size()) {
          for (const auto& [rank, node] : m.holders)
            if (node->type() == pb::COMM_RECV_NODE &&
                !std::any_of(groups.begin(), groups.end(),
                             [&](const auto& p) { return p.second[1] == rank; }))
              bad("no send of this node id to rank " + std::to_string(rank) + " in rank " +
                      std::to_string(recv_from[rank]) + "'s file",
                  traces[rank].file, id, kCommSrc);
        }
        for (auto& [name, pair] : groups) gs.groups.push_back(pair);
      }
      auto key = std::make_pair(gs.groups, gs.axis ? static_cast<int>(*gs.axis) : -1);
      auto [it, fresh] = set_ids.try_emplace(std::move(key), 0);
      if (fresh) it->second = g.add_group_set(std::move(gs));
      t.group_set = it->second;
    }
    std::vector<TaskId> deps;
    for (std::uint64_t d : deps_of[id]) deps.push_back(task_of.at(d));
    std::sort(deps.begin(), deps.end());
    g.add(t, deps);
  }
  if (g.stream_names.empty()) g.add_stream("chakra.compute");

  plan.feasible = true;
  plan.pp = ours ? meta_u32(head, kPp).value_or(max_stage + 1) : max_stage + 1;
  if (plan.pp == 0 || gpus % plan.pp != 0)
    bad("pp " + std::to_string(plan.pp) + " does not divide the " + std::to_string(gpus) + " ranks",
        head.file, kNoNode, "GlobalMetadata " + std::string(kPp));
  plan.tp = ours ? meta_u32(head, kTp).value_or(1) : 1;
  plan.cp = ours ? meta_u32(head, kCp).value_or(1) : 1;
  plan.ep = ours ? meta_u32(head, kEp).value_or(1) : 1;
  plan.dp = ours ? meta_u32(head, kDp).value_or(gpus / plan.pp) : gpus / plan.pp;
  plan.microbatches = ours ? meta_u32(head, kMicrobatches).value_or(1) : 1;
  // A foreign trace does not say its batch: samples/s is unknown (NaN).
  const double unknown = std::numeric_limits<double>::quiet_NaN();
  plan.global_batch = ours ? meta_f64(head, kGlobalBatch).value_or(unknown) : unknown;
  plan.memory_per_gpu_bytes = ours ? meta_f64(head, kMemory).value_or(0) : 0;
  plan.strategy.dp = plan.dp;
  plan.strategy.tp = plan.tp;
  plan.strategy.pp = plan.pp;
  plan.strategy.cp = plan.cp;
  plan.strategy.ep = plan.ep;
  plan.strategy.microbatches = plan.microbatches;
  return plan;
}

}  // namespace toposweep::interop
