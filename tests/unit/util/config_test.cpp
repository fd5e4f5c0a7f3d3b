#include "toposweep/util/config.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "toposweep/util/collective_op.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"

namespace toposweep {
namespace {

KeyRegistry test_registry() {
  return KeyRegistry({{"topology.degree", "4", "ports"},
                      {"topology.link_bandwidth", "100Gbps", "bw"},
                      {"topology.kind", "switch", "kind"},
                      {"space.*", "", "spaces"}});
}

TEST(Config, IniSectionsBecomePrefixesAndLaterWins) {
  Config c;
  load_ini_text(
      c, "# comment\n[topology]\ndegree = 4\nlink_bandwidth = 25GB/s  # inline\n\n[topology]\ndegree=8\n",
      "a.ini");
  EXPECT_EQ(c.get_int("topology.degree"), 8);
  EXPECT_EQ(c.entries().at("topology.degree").origin, "a.ini:7");
  EXPECT_DOUBLE_EQ(c.get_bandwidth("topology.link_bandwidth"), 25e9);
  apply_set(c, "topology.degree=6");
  EXPECT_EQ(c.get_int("topology.degree"), 6);
  EXPECT_EQ(c.entries().at("topology.degree").origin, "--set");
}

TEST(Config, SyntaxErrorsNameFileAndLine) {
  Config c;
  try {
    load_ini_text(c, "[topology]\ndegree 4\n", "bad.ini");
    FAIL();
  } catch (const BadInput& e) {
    EXPECT_EQ(e.where(), "bad.ini:2");
  }
  EXPECT_THROW(load_ini_text(c, "[topology\n", "bad.ini"), BadInput);
  EXPECT_THROW(load_ini_file(c, "/nonexistent/file.ini"), BadInput);
  EXPECT_THROW(apply_set(c, "novalue"), BadInput);
}

TEST(Config, UnknownKeyGetsSuggestion) {
  Config c;
  c.set("topology.degre", "4", "x.ini:3");
  try {
    validate_and_default(c, test_registry());
    FAIL();
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'topology.degree'"), std::string::npos);
    EXPECT_EQ(e.where(), "x.ini:3");
  }
}

TEST(Config, WildcardsAndDefaults) {
  Config c;
  c.set("space.a.topology.degree", "4,8", "s.ini:2");
  validate_and_default(c, test_registry());
  EXPECT_EQ(c.get_string("topology.kind"), "switch");
  EXPECT_EQ(c.entries().at("topology.kind").origin, "default");
  EXPECT_EQ(c.with_prefix("space.a.").size(), 1u);
}

TEST(Config, TypedGettersRejectBadValues) {
  Config c;
  c.set("topology.link_bandwidth", "100", "f.ini:4");
  try {
    c.get_bandwidth("topology.link_bandwidth");
    FAIL();
  } catch (const BadInput& e) {
    EXPECT_NE(e.where().find("topology.link_bandwidth"), std::string::npos);
    EXPECT_NE(e.where().find("f.ini:4"), std::string::npos);
  }
  c.set("topology.degree", "4x", "");
  EXPECT_THROW(c.get_int("topology.degree"), BadInput);
  c.set("topology.degree", "40", "");
  EXPECT_THROW(c.get_int("topology.degree", 1, 16), BadInput);
  EXPECT_EQ(c.get_int("topology.degree", 1, 64), 40);
  c.set("topology.link_bandwidth", "0Gbps", "");
  EXPECT_THROW(c.get_bandwidth("topology.link_bandwidth"), BadInput);
  EXPECT_THROW(c.get_string("missing.key"), BadInput);
  c.set("l", "1, 5 ,11", "");
  EXPECT_EQ(c.get_int_list("l"), (std::vector<std::int64_t>{1, 5, 11}));
}

TEST(Config, IniRoundTrip) {
  Config c;
  c.set("topology.degree", "4", "");
  c.set("space.a.topology.degree", "4,8", "");
  c.set("model.name", "dlrm", "");
  Config d;
  load_ini_text(d, c.to_ini(), "rt");
  ASSERT_EQ(d.entries().size(), c.entries().size());
  for (const auto& [k, e] : c.entries()) EXPECT_EQ(d.get_string(k), e.value) << k;
}

TEST(Strings, EditDistanceAndSplit) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(split_list(" a, b ,c"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(split_list("  ").empty());
}

TEST(CollectiveOp, NamesAndBusBw) {
  EXPECT_EQ(parse_collective_op("all_reduce"), CollectiveOp::AllReduce);
  EXPECT_EQ(parse_collective_op("AllGather"), CollectiveOp::AllGather);
  EXPECT_FALSE(parse_collective_op("gossip"));
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::AllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::AllGather, 4), 0.75);
}

}  // namespace
}  // namespace toposweep
