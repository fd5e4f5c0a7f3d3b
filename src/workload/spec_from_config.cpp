// model.*, server.device/efficiency and strategy.* keys -> WorkloadSpec, StrategySpec: the one
// place the workload module reads a Config.
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "toposweep/util/error.hpp"
#include "toposweep/util/key_origins.hpp"
#include "toposweep/util/runs.hpp"
#include "toposweep/util/strings.hpp"
#include "toposweep/workload/cross_entropy.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/spec.hpp"
#include "toposweep/workload/strategy_knobs.hpp"

namespace toposweep {
namespace {

// Set by the user (a file or --set), not filled in from the key's default.
bool user_set(const Config& config, std::string_view key) {
  return config.user_set(key);
}

// strategy.zero, or the deprecated strategy.zero1 alias for stage 1; both given must agree.
std::uint8_t zero_stage_from_config(const Config& config) {
  const bool stage_given = user_set(config, "strategy.zero");
  std::int64_t stage = 0;
  if (config.has("strategy.zero")) stage = config.get_int("strategy.zero", 0, kMaxZeroStage);
  if (!user_set(config, "strategy.zero1")) return static_cast<std::uint8_t>(stage);
  const bool zero1 = config.get_bool("strategy.zero1");
  if (!stage_given) return zero1 ? 1 : 0;
  if (zero1 != (stage >= 1))
    throw BadInput(
        "strategy.zero1 = " + std::string(zero1 ? "true" : "false") +
            " (deprecated alias for strategy.zero = 1) contradicts strategy.zero = " + std::to_string(stage),
        config.where("strategy.zero1"));
  return static_cast<std::uint8_t>(stage);
}

// An enum knob's value: its text (trimmed and lower-cased when the knob folds) by its names, or
// by its own parser; BadInput naming the key otherwise, in the knob's words.
std::uint8_t enum_from_config(const Config& config, const StrategyKnob& k, const std::string& key) {
  const std::string& raw = config.get_string(key);
  const std::string text = k.fold ? to_lower(trim(raw)) : raw;
  std::optional<std::uint8_t> value;
  if (k.parse) {
    value = k.parse(text);
  } else {
    for (const KnobValue& v : k.values)
      if (text == v.name) value = v.value;
  }
  if (value) return *value;
  if (!k.unknown.empty())
    throw BadInput("unknown " + std::string(k.unknown) + " '" + text + "' (" + knob_value_names(k) + ")" +
                       std::string(k.note),
                   config.where(key));
  throw BadInput("'" + text + "' is not " + knob_value_names(k) + std::string(k.note), config.where(key));
}

// One knob's strategy.<name> key, read by the knob's type (the ZeRO stage: zero_stage_from_config).
void read_knob(const Config& config, const StrategyKnob& k, StrategySpec& s) {
  const std::string key = "strategy." + std::string(k.name);
  std::visit(
      [&](auto m) {
        using T = std::remove_cvref_t<decltype(s.*m)>;
        if constexpr (std::is_same_v<T, bool>) {
          s.*m = config.get_bool(key);
        } else if constexpr (std::is_same_v<T, double>) {
          s.*m = config.get_size(key);
        } else if constexpr (std::is_same_v<T, std::vector<std::uint32_t>>) {
          if (config.has(key))
            for (auto x : config.get_int_list(key, k.min, k.max))
              (s.*m).push_back(static_cast<std::uint32_t>(x));
        } else if constexpr (std::is_enum_v<T>) {
          s.*m = static_cast<T>(enum_from_config(config, k, key));
        } else if constexpr (std::is_same_v<T, std::uint8_t>) {
          s.*m = zero_stage_from_config(config);  // the one such knob: the ZeRO stage and its alias
        } else {
          s.*m = static_cast<T>(config.get_int(key, k.min, k.max));
        }
      },
      k.member);
}

// The config shorthands re-point errors raised on typed values at the line that set the key;
// an error about strategy.zero points at strategy.zero1 when that alias was what the user wrote.
KeyOrigins strategy_origins(const Config& config) {
  KeyOrigins o = KeyOrigins::of(config);
  if (user_set(config, "strategy.zero1") && !user_set(config, "strategy.zero"))
    o.redirect("strategy.zero", "strategy.zero1");
  return o;
}

}  // namespace

WorkloadSpec workload_spec_from_config(const Config& config) {
  WorkloadSpec s;
  s.model = config.get_string("model.name");
  s.device = config.get_string("server.device");
  if (has_run_counts(s.device)) {
    const auto runs = parse_runs(s.device, config.where("server.device"));
    for (const auto& r : runs) s.device_servers += r.count;
    const auto names = distinct_run_values(runs);
    if (names.size() == 1) s.device = names[0];
  }
  s.datatype = config.get_string("model.datatype");
  if (config.has("model.global_batch"))
    s.global_batch = config.get_int("model.global_batch", 1);
  else
    s.batch_per_gpu = config.get_int("model.batch_per_gpu", 0);
  if (config.has("server.efficiency")) {
    s.efficiency = config.get_double("server.efficiency");
    if (!(s.efficiency > 0 && s.efficiency <= 1))
      throw BadInput("must be in (0, 1]", config.where("server.efficiency"));
  }
  s.optimizer = config.get_string("model.optimizer");
  if (config.has("model.fused_attention") && !config.get_string("model.fused_attention").empty())
    s.fused_attention = config.get_bool("model.fused_attention");
  if (config.has("model.grad_datatype")) {
    s.grad_datatype = config.get_string("model.grad_datatype");
    if (!s.grad_datatype.empty()) datatype_bytes(s.grad_datatype, config.where("model.grad_datatype"));
  }
  if (config.has("model.seq_len"))
    s.seq_len = static_cast<std::uint32_t>(config.get_int("model.seq_len", 1, 1 << 30));
  if (config.has("model.softmax") && config.get_string("model.softmax") == "eager")
    s.softmax = SoftmaxKind::Eager;
  if (config.has("model.cross_entropy")) {
    // The key's check (config_keys.cpp) admits the table's names only.
    if (const auto k = cross_entropy_from_name(to_lower(trim(config.get_string("model.cross_entropy")))))
      s.cross_entropy = *k;
  }
  if (config.has("model.moe_imbalance")) s.moe_imbalance = config.get_double("model.moe_imbalance");
  if (config.has("model.moe_capacity_factor") &&
      !trim(config.get_string("model.moe_capacity_factor")).empty())
    s.moe_capacity_factor = config.get_double("model.moe_capacity_factor");
  if (config.has("model.moe_pad_to_capacity"))
    s.moe_pad_to_capacity = config.get_bool("model.moe_pad_to_capacity");
  for (const auto& [key, field] : {std::pair{"model.moe_router_groups", &s.moe_router_groups},
                                   std::pair{"model.moe_router_group_topk", &s.moe_router_group_topk}})
    if (config.has(key) && !trim(config.get_string(key)).empty())
      *field = static_cast<std::uint32_t>(config.get_int(key, 0, 1 << 20));
  if (config.has("model.moe_dispatch_datatype")) {
    s.moe_dispatch_datatype = to_lower(trim(config.get_string("model.moe_dispatch_datatype")));
    if (!s.moe_dispatch_datatype.empty() && s.moe_dispatch_datatype != "fp8")
      datatype_bytes(s.moe_dispatch_datatype, config.where("model.moe_dispatch_datatype"));
  }
  if (config.has("model.fp8_recipe")) {
    // The key's check (config_keys.cpp) admits the table's names only.
    if (const auto r = fp8_recipe_from_name(to_lower(trim(config.get_string("model.fp8_recipe")))))
      s.fp8_recipe = *r;
  }
  if (config.has("model.optimizer_moments")) {
    s.optimizer_moments = to_lower(trim(config.get_string("model.optimizer_moments")));
    if (s.optimizer_moments != "fp32" && s.optimizer_moments != "bf16")
      throw BadInput("unknown optimizer moment datatype '" + s.optimizer_moments + "' (fp32 or bf16)",
                     config.where("model.optimizer_moments"));
  }
  if (config.has("model.moe_probs_in_activation"))
    s.moe_probs_in_activation = config.get_bool("model.moe_probs_in_activation");
  if (config.has("model.moe_activation_datatype")) {
    s.moe_activation_datatype = to_lower(trim(config.get_string("model.moe_activation_datatype")));
    if (!s.moe_activation_datatype.empty() && s.moe_activation_datatype != "fp8")
      datatype_bytes(s.moe_activation_datatype, config.where("model.moe_activation_datatype"));
  }
  if (s.optimizer != "adam" && s.optimizer != "momentum" && s.optimizer != "sgd")
    throw BadInput("unknown optimizer '" + s.optimizer + "' (adam, momentum or sgd)",
                   config.where("model.optimizer"));
  return s;
}

StrategySpec strategy_spec_from_config(const Config& config) {
  StrategySpec s;
  for (const StrategyKnob& k : kStrategyKnobs)
    if (!k.name.empty()) read_knob(config, k, s);
  if (config.has("strategy.microbatch_size"))
    s.microbatch_size = static_cast<std::uint32_t>(config.get_int("strategy.microbatch_size", 1, 1 << 30));
  return s;
}

LinkClass intra_link_from_config(const Config& config) {
  std::string name = config.get_string("server.device");
  // Mixed servers: the first server's device (server.intra_bandwidth takes a run list too).
  if (has_run_counts(name)) name = parse_runs(name, config.where("server.device"))[0].value;
  if (const Device* d = find_builtin_device(name)) return d->intra_server;
  return resolve_device(name, config.where("server.device")).intra_server;
}

Workload workload_from_config(const Config& config, std::uint32_t gpus) {
  const WorkloadSpec spec = workload_spec_from_config(config);
  return KeyOrigins::of(config).run([&] { return make_workload(spec, gpus); });
}

Strategy strategy_from_config(const Config& config, const Workload& w, std::uint32_t gpus) {
  const StrategySpec spec = strategy_spec_from_config(config);
  return strategy_origins(config).run([&] { return resolve_strategy(spec, w, gpus); });
}

IterationPlan plan_iteration_from_config(const Config& config, std::uint32_t gpus) {
  const Workload w = workload_from_config(config, gpus);
  return plan_iteration(w, strategy_from_config(config, w, gpus));
}

}  // namespace toposweep
