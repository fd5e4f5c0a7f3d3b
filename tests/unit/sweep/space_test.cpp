#include "toposweep/sweep/space.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>

#include "toposweep/sweep/generators.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::sweep {
namespace {

KeyRegistry test_registry() {
  return KeyRegistry({{"topology.kind", "switch", ""},
                      {"topology.degree", "4", ""},
                      {"topology.servers", "16", ""},
                      {"topology.link_bandwidth", "100Gbps", ""},
                      {"topology.dims", "", ""},
                      {"topology.dim_bandwidth", "", ""},
                      {"topology.strides", "", ""},
                      {"server.gpus", "4", ""},
                      {"strategy.dp", "1", ""},
                      {"strategy.tp", "1", ""},
                      {"strategy.pp", "1", ""},
                      {"model.name", "bert-large", ""},
                      {"strategy.microbatches", "1", ""},
                      {"sweep.objectives", "cost_usd,iteration_time_s", ""},
                      {"space.*", "", ""}});
}

// With the optimize axis wired (the CLI registers point.optimize).
KeyRegistry registry_with_optimize() {
  KeyRegistry r = test_registry();
  r.add({{"point.optimize", "none", ""}});
  return r;
}

Space space_from(const std::string& ini) {
  Config c;
  load_ini_text(c, ini, "space.ini");
  return parse_space(c, test_registry());
}

const char* kTwoSubspaces = R"(
[model]
name = bert-large
[space.a]
topology.degree = 4, 8
topology.link_bandwidth = 25Gbps, 100Gbps, 200Gbps
[space.b]
topology.kind = fattree
topology.link_bandwidth = 100Gbps, 400Gbps
)";

TEST(Space, SizeIsSumOfProducts) {
  const Space s = space_from(kTwoSubspaces);
  EXPECT_EQ(s.size(), 2u * 3u + 1u * 2u);
  ASSERT_EQ(s.axes().size(), 3u);
  EXPECT_EQ(s.axes()[0].key, "topology.degree");
  EXPECT_EQ(s.axes()[1].key, "topology.kind");
  EXPECT_EQ(s.axes()[2].key, "topology.link_bandwidth");
  // Union of values in order of first appearance.
  EXPECT_EQ(s.axes()[2].values, (std::vector<std::string>{"25Gbps", "100Gbps", "200Gbps", "400Gbps"}));
  EXPECT_EQ(s.subspaces()[1].offset, 6u);
}

TEST(Space, DecodeHandWorkedPoints) {
  const Space s = space_from(kTwoSubspaces);
  // Row-major: first axis (topology.degree) most significant within sub-space a.
  EXPECT_EQ(s.decode(0), (PointCoordinates{0, {0, kAbsentAxis, 0}}));
  EXPECT_EQ(s.decode(1), (PointCoordinates{0, {0, kAbsentAxis, 1}}));
  EXPECT_EQ(s.decode(3), (PointCoordinates{0, {1, kAbsentAxis, 0}}));
  EXPECT_EQ(s.decode(6), (PointCoordinates{1, {kAbsentAxis, 0, 1}}));
  EXPECT_EQ(s.decode(7), (PointCoordinates{1, {kAbsentAxis, 0, 3}}));
  EXPECT_THROW(s.decode(8), RuntimeFailure);
  const Config p = s.point_config(5);
  EXPECT_EQ(p.get_string("topology.degree"), "8");
  EXPECT_EQ(p.get_string("topology.link_bandwidth"), "200Gbps");
  EXPECT_EQ(p.get_string("model.name"), "bert-large");
  // Values carry the line that set them and their sub-space, so errors can point there.
  EXPECT_EQ(p.entries().at("topology.degree").origin, "space.ini:5, sub-space a");
  EXPECT_FALSE(p.has("space.a.topology.degree"));
}

TEST(Space, EncodeDecodeRoundTripsEveryIndex) {
  const Space s = space_from(R"(
[space.x]
topology.degree = 2,4,6,8,10
topology.servers = 8,16,32
topology.link_bandwidth = 1Gbps|2Gbps|3Gbps|4Gbps|5Gbps|6Gbps|7Gbps
[server]
gpus = 4
[space.y]
topology.servers = 8
strategy = all
[space.z]
topology.kind = torus, expander
)");
  // x: 5*3*7 = 105; y: one servers value, strategies of 8*4 = 32 = 2^5 GPUs: C(7,2) = 21; z: 2.
  ASSERT_EQ(s.size(), 105u + 21u + 2u);
  for (std::uint64_t i = 0; i < s.size(); ++i) EXPECT_EQ(s.encode(s.decode(i)), i);
  // In-place application, in a scrambled order across sub-spaces, equals a fresh point_config.
  Config cfg = s.base();
  for (std::uint64_t k = 0; k < 3 * s.size(); ++k) {
    const std::uint64_t i = (k * 37) % s.size();
    s.apply_point(i, cfg);
    ASSERT_EQ(cfg.to_ini(true), s.point_config(i).to_ini(true)) << "index " << i;
  }
}

TEST(Space, RandomRoundTripOnALargeSpace) {
  // 40^6 * 3 = 1.2e10 points: indices beyond 32 bits.
  std::string ini = "[space.big]\n";
  const char* keys[] = {"topology.degree", "topology.servers", "server.gpus",
                        "strategy.dp",     "strategy.tp",      "strategy.pp"};
  for (const char* k : keys) {
    ini.append(k).append(" = ");
    for (int v = 1; v <= 40; ++v) ini.append(v > 1 ? "," : "").append(std::to_string(v));
    ini.append("\n");
  }
  ini += "topology.kind = a,b,c\n";
  const Space s = space_from(ini);
  EXPECT_EQ(s.size(), 40ULL * 40 * 40 * 40 * 40 * 40 * 3);
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::uint64_t> pick(0, s.size() - 1);
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t x = pick(rng);
    EXPECT_EQ(s.encode(s.decode(x)), x);
  }
  // Last index: every axis at its last value.
  const auto last = s.decode(s.size() - 1);
  for (auto v : last.axis_value) EXPECT_TRUE(v == 39 || v == 2);
}

TEST(Space, NoSubspaceIsTheBasePoint) {
  const Space s = space_from("[topology]\ndegree = 4\n");
  EXPECT_EQ(s.size(), 1u);
  EXPECT_EQ(s.point_config(0).get_string("topology.degree"), "4");
}

TEST(Space, StrategyAxisSetsTheDegrees) {
  const Space s = space_from("[space.s]\ntopology.servers = 2\nserver.gpus = 4\nstrategy = all(max_tp=2)\n");
  // 8 GPUs, tp in {1,2}: tp=1 -> dp·pp = 8: 4 ways; tp=2 -> dp·pp = 4: 3 ways.
  EXPECT_EQ(s.size(), 7u);
  const Config p = s.point_config(s.size() - 1);
  EXPECT_EQ(p.get_string("strategy.dp"), "8");
  EXPECT_EQ(p.get_string("strategy.tp"), "1");
  EXPECT_EQ(p.get_string("strategy.pp"), "1");
}

TEST(Space, StrategyGeneratorTakesTheOptimizersKnobLists) {
  const Space s = space_from(
      "[space.s]\ntopology.servers = 2\nserver.gpus = 2\n"
      "strategy = all(microbatches=2|4, schedule=1f1b|gpipe|interleaved, virtual_stages=2|3, "
      "recompute=none|selective, sequence_parallel=false|true, zero=0|1)\n");
  // By hand, 4 GPUs: (dp, tp, pp) in {(1,1,4), (1,2,2), (1,4,1), (2,1,2), (2,2,1), (4,1,1)}; per
  // shape 2 microbatch counts x 2 recompute modes, x the schedules when pp > 1 (1F1B, GPipe, and
  // interleaved x2 or x3 only with microbatches a multiple of pp: pp = 2 both counts, pp = 4 only
  // 4), x 2 SP when tp > 1, x 2 ZeRO when dp > 1.
  //   (1,1,4): (2 + 4) x 2 = 12 — microbatches 2: 1F1B, GPipe; 4: 1F1B, GPipe, i2, i3
  //   (1,2,2): 2 x 4 x 2 x 2 = 32;  (1,4,1): 2 x 2 x 2 = 8;  (2,1,2): 2 x 4 x 2 x 2 = 32
  //   (2,2,1): 2 x 2 x 2 x 2 = 16;  (4,1,1): 2 x 2 x 2 = 8
  EXPECT_EQ(s.size(), 12u + 32u + 8u + 32u + 16u + 8u);
  std::size_t axis = 0;
  while (s.axes()[axis].key != "strategy") ++axis;
  std::set<std::string> seen;
  for (std::uint64_t i = 0; i < s.size(); ++i) {
    const Config p = s.point_config(i);
    const auto& value = s.axes()[axis].values[s.decode(i).axis_value[axis]];
    EXPECT_TRUE(seen.insert(value).second) << value;
    // Every knob of the value, and nothing else, is set; the rest keep the base.
    const StrategyTriple t = parse_strategy(value, "test");
    EXPECT_EQ(t.spelled(), value);
    EXPECT_EQ(p.get_string("strategy.dp"), std::to_string(t.dp));
    for (const auto& [name, v] : t.knobs) EXPECT_EQ(p.get_string("strategy." + name), v) << value;
    const bool interleaved = value.find("schedule=interleaved") != std::string::npos;
    EXPECT_EQ(p.has("strategy.virtual_stages"), interleaved) << value;
    EXPECT_EQ(p.has("strategy.sequence_parallel"), t.tp > 1) << value;
    EXPECT_EQ(p.has("strategy.zero"), t.dp > 1) << value;
  }
}

TEST(Space, StrategyGeneratorValuesComeInAFixedOrder) {
  // 4 GPUs, pp = 1: dp1tp4, dp2tp2, dp4tp1 (by dp); per shape the listed knobs that matter, the
  // first axis fastest: recompute, then SP (tp > 1), then ZeRO and DP overlap (dp > 1), each
  // value spelling its knobs in that order.
  const Space s = space_from(
      "[space.s]\ntopology.servers = 1\nserver.gpus = 4\n"
      "strategy = all(max_pp=1, dp_overlap=true|false, zero=0|1, sequence_parallel=false|true, "
      "recompute=none|full)\n");
  std::vector<std::string> expected;
  for (const char* sp : {"false", "true"})
    for (const char* r : {"none", "full"})
      expected.push_back(std::string("dp1tp4pp1/recompute=") + r + "/sequence_parallel=" + sp);
  for (const char* dpo : {"true", "false"})
    for (const char* zero : {"0", "1"})
      for (const char* sp : {"false", "true"})
        for (const char* r : {"none", "full"})
          expected.push_back(std::string("dp2tp2pp1/recompute=") + r + "/sequence_parallel=" + sp +
                             "/zero=" + zero + "/dp_overlap=" + dpo);
  for (const char* dpo : {"true", "false"})
    for (const char* zero : {"0", "1"})
      for (const char* r : {"none", "full"})
        expected.push_back(std::string("dp4tp1pp1/recompute=") + r + "/zero=" + zero + "/dp_overlap=" + dpo);
  std::size_t axis = 0;
  while (s.axes()[axis].key != "strategy") ++axis;
  EXPECT_EQ(s.axes()[axis].values, expected);
}

TEST(Space, StrategyGeneratorSplitsTheDpCpRanksForEachListedEp) {
  // 4 GPUs, pp = 1, cp 1|2: shapes (dp, tp, cp) in {(1,4,1), (2,2,1), (4,1,1), (1,2,2), (2,1,2)}
  // (cp listed first: its shapes in the order of their dp x tp x pp); each listed ep dividing
  // dp x cp, written after cp: (1,4,1) ep 1; (2,2,1) 1, 2; (4,1,1) 1, 2, 4; (1,2,2) 1, 2; (2,1,2) 1, 2, 4.
  const Space s = space_from(
      "[space.s]\ntopology.servers = 1\nserver.gpus = 4\nstrategy = all(max_pp=1, ep=1|2|4, cp=1|2)\n");
  const std::vector<std::string> expected = {
      "dp1tp4pp1/cp=1/ep=1", "dp2tp2pp1/cp=1/ep=1", "dp2tp2pp1/cp=1/ep=2", "dp4tp1pp1/cp=1/ep=1",
      "dp4tp1pp1/cp=1/ep=2", "dp4tp1pp1/cp=1/ep=4", "dp1tp2pp1/cp=2/ep=1", "dp1tp2pp1/cp=2/ep=2",
      "dp2tp1pp1/cp=2/ep=1", "dp2tp1pp1/cp=2/ep=2", "dp2tp1pp1/cp=2/ep=4"};
  std::size_t axis = 0;
  while (s.axes()[axis].key != "strategy") ++axis;
  EXPECT_EQ(s.axes()[axis].values, expected);
  EXPECT_EQ(s.point_config(5).get_string("strategy.ep"), "4");
}

TEST(Space, StrategyGeneratorFoldsEachListedEpOverTheTpRanksWithEtp1) {
  // 4 GPUs, pp = 1: shapes (dp, tp) = (1, 4), (2, 2), (4, 1). etp is written only with tp > 1,
  // after ep; etp = 1 folds the EP group over tp x dp (ep divides tp x dp), etp = 0 does not (ep
  // divides dp): (1, 4) ep 1 with etp 0 and 1, ep 2 and 4 with etp 1 only; (2, 2) ep 1 and 2 with
  // both, ep 4 with etp 1 only; (4, 1) ep 1, 2, 4 and no etp.
  const Space s = space_from(
      "[space.s]\ntopology.servers = 1\nserver.gpus = 4\nstrategy = all(max_pp=1, ep=1|2|4, etp=0|1)\n");
  const std::vector<std::string> expected = {
      "dp1tp4pp1/ep=1/etp=0", "dp1tp4pp1/ep=1/etp=1", "dp1tp4pp1/ep=2/etp=1", "dp1tp4pp1/ep=4/etp=1",
      "dp2tp2pp1/ep=1/etp=0", "dp2tp2pp1/ep=1/etp=1", "dp2tp2pp1/ep=2/etp=0", "dp2tp2pp1/ep=2/etp=1",
      "dp2tp2pp1/ep=4/etp=1", "dp4tp1pp1/ep=1",       "dp4tp1pp1/ep=2",       "dp4tp1pp1/ep=4"};
  std::size_t axis = 0;
  while (s.axes()[axis].key != "strategy") ++axis;
  EXPECT_EQ(s.axes()[axis].values, expected);
  EXPECT_EQ(s.point_config(3).get_string("strategy.etp"), "1");
  EXPECT_EQ(s.point_config(3).get_string("strategy.ep"), "4");
  // etp 2: the experts over pairs of tp 4's ranks (ep dividing tp/etp x dp = 2), and tp 2 itself
  // (unfolded: ep dividing dp = 2); nothing at tp 1.
  const Space pairs = space_from(
      "[space.s]\ntopology.servers = 1\nserver.gpus = 4\nstrategy = all(max_pp=1, ep=1|2|4, etp=2)\n");
  const std::vector<std::string> expected_pairs = {
      "dp1tp4pp1/ep=1/etp=2", "dp1tp4pp1/ep=2/etp=2", "dp2tp2pp1/ep=1/etp=2", "dp2tp2pp1/ep=2/etp=2",
      "dp4tp1pp1/ep=1",       "dp4tp1pp1/ep=2",       "dp4tp1pp1/ep=4"};
  std::size_t pairs_axis = 0;
  while (pairs.axes()[pairs_axis].key != "strategy") ++pairs_axis;
  EXPECT_EQ(pairs.axes()[pairs_axis].values, expected_pairs);
  // etp beyond the key's range is refused where the generator is written.
  try {
    space_from("[space.s]\ntopology.servers = 1\nserver.gpus = 4\nstrategy = all(ep=1|2, etp=0|-1)\n");
    ADD_FAILURE() << "no error";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("for etp"), std::string::npos) << e.what();
  }
}

TEST(Space, StrategyKnobNamesInErrorsAndHelp) {
  const auto message = [](const std::string& text) -> std::string {
    try {
      parse_strategy(text, "test");
    } catch (const BadInput& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(message("dp1tp1pp1/colour=red"),
            "strategy 'dp1tp1pp1/colour=red': 'colour=red' is not knob=value with a knob of cp, ep, etp, "
            "microbatches, "
            "microbatch_size, schedule, virtual_stages, recompute, sequence_parallel, tp_overlap, "
            "dp_overlap, zero");
  EXPECT_EQ(message("dp1tp1pp1/microbatch_size=2/zero=1"), "no error");
  try {
    space_from("[space.a]\nstrategy = all(microbatch_size=2)\n");
    ADD_FAILURE() << "no error";
  } catch (const BadInput& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "strategy generator takes max_tp=N, max_pp=N and knob lists (e.g. recompute=none|selective) of "
        "cp, ep, etp, microbatches, schedule, virtual_stages, recompute, sequence_parallel, tp_overlap, "
        "dp_overlap, zero");
  }
  const Generator* all = find_generator("strategy", "all");
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(std::string(all->help),
            "all[(max_tp=T, max_pp=P, KNOB=v1|v2...)]: every dp x tp x pp of the GPUs times the knob lists "
            "(cp, ep, etp, microbatches, schedule, virtual_stages, recompute, sequence_parallel, tp_overlap, "
            "dp_overlap, zero)");
}

TEST(Space, SimplexAndPermutationGenerators) {
  const Space s = space_from(R"(
[space.m]
topology.dims = ring:4,fc:8,switch:4
topology.dim_bandwidth = simplex(300GB/s, 50GB/s)
[space.t]
topology.servers = 8
topology.strides = permutations(4)
)");
  // Six steps over three dims, each >= 1: C(5,2) = 10; two-ring circulants on 8 nodes up to
  // multipliers: {1,2} (~{2,3}), {1,3}, {1,4} (~{3,4}); {2,4} is disconnected.
  EXPECT_EQ(s.size(), 10u + 3u);
  const Axis& bw = s.axes()[0];
  EXPECT_EQ(bw.key, "topology.dim_bandwidth");
  EXPECT_EQ(bw.values.front(), "50GB/s,50GB/s,200GB/s");
  EXPECT_EQ(bw.values.back(), "200GB/s,50GB/s,50GB/s");
  const Axis& strides = s.axes()[3];
  EXPECT_EQ(strides.key, "topology.strides");
  EXPECT_EQ(strides.values, (std::vector<std::string>{"1,2", "1,3", "1,4"}));
  EXPECT_EQ(s.point_config(12).get_string("topology.strides"), "1,4");
}

TEST(Space, BadInputNamesTheKey) {
  auto expect_bad = [](const std::string& ini, const std::string& needle) {
    try {
      space_from(ini);
      ADD_FAILURE() << "no error for " << ini;
    } catch (const BadInput& e) {
      EXPECT_NE((std::string(e.what()) + " " + e.where()).find(needle), std::string::npos)
          << e.what() << " / " << e.where();
    }
  };
  expect_bad("[space.a]\ntopology.degre = 4\n", "did you mean 'topology.degree'");
  expect_bad("[space.a]\ntopology.degree = 4, 4\n", "listed twice");
  expect_bad("[space.a]\ntopology.degree = 4,,8\n", "space.ini:2");
  expect_bad("[space.a]\nstrategy = all\ntopology.servers = 2, 4\n", "single value");
  expect_bad("[space.a]\ntopology.dim_bandwidth = simplex(310GB/s, 50GB/s, 2)\n", "multiple");
  expect_bad("[space.a]\nstrategy = dp2tp\n", "dpNtpNppN");
  expect_bad("[space.a]\nstrategy = dp2tp1pp1/colour=red\n", "knob=value");
  expect_bad("[space.a]\nstrategy = dp2tp1pp1/zero=1/zero=2\n", "twice");
  expect_bad("[space.a]\nstrategy = all(schedule=interleaved)\n", "virtual_stages");
  expect_bad("[space.a]\nstrategy = all(recompute=none|none)\n", "twice");
  expect_bad("[space.a]\noptimize = alternating\n", "optimize");
  expect_bad("[space.a]\nsweep.objectives = cost_usd\n", "cannot be swept");
  expect_bad("[space]\nx = 1\n", "space.NAME");
}

TEST(Space, FingerprintChangesWithTheSpaceNotWithSweepKeys) {
  Config a, b, c;
  load_ini_text(a, kTwoSubspaces, "x.ini");
  load_ini_text(b, kTwoSubspaces, "y.ini");
  b.set("sweep.objectives", "cost_usd", "--set");
  load_ini_text(c, kTwoSubspaces, "x.ini");
  c.set("space.b.topology.degree", "4", "--set");
  const auto r = test_registry();
  EXPECT_EQ(parse_space(a, r).fingerprint(), parse_space(b, r).fingerprint());
  EXPECT_NE(parse_space(a, r).fingerprint(), parse_space(c, r).fingerprint());
}

// Every generator, each next to a sub-space that sweeps the keys it sets directly: the bug this
// guards against let one sub-space's axis keys overwrite what another's generator set.
const char* kMixedGenerators = R"(
[topology]
servers = 8
[server]
gpus = 4
[strategy]
dp = 32
[space.gen_strategy]
strategy = all(max_tp=4, max_pp=4)
strategy.microbatches = 1, 2
[space.explicit_strategy]
strategy.tp = 2, 4
strategy.pp = 2
strategy.dp = 4, 8
[space.gen_strides]
topology.strides = permutations(4)
[space.explicit_strides]
topology.strides = 1,2 | 3,4
[space.gen_simplex]
topology.dims = ring:2,fc:4
topology.dim_bandwidth = simplex(200GB/s, 50GB/s)
[space.explicit_dim_bw]
topology.dims = ring:2,fc:4
topology.dim_bandwidth = 100GB/s,100GB/s
[space.gen_optimize]
optimize = strategy, none
[space.explicit_optimize]
point.optimize = topology
)";

std::map<std::string, std::string> values_of(const Config& c) {
  std::map<std::string, std::string> out;
  for (const auto& [k, e] : c.entries()) out[k] = e.value + " @ " + e.origin;
  return out;
}

TEST(Space, PointIsTheBasePlusItsOwnSubspaceAxesOnly) {
  // The minimal case of the quickstart bug: a strategy generator next to a sub-space that
  // sweeps strategy.tp. The generator's points must simulate what they name.
  const Space s = space_from(R"(
[topology]
servers = 8
[server]
gpus = 4
[space.a]
strategy = all(max_tp=4, max_pp=4)
[space.b]
strategy.tp = 2
)");
  ASSERT_EQ(s.size(), 10u);  // 32 GPUs, tp and pp in {1,2,4}: 9 triples, plus b's one point
  for (std::uint64_t i = 0; i < 9; ++i) {
    const Config p = s.point_config(i);
    const auto named = parse_strategy(s.axes()[0].values[s.decode(i).axis_value[0]], "test");
    EXPECT_EQ(p.get_int("strategy.dp") * p.get_int("strategy.tp") * p.get_int("strategy.pp"), 32);
    EXPECT_EQ(p.get_int("strategy.dp"), named.dp) << s.describe(i);
    EXPECT_EQ(p.get_int("strategy.tp"), named.tp) << s.describe(i);
    EXPECT_EQ(p.get_int("strategy.pp"), named.pp) << s.describe(i);
  }
  const Config b = s.point_config(9);
  EXPECT_EQ(b.get_string("strategy.tp"), "2");
  EXPECT_FALSE(b.has("strategy.dp"));  // not in the base: b's point leaves it unset
}

TEST(Space, UnionEqualsItsSubspacesAloneForEveryGenerator) {
  Config whole;
  load_ini_text(whole, kMixedGenerators, "space.ini");
  const Space u = parse_space(whole, registry_with_optimize());
  std::uint64_t covered = 0;
  for (const auto& sub : u.subspaces()) {
    // The same file with only this sub-space's section.
    Config alone;
    for (const auto& [k, e] : whole.entries())
      if (!k.starts_with("space.") || k.starts_with("space." + sub.name + "."))
        alone.set(k, e.value, e.origin);
    const Space one = parse_space(alone, registry_with_optimize());
    ASSERT_EQ(one.size(), sub.size) << sub.name;
    for (std::uint64_t i = 0; i < one.size(); ++i)
      EXPECT_EQ(values_of(one.point_config(i)), values_of(u.point_config(sub.offset + i)))
          << sub.name << " point " << i;
    covered += one.size();
  }
  EXPECT_EQ(covered, u.size());
}

TEST(Space, ApplyPointInAnyOrderEqualsPointConfig) {
  Config whole;
  load_ini_text(whole, kMixedGenerators, "space.ini");
  const Space u = parse_space(whole, registry_with_optimize());
  std::vector<std::uint64_t> order(u.size());
  for (std::uint64_t i = 0; i < u.size(); ++i) order[i] = i;
  std::mt19937_64 rng(7);
  std::shuffle(order.begin(), order.end(), rng);
  Config scratch = u.base();
  for (auto i : order) {
    u.apply_point(i, scratch);
    EXPECT_EQ(values_of(scratch), values_of(u.point_config(i))) << u.describe(i);
  }
}

TEST(Space, TwoAxesOfOneSubspaceMayNotSetTheSameKey) {
  try {
    space_from("[topology]\nservers = 2\n[server]\ngpus = 4\n[space.a]\nstrategy = all\nstrategy.tp = 2\n");
    ADD_FAILURE() << "no error";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("sets strategy.tp twice"), std::string::npos) << e.what();
    EXPECT_NE(e.where().find("space.a"), std::string::npos) << e.where();
  }
}

}  // namespace
}  // namespace toposweep::sweep
