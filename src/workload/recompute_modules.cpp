#include "toposweep/workload/recompute_modules.hpp"

#include <array>
#include <utility>

#include "toposweep/util/strings.hpp"

namespace toposweep {
namespace {

constexpr std::array<std::pair<std::string_view, RecomputeModules>, 5> kModules = {{
    {"core_attn", RecomputeModules::CoreAttn},
    {"layernorm", RecomputeModules::Layernorm},
    {"mla_up_proj", RecomputeModules::MlaUpProj},
    {"mlp", RecomputeModules::Mlp},
    {"moe_act", RecomputeModules::MoeAct},
}};

}  // namespace

std::string recompute_modules_name(RecomputeModules set) {
  std::string out;
  for (const auto& [name, m] : kModules)
    if (recomputes(set, m)) {
      if (!out.empty()) out += ',';
      out += name;
    }
  return out;
}

std::optional<RecomputeModules> parse_recompute_modules(std::string_view text) {
  RecomputeModules set = RecomputeModules::None;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    bool known = false;
    for (const auto& [name, m] : kModules)
      if (item == name) {
        set = set | m;
        known = true;
      }
    if (!known) return std::nullopt;
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
  }
  return set;
}

}  // namespace toposweep
