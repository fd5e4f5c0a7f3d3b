// check_space: every axis value meets the check once, bad input propagates, and the keys a
// sub-space's points never read are reported per sub-space.
#include "toposweep/sweep/space_check.hpp"

#include <gtest/gtest.h>

#include "toposweep/util/error.hpp"

namespace toposweep::sweep {
namespace {

KeyRegistry registry() {
  return KeyRegistry({{"topology.kind", "switch", ""},
                      {"topology.degree", "4", ""},
                      {"topology.dims", "", ""},
                      {"topology.seed", "1", ""},
                      {"model.name", "bert-large", ""},
                      {"space.*", "", ""}});
}

Space space_from(const std::string& ini) {
  Config c;
  load_ini_text(c, ini, "check.ini");
  validate_and_default(c, registry());
  return parse_space(c, registry());
}

// A stand-in reader: kind and degree always, dims only for multidim, seed never; degree 13 is
// malformed input, degree 99 an impossible design the real check would swallow.
struct FakeCheck {
  int* calls;
  void operator()(const Config& p) const {
    ++*calls;
    if (p.get_string("topology.kind") == "multidim") p.get_string("topology.dims");
    const auto degree = p.get_int("topology.degree");
    if (degree == 13) throw BadInput("degree 13 is malformed", p.where("topology.degree"));
  }
};

TEST(SpaceCheck, EveryAxisValueIsCheckedOnceWithTheOthersAtTheirFirstValue) {
  const Space s = space_from(R"(
[space.a]
topology.degree = 2, 4, 8
topology.kind = switch, multidim
topology.dims = ring:4 | ring:8 | fc:2
[space.b]
topology.degree = 4
)");
  int calls = 0;
  check_space(s, FakeCheck{&calls});
  EXPECT_EQ(calls, (1 + 2 + 1 + 2) + 1);  // a: first point + the other values of each axis; b: one
}

TEST(SpaceCheck, BadInputInAnyValuePropagates) {
  const Space s = space_from("[space.a]\ntopology.kind = switch, multidim\ntopology.degree = 2, 4, 13\n");
  int calls = 0;
  try {
    check_space(s, FakeCheck{&calls});
    FAIL() << "no error";
  } catch (const BadInput& e) {
    EXPECT_NE(e.where().find("check.ini:3, sub-space a"), std::string::npos) << e.where();
  }
}

TEST(SpaceCheck, KeysNoPointOfASubspaceReadsAreReportedWithTheirSubspaces) {
  const Space s = space_from(R"(
[topology]
dims = ring:4
seed = 7
[space.only_switch]
topology.kind = switch
topology.degree = 2, 4
[space.both]
topology.kind = switch, multidim
[space.unread_axis]
topology.seed = 1, 2
)");
  int calls = 0;
  const auto unused = check_space(s, FakeCheck{&calls});
  ASSERT_EQ(unused.size(), 2u);
  EXPECT_EQ(unused[0].key, "topology.dims");
  EXPECT_EQ(unused[0].origin, "check.ini:3");
  EXPECT_EQ(unused[0].subspaces, (std::vector<std::string>{"only_switch", "unread_axis"}));
  EXPECT_FALSE(unused[0].in_every_subspace);
  EXPECT_EQ(describe_unused(unused[0]),
            "key topology.dims (set at check.ini:3) is not read by any point of sub-spaces only_switch, "
            "unread_axis");
  EXPECT_EQ(unused[1].key, "topology.seed");
  EXPECT_TRUE(unused[1].in_every_subspace);  // the base value and unread_axis' own values alike
  EXPECT_EQ(describe_unused(unused[1]),
            "key topology.seed (set at check.ini:4) is not read by any point of the sweep");
}

}  // namespace
}  // namespace toposweep::sweep
