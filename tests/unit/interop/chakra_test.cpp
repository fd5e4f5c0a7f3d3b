// Chakra traces: a plan written and read back is the same task graph; hand-written traces read
// as their nodes say; malformed traces are BadInput naming the file, node and field.
#include "toposweep/interop/chakra.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "chakra_et.pb.h"
#include "toposweep/util/config.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/workload/config_keys.hpp"
#include "toposweep/workload/iteration.hpp"

namespace toposweep {
namespace {

namespace fs = std::filesystem;
namespace pb = ChakraProtoMsg;

IterationPlan plan_of(const std::vector<std::string>& sets, std::uint32_t gpus) {
  Config c;
  for (const auto& s : sets) apply_set(c, s);
  validate_and_default(c, KeyRegistry(workload::config_keys()));
  return plan_iteration_from_config(c, gpus);
}

fs::path fresh_dir(const std::string& name) {
  const fs::path d =
      fs::temp_directory_path() / ("toposweep_chakra_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void expect_same_graph(const TaskGraph& a, const TaskGraph& b) {
  ASSERT_EQ(a.gpus, b.gpus);
  ASSERT_EQ(a.tasks.size(), b.tasks.size());
  EXPECT_EQ(a.stream_names, b.stream_names);
  for (TaskId i = 0; i < a.tasks.size(); ++i) {
    const Task& x = a.tasks[i];
    const Task& y = b.tasks[i];
    SCOPED_TRACE("task " + std::to_string(i));
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.phase, y.phase);
    EXPECT_EQ(x.stream, y.stream);
    EXPECT_EQ(x.stage, y.stage);
    EXPECT_EQ(x.layer, y.layer);
    EXPECT_EQ(x.microbatch, y.microbatch);
    EXPECT_EQ(x.repeat, y.repeat);
    EXPECT_EQ(a.labels[x.label], b.labels[y.label]);
    // Bit for bit: the durations, FLOPs and bytes travel as doubles.
    EXPECT_EQ(x.duration_s, y.duration_s);
    EXPECT_EQ(x.flops, y.flops);
    EXPECT_EQ(x.sm_share, y.sm_share);
    const auto dx = a.deps_of(i), dy = b.deps_of(i);
    EXPECT_EQ(std::set<TaskId>(dx.begin(), dx.end()), std::set<TaskId>(dy.begin(), dy.end()));
    if (x.kind == TaskKind::Compute) continue;
    EXPECT_EQ(x.purpose, y.purpose);
    EXPECT_EQ(x.op, y.op);
    EXPECT_EQ(x.is_mutable, y.is_mutable);
    EXPECT_EQ(x.dedup, y.dedup);
    EXPECT_EQ(x.bytes, y.bytes);
    EXPECT_EQ(a.group_sets[x.group_set].groups, b.group_sets[y.group_set].groups);
    EXPECT_EQ(a.group_sets[x.group_set].axis, b.group_sets[y.group_set].axis);
  }
}

struct Case {
  const char* name;
  std::vector<std::string> sets;
  std::uint32_t gpus;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class ChakraRoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(ChakraRoundTrip, SameTaskGraph) {
  const Case& c = GetParam();
  const IterationPlan plan = plan_of(c.sets, c.gpus);
  const fs::path dir = fresh_dir(c.name);
  const interop::ChakraExport out = interop::write_chakra(plan, dir, "job");
  EXPECT_EQ(out.ranks, c.gpus);
  EXPECT_EQ(out.files.size(), c.gpus);
  EXPECT_TRUE(fs::exists(dir / "job.comm_groups.json"));
  const IterationPlan back = interop::read_chakra(dir);
  expect_same_graph(plan.graph, back.graph);
  EXPECT_EQ(back.dp, plan.dp);
  EXPECT_EQ(back.tp, plan.tp);
  EXPECT_EQ(back.pp, plan.pp);
  EXPECT_EQ(back.ep, plan.ep);
  EXPECT_EQ(back.strategy.etp, plan.strategy.etp);
  EXPECT_EQ(back.global_batch, plan.global_batch);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Plans, ChakraRoundTrip,
    ::testing::Values(
        Case{"dense",
             {"model.name=gpt3-125m", "strategy.tp=2", "strategy.pp=2", "strategy.microbatches=4",
              "model.global_batch=16"},
             8},
        Case{"interleaved",
             {"model.name=gpt3-125m", "strategy.pp=4", "strategy.schedule=interleaved",
              "strategy.virtual_stages=3", "strategy.microbatches=8", "model.global_batch=16"},
             8},
        Case{"zero3",
             {"model.name=gpt3-350m", "strategy.tp=2", "strategy.zero=3", "model.global_batch=32"},
             8},
        Case{
            "moe",
            {"model.name=mixtral-8x7b", "model.seq_len=1024", "model.global_batch=32", "server.device=h100",
             "strategy.tp=2", "strategy.pp=4", "strategy.ep=2", "strategy.microbatches=4", "strategy.zero=1"},
            32},
        Case{"moe_overlap",
             {"model.name=mixtral-8x7b", "model.seq_len=1024", "model.global_batch=32", "server.device=h100",
              "strategy.tp=2", "strategy.pp=4", "strategy.ep=2", "strategy.microbatches=4", "strategy.zero=1",
              "strategy.ep_overlap=true"},
             32},
        Case{"moe_folded",
             {"model.name=mixtral-8x7b", "model.seq_len=1024", "model.global_batch=32", "server.device=h100",
              "strategy.tp=2", "strategy.pp=4", "strategy.ep=8", "strategy.etp=1",
              "strategy.sequence_parallel=true", "strategy.microbatches=4", "strategy.zero=1"},
             32},
        // DeepEP's dispatch with group-limited routing: the All-to-Alls carry Task::dedup.
        Case{"moe_deepep",
             {"model.name=mixtral-8x7b", "model.seq_len=1024", "model.global_batch=32", "server.device=h100",
              "strategy.tp=4", "strategy.ep=8", "strategy.microbatches=4", "strategy.zero=1",
              "strategy.ep_dispatcher=deepep", "model.moe_router_groups=4", "model.moe_router_group_topk=2"},
             32}),
    [](const auto& info) { return std::string(info.param.name); });

// Each rank's file holds the nodes that rank runs: with pp = 2 over 8 ranks, ranks 0-3 hold
// stage 0's compute and ranks 4-7 stage 1's; a stage-0-to-1 transfer is a send on 0-3 and a
// receive on 4-7, matched by comm_src/comm_dst.
TEST(ChakraExport, NodesPerRank) {
  const IterationPlan plan = plan_of({"model.name=gpt3-125m", "strategy.tp=2", "strategy.pp=2",
                                      "strategy.microbatches=2", "model.global_batch=8"},
                                     8);
  const fs::path dir = fresh_dir("per_rank");
  interop::write_chakra(plan, dir, "p");
  TaskId send = 0;
  while (plan.graph.tasks[send].kind != TaskKind::Transfer) ++send;
  const auto& pairs = plan.graph.group_sets[plan.graph.tasks[send].group_set].groups;
  for (std::uint32_t rank = 0; rank < 8; ++rank) {
    std::ifstream f(dir / ("p." + std::to_string(rank) + ".et"), std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(data.data()),
                                              static_cast<int>(data.size()));
    std::uint32_t len = 0;
    ASSERT_TRUE(in.ReadVarint32(&len));
    auto limit = in.PushLimit(static_cast<int>(len));
    pb::GlobalMetadata meta;
    ASSERT_TRUE(meta.ParseFromCodedStream(&in));
    in.PopLimit(limit);
    EXPECT_EQ(meta.version(), "0.0.4");
    std::size_t compute = 0, wrong_stage = 0;
    bool saw_send = false;
    while (in.ReadVarint32(&len)) {
      limit = in.PushLimit(static_cast<int>(len));
      pb::Node n;
      ASSERT_TRUE(n.ParseFromCodedStream(&in));
      in.PopLimit(limit);
      const Task& t = plan.graph.tasks[n.id()];
      if (n.type() == pb::COMP_NODE) {
        ++compute;
        if (t.stage != rank / 4) ++wrong_stage;
        EXPECT_EQ(n.duration_micros(),
                  static_cast<std::uint64_t>(std::llround(t.duration_s * t.repeat * 1e6)));
      }
      if (n.id() == send) {
        saw_send = true;
        EXPECT_EQ(n.type(), rank < 4 ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
        std::int32_t src = -1, dst = -1;
        for (const auto& a : n.attr()) {
          if (a.name() == "comm_src") src = a.int32_val();
          if (a.name() == "comm_dst") dst = a.int32_val();
        }
        EXPECT_EQ(rank < 4 ? src : dst, static_cast<std::int32_t>(rank));
        EXPECT_EQ(src + 4, dst);  // rank r of stage 0 sends to r + 4
      }
    }
    EXPECT_GT(compute, 0u);
    EXPECT_EQ(wrong_stage, 0u);
    EXPECT_TRUE(saw_send) << "rank " << rank;
  }
  EXPECT_EQ(pairs.size(), 4u);
  fs::remove_all(dir);
}

// ---- hand-written traces ----

void put(std::string& out, const google::protobuf::MessageLite& m) {
  const std::string body = m.SerializeAsString();
  std::uint64_t v = body.size();
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  out += body;
}

pb::Node comp(std::uint64_t id, std::uint64_t micros) {
  pb::Node n;
  n.set_id(id);
  n.set_name("gemm");
  n.set_type(pb::COMP_NODE);
  n.set_duration_micros(micros);
  auto* a = n.add_attr();
  a->set_name("num_ops");
  a->set_int64_val(1000);
  return n;
}

pb::Node allreduce(std::uint64_t id, std::int64_t type, std::int64_t bytes) {
  pb::Node n;
  n.set_id(id);
  n.set_name("allreduce");
  n.set_type(pb::COMM_COLL_NODE);
  auto* a = n.add_attr();
  a->set_name("comm_type");
  a->set_int64_val(type);
  a = n.add_attr();
  a->set_name("comm_size");
  a->set_int64_val(bytes);
  a = n.add_attr();
  a->set_name("pg_name");
  a->set_string_val("0");
  return n;
}

void write_two_ranks(const fs::path& dir, std::int64_t comm_type, std::uint64_t dep) {
  for (int rank = 0; rank < 2; ++rank) {
    std::string bytes;
    pb::GlobalMetadata meta;
    meta.set_version("0.0.4");
    put(bytes, meta);
    put(bytes, comp(1, 100));
    pb::Node ar = allreduce(2, comm_type, 100'000'000);
    ar.add_data_deps(dep);
    put(bytes, ar);
    std::ofstream(dir / ("hand." + std::to_string(rank) + ".et"), std::ios::binary) << bytes;
  }
}

TEST(ChakraImport, HandWrittenTrace) {
  const fs::path dir = fresh_dir("hand");
  write_two_ranks(dir, 0, 1);
  const IterationPlan p = interop::read_chakra(dir);
  const TaskGraph& g = p.graph;
  EXPECT_EQ(g.gpus, 2u);
  ASSERT_EQ(g.tasks.size(), 2u);
  EXPECT_EQ(g.tasks[0].kind, TaskKind::Compute);
  EXPECT_DOUBLE_EQ(g.tasks[0].duration_s, 100e-6);
  EXPECT_EQ(g.tasks[0].flops, 1000);
  EXPECT_EQ(g.tasks[1].kind, TaskKind::Collective);
  EXPECT_EQ(g.tasks[1].op, CollectiveOp::AllReduce);
  EXPECT_EQ(g.tasks[1].bytes, 1e8);
  EXPECT_EQ(g.group_sets[g.tasks[1].group_set].groups, (std::vector<std::vector<std::uint32_t>>{{0, 1}}));
  ASSERT_EQ(g.deps_of(1).size(), 1u);
  EXPECT_EQ(g.deps_of(1)[0], 0u);
  EXPECT_EQ(p.pp, 1u);
  EXPECT_EQ(p.dp, 2u);
  fs::remove_all(dir);
}

// The error's where() names the file, the node and the field.
void expect_bad(const fs::path& dir, const std::string& what_has, const std::string& where_has) {
  try {
    interop::read_chakra(dir);
    ADD_FAILURE() << "no error";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find(what_has), std::string::npos) << e.what();
    EXPECT_NE(e.where().find(where_has), std::string::npos) << e.where();
  }
}

TEST(ChakraImport, UnknownCommType) {
  const fs::path dir = fresh_dir("comm_type");
  write_two_ranks(dir, 42, 1);
  expect_bad(dir, "unknown comm_type 42", "hand.0.et, node 2, field comm_type");
  write_two_ranks(dir, 9, 1);  // BARRIER: Chakra's, not playable
  expect_bad(dir, "comm_type 9", "node 2, field comm_type");
  fs::remove_all(dir);
}

TEST(ChakraImport, MissingDependency) {
  const fs::path dir = fresh_dir("dep");
  write_two_ranks(dir, 0, 7);
  expect_bad(dir, "depends on node 7", "hand.0.et, node 2, field data_deps");
  fs::remove_all(dir);
}

TEST(ChakraImport, BadVarint) {
  const fs::path dir = fresh_dir("varint");
  write_two_ranks(dir, 0, 1);
  // Rank 1's file ends in a length prefix whose bytes all say "more follows".
  std::ofstream(dir / "hand.1.et", std::ios::binary | std::ios::app) << std::string(3, '\xff');
  expect_bad(dir, "bad varint", "hand.1.et");
  // A prefix longer than what is left.
  write_two_ranks(dir, 0, 1);
  std::ofstream(dir / "hand.1.et", std::ios::binary | std::ios::app) << std::string(1, '\x7f');
  expect_bad(dir, "claims 127 bytes", "hand.1.et, field length prefix");
  fs::remove_all(dir);
}

// What Chakra's PyTorch converter writes besides GPU kernels: CPU operators (is_cpu_op, also the
// host side of a c10d collective, without comm_type or comm_size) go on a stream of their own;
// control dependencies on a node left out, or on the node itself, are not dependencies.
TEST(ChakraImport, ConverterStyleTrace) {
  const fs::path dir = fresh_dir("converter");
  std::string bytes;
  put(bytes, pb::GlobalMetadata());
  pb::Node cpu = comp(5, 30);
  cpu.add_ctrl_deps(3);  // not in the file
  cpu.add_ctrl_deps(5);  // itself
  auto* a = cpu.add_attr();
  a->set_name("is_cpu_op");
  a->set_bool_val(true);
  put(bytes, cpu);
  pb::Node launch;
  launch.set_id(6);
  launch.set_type(pb::COMM_COLL_NODE);
  launch.set_duration_micros(20);
  a = launch.add_attr();
  a->set_name("is_cpu_op");
  a->set_bool_val(true);
  put(bytes, launch);
  pb::Node gpu = comp(7, 400);
  gpu.add_data_deps(5);
  put(bytes, gpu);
  std::ofstream(dir / "trace.0.et", std::ios::binary) << bytes;
  const TaskGraph g = interop::read_chakra(dir).graph;
  ASSERT_EQ(g.tasks.size(), 3u);
  EXPECT_EQ(g.tasks[1].kind, TaskKind::Compute);  // the host call of the collective
  EXPECT_DOUBLE_EQ(g.tasks[1].duration_s, 20e-6);
  EXPECT_EQ(g.stream_names[g.tasks[0].stream], "chakra.cpu");
  EXPECT_EQ(g.tasks[1].stream, g.tasks[0].stream);
  EXPECT_EQ(g.stream_names[g.tasks[2].stream], "chakra.compute");
  EXPECT_TRUE(g.deps_of(0).empty());
  ASSERT_EQ(g.deps_of(2).size(), 1u);
  EXPECT_EQ(g.deps_of(2)[0], 0u);
  fs::remove_all(dir);
}

// In a toposweep trace the control dependencies are its stream order, on nodes of the same file.
TEST(ChakraImport, OwnTraceControlDependencyChecked) {
  const IterationPlan plan = plan_of({"model.name=gpt3-125m", "strategy.tp=2", "model.global_batch=8"}, 2);
  const fs::path dir = fresh_dir("own_ctrl");
  interop::write_chakra(plan, dir, "own");
  std::ifstream f(dir / "own.1.et", std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  f.close();
  // Rewrite rank 1's last node with a control dependency on a node no file has.
  std::size_t pos = 0, last = 0;
  bool rewrote = false;
  while (pos < data.size()) {
    last = pos;
    std::uint64_t len = 0;
    int shift = 0;
    while (true) {
      const auto b = static_cast<unsigned char>(data[pos++]);
      len |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      shift += 7;
      if (!(b & 0x80)) break;
    }
    if (pos + len == data.size()) {
      pb::Node n;
      ASSERT_TRUE(n.ParseFromArray(data.data() + pos, static_cast<int>(len)));
      n.add_ctrl_deps(999999);
      std::string rewritten = data.substr(0, last);
      put(rewritten, n);
      std::ofstream(dir / "own.1.et", std::ios::binary | std::ios::trunc) << rewritten;
      const std::string node = "node " + std::to_string(n.id()) + ", field ctrl_deps";
      expect_bad(dir, "depends on node 999999", "own.1.et, " + node);
      rewrote = true;
      break;
    }
    pos += len;
  }
  EXPECT_TRUE(rewrote);
  fs::remove_all(dir);
}

TEST(ChakraImport, SwappedRankFiles) {
  const IterationPlan plan = plan_of({"model.name=gpt3-125m", "strategy.pp=2", "model.global_batch=8"}, 2);
  const fs::path dir = fresh_dir("swapped");
  interop::write_chakra(plan, dir, "s");
  fs::rename(dir / "s.0.et", dir / "tmp");
  fs::rename(dir / "s.1.et", dir / "s.0.et");
  fs::rename(dir / "tmp", dir / "s.1.et");
  expect_bad(dir, "the file of rank 0 holds rank 1's trace", "s.0.et, field GlobalMetadata toposweep.rank");
  fs::remove_all(dir);
}

TEST(ChakraImport, MissingRankFile) {
  const fs::path dir = fresh_dir("missing");
  write_two_ranks(dir, 0, 1);
  fs::rename(dir / "hand.1.et", dir / "hand.2.et");
  expect_bad(dir, "rank 1's file hand.1.et is missing", "chakra trace");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace toposweep
