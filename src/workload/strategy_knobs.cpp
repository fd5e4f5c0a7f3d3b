#include "toposweep/workload/strategy_knobs.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>

#include "toposweep/util/config_checks.hpp"

namespace toposweep {
namespace {

template <class M>
using KnobType = std::remove_cvref_t<decltype(std::declval<const StrategyKnobs&>().*std::declval<M>())>;

std::vector<std::string> names_of(const StrategyKnob& k) {
  std::vector<std::string> out;
  for (const KnobValue& v : k.values) out.emplace_back(v.name);
  return out;
}

}  // namespace

std::string knob_value_names(const StrategyKnob& k) {
  std::string out;
  for (std::size_t i = 0; i < k.values.size(); ++i) {
    if (i > 0) out += i + 1 == k.values.size() ? " or " : ", ";
    out += k.values[i].name;
  }
  return out;
}

// A flags knob's value: the names of its set bits, comma-separated.
std::string knob_flag_names(const StrategyKnob& k, std::uint8_t value) {
  std::string out;
  for (const KnobValue& v : k.values)
    if ((value & v.value) != 0) {
      if (!out.empty()) out += ',';
      out += v.name;
    }
  return out;
}

std::string_view knob_value_name(const StrategyKnob& k, std::uint8_t value) {
  for (const KnobValue& v : k.values)
    if (v.value == value) return v.name;
  return "?";
}

nlohmann::json knob_json(const StrategyKnob& k, const StrategyKnobs& s) {
  return std::visit(
      [&](auto m) -> nlohmann::json {
        if constexpr (std::is_enum_v<KnobType<decltype(m)>>)
          return k.flags ? knob_flag_names(k, static_cast<std::uint8_t>(s.*m))
                         : std::string(knob_value_name(k, static_cast<std::uint8_t>(s.*m)));
        else
          return s.*m;
      },
      k.member);
}

bool knob_is_default(const StrategyKnob& k, const StrategyKnobs& s) {
  static const StrategyKnobs defaults;
  return std::visit([&](auto m) { return s.*m == defaults.*m; }, k.member);
}

std::uint32_t knob_code(const StrategyKnob& k, const StrategyKnobs& s) {
  return std::visit(
      [&](auto m) -> std::uint32_t {
        using T = KnobType<decltype(m)>;
        if constexpr (std::is_enum_v<T> || std::is_integral_v<T>)
          return static_cast<std::uint32_t>(s.*m);
        else
          return 0;
      },
      k.member);
}

void set_knob(const StrategyKnob& k, StrategyKnobs& s, std::uint32_t code) {
  std::visit(
      [&](auto m) {
        using T = KnobType<decltype(m)>;
        if constexpr (std::is_same_v<T, bool>)
          s.*m = code != 0;
        else if constexpr (std::is_enum_v<T> || std::is_integral_v<T>)
          s.*m = static_cast<T>(code);
      },
      k.member);
}

std::vector<std::uint32_t> knob_search_default(const StrategyKnob& k) {
  std::vector<std::uint32_t> out;
  std::string_view rest = k.search_default;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    std::visit(
        [&](auto m) {
          using T = KnobType<decltype(m)>;
          if constexpr (std::is_same_v<T, bool>) {
            out.push_back(name == "true" ? 1 : 0);
          } else if constexpr (std::is_enum_v<T>) {
            for (const KnobValue& v : k.values)
              if (v.name == name) out.push_back(v.value);
          } else {
            out.push_back(static_cast<std::uint32_t>(std::stoul(std::string(name))));
          }
        },
        k.member);
  }
  return out;
}

int knob_moves(const StrategyKnobs& a, const StrategyKnobs& b) {
  int moves = 0;
  bool counted = false;  // the current move (a row and those changed with it) differs already
  for (const StrategyKnob& k : kStrategyKnobs) {
    if (k.move == KnobMove::None) continue;
    if (k.move == KnobMove::Own) counted = false;
    const bool differs = std::visit([&](auto m) { return !(a.*m == b.*m); }, k.member);
    if (differs && !counted) {
      ++moves;
      counted = true;
    }
  }
  return moves;
}

void copy_move_knobs(const StrategyKnobs& from, StrategyKnobs& to) {
  for (const StrategyKnob& k : kStrategyKnobs)
    if (k.move != KnobMove::None) std::visit([&](auto m) { to.*m = from.*m; }, k.member);
}

KeySpec knob_key(const StrategyKnob& k) {
  const KeyCheck check = std::visit(
      [&](auto m) -> KeyCheck {
        using T = KnobType<decltype(m)>;
        if constexpr (std::is_same_v<T, bool>) {
          return checks::boolean();
        } else if constexpr (std::is_same_v<T, double>) {
          return checks::quantity(Quantity::Size, true);
        } else if constexpr (std::is_same_v<T, std::vector<std::uint32_t>>) {
          return checks::optional(checks::integer_list(k.min, k.max));
        } else if constexpr (std::is_enum_v<T>) {
          if (k.flags) return checks::list_of(names_of(k));  // a comma list of the names
          std::vector<std::string> names = names_of(k);
          for (std::string_view synonym : k.synonyms) names.emplace_back(synonym);
          return checks::one_of(std::move(names));
        } else {
          return checks::integer(k.min, k.max);
        }
      },
      k.member);
  return {"strategy." + std::string(k.name), std::string(k.default_text), std::string(k.doc), check};
}

KeySpec knob_search_key(const StrategyKnob& k) {
  const KeyCheck check = std::visit(
      [&](auto m) -> KeyCheck {
        using T = KnobType<decltype(m)>;
        if constexpr (std::is_same_v<T, bool>)
          return checks::list_of({"true", "false"});
        else if constexpr (std::is_enum_v<T>)
          return checks::list_of(names_of(k));
        else
          return checks::integer_list(k.min, k.max);
      },
      k.member);
  return {"optimize." + std::string(k.search_key), std::string(k.search_default), std::string(k.search_doc),
          check};
}

// Declared with Strategy (strategy.hpp); written here because the table decides every key.
nlohmann::json strategy_to_json(const Strategy& s) {
  nlohmann::json j = nlohmann::json::object();
  for (const StrategyKnob& k : kStrategyKnobs) {
    // The heterogeneous-cluster choices and the lists appear only when set, so that existing
    // output is unchanged; the chunk count only with the interleaved schedule.
    if (k.json_when == KnobJson::UnlessDefault && knob_is_default(k, s)) continue;
    if (k.json_when == KnobJson::Interleaved && s.schedule != PipelineSchedule::Interleaved) continue;
    j[std::string(k.json)] = knob_json(k, s);
  }
  j["zero1"] = s.zero >= 1;  // the deprecated alias of ZeRO stage 1
  return j;
}

}  // namespace toposweep
