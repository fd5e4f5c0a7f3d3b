#include "toposweep/workload/recompute_modules.hpp"

#include "toposweep/util/strings.hpp"
#include "toposweep/workload/strategy_knobs.hpp"

namespace toposweep {

// The names are the strategy.recompute_modules knob's values (strategy_knobs.hpp).
std::string recompute_modules_name(RecomputeModules set) {
  return knob_flag_names(*find_strategy_knob(&StrategyKnobs::recompute_modules),
                         static_cast<std::uint8_t>(set));
}

std::optional<RecomputeModules> parse_recompute_modules(std::string_view text) {
  RecomputeModules set = RecomputeModules::None;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    bool known = false;
    for (const KnobValue& v : kRecomputeModuleValues)
      if (item == v.name) {
        set = set | static_cast<RecomputeModules>(v.value);
        known = true;
      }
    if (!known) return std::nullopt;
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
  }
  return set;
}

}  // namespace toposweep
