#include "toposweep/util/runs.hpp"

#include <gtest/gtest.h>

#include "toposweep/util/error.hpp"

namespace toposweep {
namespace {

TEST(Runs, ParsesValueCountPairsInServerOrder) {
  const auto runs = parse_runs("a100*2, v100*3", "key server.device");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0], (ServerRun{"a100", 2}));
  EXPECT_EQ(runs[1], (ServerRun{"v100", 3}));
  EXPECT_EQ(expand_runs(runs, 5, "k"), (std::vector<std::string>{"a100", "a100", "v100", "v100", "v100"}));
  EXPECT_EQ(distinct_run_values(parse_runs("8*1,4*2,8*1", "k")), (std::vector<std::string>{"8", "4"}));
}

TEST(Runs, ALoneValueCoversEveryServer) {
  const auto runs = parse_runs("a100", "k");
  EXPECT_EQ(expand_runs(runs, 3, "k"), (std::vector<std::string>{"a100", "a100", "a100"}));
  // A value's own '*' count also works alone; then it must match the server count.
  EXPECT_EQ(expand_runs(parse_runs("300GB/s*3", "k"), 3, "k").size(), 3u);
}

TEST(Runs, BadListsNameTheKey) {
  auto message = [](auto f) {
    try {
      f();
    } catch (const BadInput& e) {
      return std::string(e.what()) + " (" + e.where() + ")";
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] { parse_runs("a100,v100*3", "key server.device"); }).find("needs a server count"),
            std::string::npos);
  EXPECT_NE(message([] { parse_runs("v100*0", "key server.device"); }).find("whole count >= 1"),
            std::string::npos);
  EXPECT_NE(message([] { parse_runs("v100*x", "key server.device"); }).find("whole count"),
            std::string::npos);
  EXPECT_NE(message([] { parse_runs("*4", "key server.device"); }).find("VALUE*COUNT"), std::string::npos);
  const std::string sum =
      message([] { expand_runs(parse_runs("a100*2,v100*4", "k"), 8, "key server.device"); });
  EXPECT_NE(sum.find("sum to 6 but there are 8 servers"), std::string::npos) << sum;
  EXPECT_NE(sum.find("server.device"), std::string::npos) << sum;
}

TEST(Runs, CheckAppliesTheInnerCheckToEveryValue) {
  int calls = 0;
  const KeyCheck check = checks::runs([&](const std::string& v, const std::string&) {
    ++calls;
    if (v == "bad") throw BadInput("bad value", "k");
  });
  check("a*1,b*2", "k");
  EXPECT_EQ(calls, 2);
  EXPECT_THROW(check("a*1,bad*2", "k"), BadInput);
}

}  // namespace
}  // namespace toposweep
