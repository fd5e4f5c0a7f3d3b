// rethrow_at_origin (what evaluate_config does with a point's BadInput) gives the error
// key_origins(config).rethrow gives, which copies every entry's origin: the same type, message
// and location, with and without the strategy.zero1 alias.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "point_config.hpp"
#include "toposweep/point/design_point.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep {
namespace {

struct Caught {
  bool invalid_design = false;
  std::string what, where;
};

Caught catch_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidDesign& e) {
    return {true, e.what(), e.where()};
  } catch (const BadInput& e) {
    return {false, e.what(), e.where()};
  }
  ADD_FAILURE() << "nothing was thrown";
  return {};
}

TEST(RethrowAtOrigin, NamesTheOriginKeyOriginsWouldName) {
  Config plain = testing::make_point_config({{"topology.degree", "4"}});
  plain.set("topology.degree", "4", "q.ini:4");
  Config alias = testing::make_point_config({{"strategy.zero1", "true"}});
  alias.set("strategy.zero1", "true", "q.ini:9");
  const char* wheres[] = {"key topology.degree",
                          "topology.degree",
                          "key strategy.zero",
                          "strategy.zero",
                          "key strategy.zero1",
                          "key model.name",
                          "topology.servers x server.gpus",
                          "key no.such_key",
                          ""};
  int repointed = 0;
  for (const Config* config : {&plain, &alias})
    for (const char* where : wheres)
      for (bool invalid : {false, true}) {
        SCOPED_TRACE(std::string(where) + (invalid ? " (InvalidDesign)" : " (BadInput)"));
        const BadInput bad("bad value", where);
        const InvalidDesign impossible("impossible design", where);
        const BadInput& e = invalid ? static_cast<const BadInput&>(impossible) : bad;
        const Caught full = catch_of([&] { key_origins(*config).rethrow(e); });
        const Caught fast = catch_of([&] { rethrow_at_origin(*config, e); });
        EXPECT_EQ(fast.invalid_design, invalid);
        EXPECT_EQ(fast.invalid_design, full.invalid_design);
        EXPECT_EQ(fast.what, full.what);
        EXPECT_EQ(fast.where, full.where);
        if (fast.where != where) ++repointed;
      }
  // Hand-checked cases: the key's line, the alias the user wrote, a registry default.
  EXPECT_EQ(catch_of([&] { rethrow_at_origin(plain, BadInput("x", "key topology.degree")); }).where,
            "key topology.degree at q.ini:4");
  EXPECT_EQ(catch_of([&] { rethrow_at_origin(alias, BadInput("x", "key strategy.zero")); }).where,
            "key strategy.zero1 at q.ini:9");
  EXPECT_EQ(catch_of([&] { rethrow_at_origin(plain, BadInput("x", "key strategy.zero")); }).where,
            "key strategy.zero at default");
  EXPECT_GT(repointed, 0);
}

}  // namespace
}  // namespace toposweep
