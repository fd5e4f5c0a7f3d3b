// `toposweep topology` end to end, when the binary has been built (skipped otherwise):
// exit codes, JSON on stdout only, --out round trip, and no file touched on bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

namespace {

struct CommandRun {
  int status = -1;
  std::string out;
};

CommandRun run_topology(const std::string& args) {
  const std::string cmd = std::string(TOPOSWEEP_BINARY) + " topology " + args + " 2>/dev/null";
  CommandRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

class TopologyCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(TOPOSWEEP_BINARY)) GTEST_SKIP() << "toposweep binary not built";
    dir_ = ::testing::TempDir() + "/topo_cmd_" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string dir_;
};

TEST_F(TopologyCommand, JsonAndFileRoundTrip) {
  const std::string file = dir_ + "/net.topo";
  const CommandRun a = run_topology(
      "--set topology.kind=topoopt --set topology.servers=24 --set topology.degree=6 --json --edges --out " +
      file);
  ASSERT_EQ(a.status, 0);
  const auto ja = nlohmann::json::parse(a.out);  // stdout is exactly one JSON object
  EXPECT_EQ(ja.at("kind"), "topoopt");
  EXPECT_EQ(ja.at("servers"), 24);
  EXPECT_EQ(ja.at("links"), 144);
  const CommandRun b = run_topology("--set topology.kind=file --set topology.file=" + file +
                                    " --set topology.optical=patch_panel --json --edges");
  ASSERT_EQ(b.status, 0);
  const auto jb = nlohmann::json::parse(b.out);
  EXPECT_EQ(jb.at("edges"), ja.at("edges"));
  EXPECT_EQ(jb.at("diameter"), ja.at("diameter"));
  EXPECT_EQ(jb.at("mean_hops"), ja.at("mean_hops"));
  EXPECT_EQ(jb.at("cost_usd"), ja.at("cost_usd"));
}

TEST_F(TopologyCommand, DragonflyRoutingOnAnotherFamilyExitsTwoNamingTheKey) {
  // topology.routing = valiant belongs to the dragonfly; on a fat-tree it is bad input, and the
  // message (stderr) names the key.
  const std::string cmd = std::string(TOPOSWEEP_BINARY) +
                          " topology --set topology.kind=fattree --set topology.servers=16"
                          " --set topology.routing=valiant 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int st = pclose(p);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 2) << out;
  EXPECT_THAT(out, ::testing::HasSubstr("toposweep: error:"));
  EXPECT_THAT(out, ::testing::HasSubstr("topology.routing"));
  const CommandRun ok = run_topology("--set topology.kind=dragonfly --set topology.routing=valiant --json");
  EXPECT_EQ(ok.status, 0);
}

TEST_F(TopologyCommand, BadInputExitsTwoAndLeavesOutputAlone) {
  const std::string file = dir_ + "/keep.txt";
  { std::ofstream(file) << "keep\n"; }
  for (const std::string& bad : std::vector<std::string>{
           "--set topology.kind=topoopt --set topology.servers=8 --set topology.degree=8",
           "--set topology.kind=topoopt --set topology.degree=3",
           "--set topology.kind=topoopt --set topology.strides=0",
           "--set topology.kind=multidim --set topology.dims=ring:4,fc:1",
           "--set topology.kind=multidim --set topology.dims=ring:4 --set topology.servers=3",
           "--set topology.kind=switch --set topology.link_bandwidth=0Gbps",
           "--set topology.kind=file --set topology.file=" + dir_ + "/missing.topo"}) {
    const CommandRun r = run_topology(bad + " --out " + file);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_EQ(r.out, "") << bad;
    std::ifstream in(file);
    std::stringstream content;
    content << in.rdbuf();
    EXPECT_EQ(content.str(), "keep\n") << bad;
  }
}

}  // namespace
