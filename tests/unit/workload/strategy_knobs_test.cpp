// The strategy knob table against the code derived from it: the strategy.* keys, their defaults
// and parsing, the strategy JSON and the spec <-> strategy copies.
#include "toposweep/workload/strategy_knobs.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "toposweep/util/config.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/workload/config_keys.hpp"
#include "toposweep/workload/spec.hpp"
#include "workload_test_helpers.hpp"

namespace toposweep {
namespace {

// A JSON value of a strategy as a key's text: "true", "3", "interleaved", "1,2,3".
std::string key_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::string out;
    for (const auto& x : v) {
      if (!out.empty()) out += ',';
      out += x.dump();
    }
    return out;
  }
  if (v.is_number_float()) return std::to_string(static_cast<long long>(v.get<double>())) + "B";
  return v.dump();
}

// A value other than the default, for every knob type.
Strategy with_other_value(const StrategyKnob& k) {
  Strategy s;
  std::visit(
      [&](auto m) {
        using T = std::remove_cvref_t<decltype(s.*m)>;
        if constexpr (std::is_same_v<T, bool>)
          s.*m = !(s.*m);
        else if constexpr (std::is_same_v<T, double>)
          s.*m = 1 << 20;
        else if constexpr (std::is_same_v<T, std::vector<std::uint32_t>>)
          s.*m = {1, 2, 3};
        else if constexpr (std::is_enum_v<T>)
          s.*m = static_cast<T>(k.values.back().value == static_cast<std::uint8_t>(s.*m)
                                    ? k.values.front().value
                                    : k.values.back().value);
        else {  // 2 or 3, within the key's range (strategy.etp: 0 or 1)
          const std::int64_t v = s.*m == 2 ? 3 : 2;
          s.*m = static_cast<T>(v <= k.max ? v : (s.*m == k.max ? k.min : k.max));
        }
      },
      k.member);
  // The chunk count is written (and meant) only with the interleaved schedule.
  if (k.member == KnobMember{&StrategyKnobs::virtual_stages}) s.schedule = PipelineSchedule::Interleaved;
  return s;
}

TEST(StrategyKnobs, EveryKeyIsARowAndEveryRowAKey) {
  std::set<std::string> keys, rows;
  for (const KeySpec& k : workload::config_keys())
    if (k.name.starts_with("strategy.")) keys.insert(k.name);
  for (const StrategyKnob& k : kStrategyKnobs)
    if (!k.name.empty()) rows.insert("strategy." + std::string(k.name));
  rows.insert("strategy.microbatch_size");  // a spec's key, resolved into the microbatch count
  rows.insert("strategy.zero1");            // the deprecated alias of strategy.zero = 1
  EXPECT_EQ(keys, rows);
}

TEST(StrategyKnobs, KeyDefaultsAreTheMembersDefaults) {
  // Nothing set: the spec read from the keys' defaults is the default spec, knob by knob.
  const StrategySpec read = strategy_spec_from_config(test::workload_config({}));
  const StrategySpec defaults;
  for (const StrategyKnob& k : kStrategyKnobs)
    EXPECT_EQ(knob_json(k, read), knob_json(k, defaults)) << k.json;
  EXPECT_EQ(read, defaults);
  EXPECT_EQ(defaults.dp, 0u);  // the GPUs tp x pp leaves
  EXPECT_EQ(Strategy{}.dp, 1u);
}

TEST(StrategyKnobs, EveryKnobRoundTripsThroughJsonAndTheConfig) {
  for (const StrategyKnob& k : kStrategyKnobs) {
    if (k.name.empty()) continue;  // not a key (the SFB layers)
    const Strategy s = with_other_value(k);
    ASSERT_FALSE(knob_is_default(k, s)) << k.name;
    const nlohmann::json j = strategy_to_json(s);
    ASSERT_TRUE(j.contains(std::string(k.json))) << k.name;
    std::vector<std::string> sets{"strategy." + std::string(k.name) + "=" +
                                  key_text(j.at(std::string(k.json)))};
    if (s.schedule != StrategyKnobs{}.schedule && k.member != KnobMember{&StrategyKnobs::schedule})
      sets.push_back("strategy.schedule=" + j.at("schedule").get<std::string>());
    const StrategySpec spec = strategy_spec_from_config(test::workload_config(sets));
    EXPECT_EQ(knob_json(k, spec), knob_json(k, s)) << sets[0];
    EXPECT_EQ(knob_code(k, spec), knob_code(k, s)) << sets[0];
    // The copies carry every knob: spec_of and back.
    StrategySpec back = spec_of(s);
    for (const StrategyKnob& other : kStrategyKnobs)
      EXPECT_EQ(knob_json(other, back), knob_json(other, s)) << k.name << " / " << other.json;
    back.dp = s.dp;
    EXPECT_EQ(static_cast<const StrategyKnobs&>(back), static_cast<const StrategyKnobs&>(s));
    // Equality sees every knob.
    EXPECT_NE(s, Strategy{}) << k.name;
  }
}

TEST(StrategyKnobs, TheJsonWritesTheOptionalKnobsOnlyWhenSet) {
  const nlohmann::json plain = strategy_to_json(Strategy{});
  for (const char* absent : {"virtual_stages", "layer_degrees", "table_owners", "batch_split", "stage_split",
                             "compression", "sfb_layers"})
    EXPECT_FALSE(plain.contains(absent)) << absent;
  EXPECT_EQ(plain.size(), 15u);  // 14 knobs and the zero1 alias
  EXPECT_EQ(plain.at("zero1"), false);
  Strategy s;
  s.zero = 2;
  s.compression = Compression::Sfb;
  s.sfb_layers = {4};
  const nlohmann::json j = strategy_to_json(s);
  EXPECT_EQ(j.at("zero1"), true);
  EXPECT_EQ(j.at("zero_stage"), 2);
  EXPECT_EQ(j.at("compression"), "sfb");
  EXPECT_EQ(j.at("sfb_layers"), nlohmann::json::array({4}));
}

TEST(StrategyKnobs, LocalMovesCountTheDegreesAndTheScheduleWithItsChunksOnce) {
  Strategy a;
  a.dp = 8;
  Strategy b = a;
  EXPECT_EQ(knob_moves(a, b), 0);
  b.dp = 2, b.tp = 2, b.pp = 2;  // the degrees: one move
  EXPECT_EQ(knob_moves(a, b), 1);
  b.schedule = PipelineSchedule::Interleaved, b.virtual_stages = 2;  // the schedule with its chunks
  EXPECT_EQ(knob_moves(a, b), 2);
  b.recompute = Recompute::Full, b.zero = 1, b.sequence_parallel = true, b.tp_overlap = TpOverlap::Full;
  b.dp_overlap = false, b.microbatches = 4;
  b.batch_split = BatchSplit::Proportional, b.stage_split = StageSplit::Speed,
  b.compression = Compression::Sfb;
  EXPECT_EQ(knob_moves(a, b), 11);
  // Knobs the global enumeration does not vary are no moves, and a move does not copy them.
  Strategy c = a;
  c.scatter_gather = false, c.p2p_overlap = false, c.grad_accum_fusion = false, c.bucket_bytes = 1;
  c.layer_degree = {1, 2}, c.table_owner = {0}, c.sfb_layers = {1};
  EXPECT_EQ(knob_moves(a, c), 0);
  copy_move_knobs(b, c);
  EXPECT_EQ(knob_moves(b, c), 0);
  EXPECT_FALSE(c.scatter_gather);
  EXPECT_EQ(c.layer_degree, (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(c.bucket_bytes, 1);
  EXPECT_EQ(c.schedule, PipelineSchedule::Interleaved);
}

// The reader's own errors (what a Config that skipped the keys' checks meets).
std::string read_error(const std::string& set) {
  std::vector<KeySpec> keys = workload::config_keys();
  for (KeySpec& k : keys) k.check = nullptr;
  Config c;
  apply_set(c, set);
  validate_and_default(c, KeyRegistry(keys));
  try {
    strategy_spec_from_config(c);
  } catch (const BadInput& e) {
    return e.what();
  }
  return "no error";
}

TEST(StrategyKnobs, EnumKeysKeepTheirErrorMessages) {
  EXPECT_EQ(read_error("strategy.schedule=GPipe"), "unknown schedule 'GPipe' (1f1b, gpipe or interleaved)");
  EXPECT_EQ(read_error("strategy.tp_overlap=Fast"), "unknown TP overlap 'fast' (none, backward or full)");
  EXPECT_EQ(read_error("strategy.recompute=maybe"), "'maybe' is not none, selective or full (true/false)");
  EXPECT_EQ(read_error("strategy.batch_split=Odd"), "'odd' is not even or proportional");
  EXPECT_EQ(read_error("strategy.stage_split=x"), "'x' is not even, speed or ends");
  EXPECT_EQ(read_error("strategy.compression=zip"), "'zip' is not none or sfb");
  // Folded and synonyms as before.
  EXPECT_EQ(read_error("strategy.tp_overlap=Backward"), "no error");
  EXPECT_EQ(read_error("strategy.recompute=On"), "no error");
  EXPECT_EQ(strategy_spec_from_config(test::workload_config({"strategy.recompute=true"})).recompute,
            Recompute::Full);
}

}  // namespace
}  // namespace toposweep
