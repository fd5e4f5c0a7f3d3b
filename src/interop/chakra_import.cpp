// Reads a directory of Chakra execution traces (one per rank) back into an iteration plan.
#include <algorithm>
#include <array>
#include <deque>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <queue>
#include <regex>
#include <span>
#include <unordered_map>
#include <unordered_set>

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

// Every attribute name the importer looks up, interned first so that its id is its place here.
constexpr std::array kKnownNames{
    kIsCpuOp,  kNumOps,       kCommType,    kCommSize, kCommSrc, kCommDst,    kCommTag, kPgName,
    kDuration, kFlops,        kBytes,       kRepeat,   kStream,  kPhase,      kPurpose, kStage,
    kLayer,    kMicrobatch,   kLabel,       kMutable,  kAxis,    kRemoteDeps, kRank,    kGpus,
    kStreams,  kLabels,       kGlobalBatch, kMemory,   kDp,      kTp,         kPp,      kCp,
    kEp,       kMicrobatches, kSmShare,     kEtp,      kDedup};

// An attribute name as looked up: its interned id (fixed at compile time) and its text.
struct Key {
  std::uint32_t id;
  std::string_view name;
  consteval Key(std::string_view n) : id(0), name(n) {  // NOLINT: implicit on purpose
    while (kKnownNames[id] != n) ++id;                  // not a known name: not a constant expression
  }
};

// Interned strings: attribute names, node names, string values (a job's ranks repeat them).
class Strings {
 public:
  Strings() {
    for (std::string_view n : kKnownNames) intern(n);
  }
  std::uint32_t intern(std::string_view s) {
    const auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(pool_.size());
    ids_.emplace(pool_.emplace_back(s), id);
    return id;
  }
  // The same, trying `hint` first (the id this place held last time) and leaving the id there.
  std::uint32_t intern(std::string_view s, std::uint32_t& hint) {
    if (pool_[hint] != s) hint = intern(s);
    return hint;
  }
  const std::string& operator[](std::uint32_t id) const { return pool_[id]; }

 private:
  std::deque<std::string> pool_;  // stable addresses: ids_ views them
  std::unordered_map<std::string_view, std::uint32_t> ids_;
};

// One attribute as read: its interned name, which value it holds, the value (lists and strings
// live in the trace's pools).
struct Attr {
  std::uint32_t name = 0;
  pb::AttributeProto::ValueCase kind = pb::AttributeProto::VALUE_NOT_SET;
  union {
    double f64;
    std::int64_t i64;
    std::uint64_t u64;
    std::uint32_t str;      // interned string
    std::uint32_t list[2];  // begin and size in the trace's u64s or strs
  } v = {.u64 = 0};
};

// One node as read: what the rest of the importer uses of a pb::Node.
struct NodeRec {
  std::uint64_t id = 0;
  std::uint64_t duration_micros = 0;
  pb::NodeType type = pb::INVALID_NODE;
  std::uint32_t name = 0;                                                      // interned
  std::uint32_t attrs = 0, attr_count = 0;                                     // in the trace's attrs
  std::uint32_t data_deps = 0, data_count = 0, ctrl_deps = 0, ctrl_count = 0;  // in u64s
};

struct RankTrace {
  fs::path file;
  const Strings* strings = nullptr;
  std::uint32_t meta_attrs = 0, meta_count = 0;  // the GlobalMetadata's, in attrs
  std::vector<NodeRec> nodes;
  std::vector<Attr> attrs;
  std::vector<std::uint64_t> u64s;
  std::vector<std::uint32_t> strs;
  std::vector<std::uint64_t> ids;  // the nodes' ids, sorted

  std::span<const Attr> meta_attr() const { return {attrs.data() + meta_attrs, meta_count}; }
  std::span<const Attr> attr(const NodeRec& n) const { return {attrs.data() + n.attrs, n.attr_count}; }
  std::span<const std::uint64_t> data_deps(const NodeRec& n) const {
    return {u64s.data() + n.data_deps, n.data_count};
  }
  std::span<const std::uint64_t> ctrl_deps(const NodeRec& n) const {
    return {u64s.data() + n.ctrl_deps, n.ctrl_count};
  }
  std::span<const std::uint64_t> u64_list(const Attr& a) const {
    return {u64s.data() + a.v.list[0], a.v.list[1]};
  }
  bool holds(std::uint64_t id) const { return std::binary_search(ids.begin(), ids.end(), id); }
};

// The ids of the strings met at each place of the last message of a kind (the nodes of one type
// list their attributes in one order, often with the same names and values).
struct Hints {
  std::uint32_t name = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> attrs;  // name, string value
};

// Copies a message's attributes into the trace (names and strings interned).
void add_attrs(const google::protobuf::RepeatedPtrField<pb::AttributeProto>& in, RankTrace& r,
               Strings& strings, Hints& hints) {
  if (hints.attrs.size() < static_cast<std::size_t>(in.size())) hints.attrs.resize(in.size(), {0, 0});
  std::size_t at = 0;
  for (const pb::AttributeProto& a : in) {
    Attr& x = r.attrs.emplace_back();
    const std::string& name = a.name();
    auto& [name_hint, value_hint] = hints.attrs[at++];
    x.name = strings.intern(name, name_hint);
    x.kind = a.value_case();
    switch (x.kind) {
      case pb::AttributeProto::kDoubleVal:
        x.v.f64 = a.double_val();
        break;
      case pb::AttributeProto::kInt32Val:
        x.v.i64 = a.int32_val();
        break;
      case pb::AttributeProto::kInt64Val:
        x.v.i64 = a.int64_val();
        break;
      case pb::AttributeProto::kUint32Val:
        x.v.u64 = a.uint32_val();
        break;
      case pb::AttributeProto::kUint64Val:
        x.v.u64 = a.uint64_val();
        break;
      case pb::AttributeProto::kBoolVal:
        x.v.u64 = a.bool_val() ? 1 : 0;
        break;
      case pb::AttributeProto::kStringVal:
        x.v.str = strings.intern(a.string_val(), value_hint);
        break;
      case pb::AttributeProto::kUint64List:
        x.v.list[0] = static_cast<std::uint32_t>(r.u64s.size());
        x.v.list[1] = static_cast<std::uint32_t>(a.uint64_list().values_size());
        r.u64s.insert(r.u64s.end(), a.uint64_list().values().begin(), a.uint64_list().values().end());
        break;
      case pb::AttributeProto::kStringList:
        x.v.list[0] = static_cast<std::uint32_t>(r.strs.size());
        x.v.list[1] = static_cast<std::uint32_t>(a.string_list().values_size());
        for (const std::string& s : a.string_list().values()) r.strs.push_back(strings.intern(s));
        break;
      default:
        break;
    }
  }
}

// What reading one job's files reuses from file to file.
struct Reader {
  Strings strings;
  pb::Node node;                           // parsed into, message after message
  std::unordered_set<std::uint64_t> seen;  // the node ids of the file
  std::array<Hints, 8> hints;              // by node type
};

// The messages of one file: varint length, message, ... (Chakra's protolib decodeMessage). Each
// message is parsed into the reader's pb::Node and copied out: only what the importer reads is kept.
RankTrace read_trace(const fs::path& file, Reader& reader) {
  Strings& strings = reader.strings;
  RankTrace r;
  r.file = file;
  r.strings = &strings;
  std::ifstream f(file, std::ios::binary);
  if (!f) bad("cannot read the trace file", file, kNoNode, "");
  std::string data;
  std::error_code ec;
  if (const auto size = fs::file_size(file, ec); !ec) data.reserve(size);
  char chunk[1 << 16];
  while (f.read(chunk, sizeof chunk) || f.gcount() > 0)
    data.append(chunk, static_cast<std::size_t>(f.gcount()));
  std::size_t pos = 0;
  bool first = true;
  pb::Node& n = reader.node;
  std::unordered_set<std::uint64_t>& seen = reader.seen;
  seen.clear();
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
    const auto which = [&] {
      return first
                 ? std::string("the GlobalMetadata")
                 : "the message after node " + std::to_string(r.nodes.empty() ? kNoNode : r.nodes.back().id);
    };
    if (!done)
      bad("bad varint length prefix at byte " + std::to_string(at) + " (" + which() + ")", file, kNoNode,
          "length prefix");
    if (len > data.size() - pos)
      bad("message at byte " + std::to_string(at) + " (" + which() + ") claims " + std::to_string(len) +
              " bytes but only " + std::to_string(data.size() - pos) + " remain",
          file, kNoNode, "length prefix");
    const char* body = data.data() + pos;
    pos += len;
    if (first) {
      pb::GlobalMetadata meta;
      if (!meta.ParseFromArray(body, static_cast<int>(len)))
        bad("the GlobalMetadata message does not parse", file, kNoNode, "GlobalMetadata");
      r.meta_attrs = static_cast<std::uint32_t>(r.attrs.size());
      Hints meta_hints;
      add_attrs(meta.attr(), r, strings, meta_hints);
      r.meta_count = static_cast<std::uint32_t>(r.attrs.size()) - r.meta_attrs;
      first = false;
      continue;
    }
    if (!n.ParseFromArray(body, static_cast<int>(len)))
      bad("a Node message at byte " + std::to_string(at) + " (" + which() + ") does not parse", file, kNoNode,
          "Node");
    if (!seen.insert(n.id()).second) bad("duplicate node id", file, n.id(), "id");
    NodeRec& x = r.nodes.emplace_back();
    x.id = n.id();
    x.duration_micros = n.duration_micros();
    x.type = n.type();
    Hints& h = reader.hints[x.type >= 0 && x.type < 8 ? x.type : 0];
    x.name = strings.intern(n.name(), h.name);
    x.attrs = static_cast<std::uint32_t>(r.attrs.size());
    add_attrs(n.attr(), r, strings, h);
    x.attr_count = static_cast<std::uint32_t>(r.attrs.size()) - x.attrs;
    x.data_deps = static_cast<std::uint32_t>(r.u64s.size());
    x.data_count = static_cast<std::uint32_t>(n.data_deps_size());
    r.u64s.insert(r.u64s.end(), n.data_deps().begin(), n.data_deps().end());
    x.ctrl_deps = static_cast<std::uint32_t>(r.u64s.size());
    x.ctrl_count = static_cast<std::uint32_t>(n.ctrl_deps_size());
    r.u64s.insert(r.u64s.end(), n.ctrl_deps().begin(), n.ctrl_deps().end());
  }
  if (first) bad("empty trace: no GlobalMetadata", file, kNoNode, "GlobalMetadata");
  r.ids.reserve(r.nodes.size());
  for (const NodeRec& x : r.nodes) r.ids.push_back(x.id);
  std::sort(r.ids.begin(), r.ids.end());
  r.nodes.shrink_to_fit();
  r.attrs.shrink_to_fit();
  r.u64s.shrink_to_fit();
  r.strs.shrink_to_fit();
  return r;
}

const Attr* find_attr(std::span<const Attr> attrs, Key name) {
  for (const Attr& a : attrs)
    if (a.name == name.id) return &a;
  return nullptr;
}

// A typed attribute: absent -> nullopt; present with another type -> BadInput.
struct NodeView {
  const RankTrace& trace;
  const NodeRec& node;

  const Attr* get(Key name, pb::AttributeProto::ValueCase want) const {
    const Attr* a = find_attr(trace.attr(node), name);
    if (a && a->kind != want) bad("attribute of an unexpected type", trace.file, node.id, name.name);
    return a;
  }
  std::optional<std::int64_t> i64(Key name) const {
    const auto* a = get(name, pb::AttributeProto::kInt64Val);
    return a ? std::optional<std::int64_t>(a->v.i64) : std::nullopt;
  }
  std::optional<std::int32_t> i32(Key name) const {
    const auto* a = get(name, pb::AttributeProto::kInt32Val);
    return a ? std::optional<std::int32_t>(static_cast<std::int32_t>(a->v.i64)) : std::nullopt;
  }
  std::optional<std::uint32_t> u32(Key name) const {
    const auto* a = get(name, pb::AttributeProto::kUint32Val);
    return a ? std::optional<std::uint32_t>(static_cast<std::uint32_t>(a->v.u64)) : std::nullopt;
  }
  std::optional<double> f64(Key name) const {
    const auto* a = get(name, pb::AttributeProto::kDoubleVal);
    return a ? std::optional<double>(a->v.f64) : std::nullopt;
  }
  std::optional<bool> boolean(Key name) const {
    const auto* a = get(name, pb::AttributeProto::kBoolVal);
    return a ? std::optional<bool>(a->v.u64 != 0) : std::nullopt;
  }
  std::optional<std::string> str(Key name) const {
    const auto* a = get(name, pb::AttributeProto::kStringVal);
    return a ? std::optional<std::string>((*trace.strings)[a->v.str]) : std::nullopt;
  }
  [[noreturn]] void fail(const std::string& what, std::string_view field) const {
    bad(what, trace.file, node.id, field);
  }
};

std::optional<std::uint32_t> meta_u32(const RankTrace& t, Key name) {
  const Attr* a = find_attr(t.meta_attr(), name);
  if (!a) return std::nullopt;
  if (a->kind != pb::AttributeProto::kUint32Val)
    bad("attribute of an unexpected type", t.file, kNoNode, "GlobalMetadata " + std::string(name.name));
  return static_cast<std::uint32_t>(a->v.u64);
}
std::optional<double> meta_f64(const RankTrace& t, Key name) {
  const Attr* a = find_attr(t.meta_attr(), name);
  if (!a) return std::nullopt;
  if (a->kind != pb::AttributeProto::kDoubleVal)
    bad("attribute of an unexpected type", t.file, kNoNode, "GlobalMetadata " + std::string(name.name));
  return a->v.f64;
}
std::optional<std::vector<std::string>> meta_strings(const RankTrace& t, Key name) {
  const Attr* a = find_attr(t.meta_attr(), name);
  if (!a) return std::nullopt;
  if (a->kind != pb::AttributeProto::kStringList)
    bad("attribute of an unexpected type", t.file, kNoNode, "GlobalMetadata " + std::string(name.name));
  std::vector<std::string> out;
  for (std::uint32_t i = 0; i < a->v.list[1]; ++i) out.push_back((*t.strings)[t.strs[a->v.list[0] + i]]);
  return out;
}

enum class NodeClass { Compute, Collective, Transfer };

NodeClass class_of(const NodeView& v) {
  switch (v.node.type) {
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
      v.fail("node type " + std::to_string(static_cast<int>(v.node.type)) + " is not one toposweep can play",
             "type");
  }
}

// pg_names order numerically when they are numbers (toposweep's and PyTorch's), else as text.
struct PgLess {
  static std::uint64_t value(const std::string& digits) {  // fewer than 19: no overflow
    std::uint64_t v = 0;
    for (const char c : digits) v = v * 10 + static_cast<std::uint64_t>(c - '0');
    return v;
  }
  bool operator()(const std::string& a, const std::string& b) const {
    const bool na = !a.empty() && a.size() < 19 && std::all_of(a.begin(), a.end(), ::isdigit);
    const bool nb = !b.empty() && b.size() < 19 && std::all_of(b.begin(), b.end(), ::isdigit);
    if (na != nb) return na;
    if (na) return value(a) < value(b);
    return a < b;
  }
};

// One operation over all ranks: the rank files holding it.
struct Merged {
  NodeClass cls = NodeClass::Compute;
  std::vector<std::pair<std::uint32_t, const NodeRec*>> holders;
};

}  // namespace

IterationPlan read_chakra(const fs::path& dir, std::uint32_t replicas) {
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
  const bool replicated = replicas > 1;
  if (replicated && (by_rank.size() != 1 || !by_rank.count(0)))
    throw BadInput("model.chakra_replicas plays one rank's trace on several ranks, but '" + dir.string() +
                       "' holds " + std::to_string(by_rank.size()) +
                       " rank files (keep rank 0's, or leave model.chakra_replicas at 1)",
                   "key model.chakra_replicas");
  const auto gpus = replicated ? replicas : static_cast<std::uint32_t>(by_rank.size());
  for (std::uint32_t r = 0; r < (replicated ? 1 : gpus); ++r)
    if (!by_rank.count(r))
      throw BadInput("rank " + std::to_string(r) + "'s file " + prefix + "." + std::to_string(r) +
                         ".et is missing (ranks run 0.." + std::to_string(gpus - 1) + ")",
                     "chakra trace " + dir.string());

  std::vector<RankTrace> traces;
  Reader reader;
  const Strings& strings = reader.strings;
  traces.reserve(gpus);
  for (const auto& [rank, path] : by_rank) traces.push_back(read_trace(path, reader));
  while (traces.size() < gpus) traces.push_back(traces.front());  // replicas: rank 0's trace on each

  // Communicator groups, when the directory has ASTRA-sim's file: their ring order.
  std::map<std::string, std::vector<std::uint32_t>, PgLess> comm_groups;
  const fs::path groups_file = dir / (prefix + std::string(kCommGroupsSuffix));
  if (!replicated && fs::exists(groups_file, ec)) {
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
  const bool ours = find_attr(head.meta_attr(), kGpus) != nullptr;
  // A replicated trace's rank and GPU count describe the job it was cut from, not this one.
  if (ours && !replicated && *meta_u32(head, kGpus) != gpus)
    bad("the traces were written for " + std::to_string(*meta_u32(head, kGpus)) +
            " ranks but the directory holds " + std::to_string(gpus),
        head.file, kNoNode, "GlobalMetadata " + std::string(kGpus));
  if (ours && !replicated)
    for (std::uint32_t r = 0; r < gpus; ++r)
      if (const auto written = meta_u32(traces[r], kRank); written && *written != r)
        bad("the file of rank " + std::to_string(r) + " holds rank " + std::to_string(*written) + "'s trace",
            traces[r].file, kNoNode, "GlobalMetadata " + std::string(kRank));

  // Merge the ranks' nodes by id, checking each file's references.
  std::map<std::uint64_t, Merged> merged;
  for (std::uint32_t rank = 0; rank < gpus; ++rank) {
    const RankTrace& tr = traces[rank];
    for (const NodeRec& n : tr.nodes) {
      const NodeView v{tr, n};
      const NodeClass cls = class_of(v);
      if (replicated && cls == NodeClass::Transfer)
        v.fail(
            "a point-to-point send or receive cannot be replicated over data-parallel ranks "
            "(model.chakra_replicas)",
            "type");
      for (std::uint64_t d : tr.data_deps(n))
        if (!tr.holds(d))
          v.fail("depends on node " + std::to_string(d) + ", which is not in this file", "data_deps");
      // Control dependencies order nodes but are not dependencies here (nor in Chakra's feeder):
      // toposweep writes them for stream order, which its stream attribute restores, always on
      // nodes of the same file (checked); Chakra's PyTorch converter also writes them for
      // parents it left out and for a node itself (not checked).
      if (ours)
        for (std::uint64_t d : tr.ctrl_deps(n))
          if (!tr.holds(d))
            v.fail("depends on node " + std::to_string(d) + ", which is not in this file", "ctrl_deps");
      auto [it, fresh] = merged.try_emplace(n.id);
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
    std::vector<std::uint64_t> d;
    for (const auto& [rank, node] : m.holders) {
      const NodeView v{traces[rank], *node};
      const auto data = traces[rank].data_deps(*node);
      bool self = std::find(data.begin(), data.end(), id) != data.end();
      d.insert(d.end(), data.begin(), data.end());
      if (const auto* remote = v.get(kRemoteDeps, pb::AttributeProto::kUint64List))
        for (std::uint64_t r : traces[rank].u64_list(*remote)) {
          if (!merged.count(r))
            v.fail("depends on node " + std::to_string(r) + ", which no rank's file holds", kRemoteDeps);
          self = self || r == id;
          d.push_back(r);
        }
      if (self) v.fail("depends on itself", "data_deps");
    }
    std::sort(d.begin(), d.end());
    deps_of[id].assign(d.begin(), std::unique(d.begin(), d.end()));
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
    } else if (const std::string& name = strings[node0->name]; !ours && !name.empty()) {
      auto [it, fresh] = label_ids.try_emplace(name, 0);
      if (fresh) it->second = g.add_label(name);
      t.label = it->second;
    }

    if (m.cls == NodeClass::Compute) {
      // The slowest rank's time stands for all (a toposweep trace records one time for all).
      for (const auto& [rank, node] : m.holders) {
        const NodeView v{traces[rank], *node};
        const double d =
            v.f64(kDuration).value_or(static_cast<double>(node->duration_micros) * 1e-6 / t.repeat);
        const double f = v.f64(kFlops).value_or(static_cast<double>(v.i64(kNumOps).value_or(0)) / t.repeat);
        if (!(d >= 0)) v.fail("negative duration", kDuration);
        t.duration_s = std::max(t.duration_s, d);
        t.flops = std::max(t.flops, f);
        const double share = v.f64(kSmShare).value_or(0);
        if (!(share >= 0 && share < 1)) v.fail("SM share outside [0, 1)", kSmShare);
        t.sm_share = std::max(t.sm_share, share);
      }
    } else {
      t.purpose = static_cast<CommPurpose>(
          std::min<std::uint32_t>(v0.u32(kPurpose).value_or(static_cast<std::uint32_t>(CommPurpose::Other)),
                                  static_cast<std::uint32_t>(CommPurpose::Other)));
      t.is_mutable = v0.boolean(kMutable).value_or(false);
      if (const auto* dedup = v0.get(kDedup, pb::AttributeProto::kUint64List)) {
        const auto x = v0.trace.u64_list(*dedup);
        if (x.size() != 4 || x[0] == 0 || x[0] > x[1] || x[1] > 65535 || x[2] > x[1] || x[3] > x[2])
          v0.fail(
              "expected [top_k, experts, groups, group_topk] with 0 < top_k <= experts < 65536 and "
              "group_topk <= groups <= experts",
              kDedup);
        t.dedup = {static_cast<std::uint16_t>(x[0]), static_cast<std::uint16_t>(x[1]),
                   static_cast<std::uint16_t>(x[2]), static_cast<std::uint16_t>(x[3])};
      }
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
          if (node->type != pb::COMM_RECV_NODE) continue;
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
          if (node->type != pb::COMM_SEND_NODE) continue;
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
            if (node->type == pb::COMM_RECV_NODE &&
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
  // A replicated trace: data parallelism over the replicas, whatever the job it was cut from ran.
  const bool layout = ours && !replicated;
  plan.pp = layout ? meta_u32(head, kPp).value_or(max_stage + 1) : replicated ? 1 : max_stage + 1;
  if (plan.pp == 0 || gpus % plan.pp != 0)
    bad("pp " + std::to_string(plan.pp) + " does not divide the " + std::to_string(gpus) + " ranks",
        head.file, kNoNode, "GlobalMetadata " + std::string(kPp));
  plan.tp = layout ? meta_u32(head, kTp).value_or(1) : 1;
  plan.cp = layout ? meta_u32(head, kCp).value_or(1) : 1;
  plan.ep = layout ? meta_u32(head, kEp).value_or(1) : 1;
  plan.dp = layout ? meta_u32(head, kDp).value_or(gpus / plan.pp) : gpus / plan.pp;
  plan.microbatches = ours ? meta_u32(head, kMicrobatches).value_or(1) : 1;
  // A foreign trace does not say its batch: samples/s is unknown (NaN). A replicated toposweep
  // trace: its ranks' share of the batch on each replica.
  const double unknown = std::numeric_limits<double>::quiet_NaN();
  plan.global_batch = !ours        ? unknown
                      : replicated ? meta_f64(head, kGlobalBatch).value_or(unknown) /
                                         static_cast<double>(meta_u32(head, kDp).value_or(1)) * gpus
                                   : meta_f64(head, kGlobalBatch).value_or(unknown);
  plan.memory_per_gpu_bytes = ours ? meta_f64(head, kMemory).value_or(0) : 0;
  plan.strategy.dp = plan.dp;
  plan.strategy.tp = plan.tp;
  plan.strategy.pp = plan.pp;
  plan.strategy.cp = plan.cp;
  plan.strategy.ep = plan.ep;
  plan.strategy.etp = layout ? meta_u32(head, kEtp).value_or(0) : 0;
  plan.strategy.microbatches = plan.microbatches;
  return plan;
}

}  // namespace toposweep::interop
