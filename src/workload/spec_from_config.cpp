// model.*, server.device/efficiency and strategy.* keys -> WorkloadSpec, StrategySpec: the one
// place the workload module reads a Config.
#include "toposweep/util/error.hpp"
#include "toposweep/util/key_origins.hpp"
#include "toposweep/util/runs.hpp"
#include "toposweep/util/strings.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/spec.hpp"

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

// A key with two names: false for `first`, true for `second`; BadInput naming the key otherwise.
bool two_way(const Config& config, std::string_view key, const char* first, const char* second) {
  const std::string v = to_lower(trim(config.get_string(key)));
  if (v == first || v == second) return v == second;
  throw BadInput("'" + v + "' is not " + first + " or " + second, config.where(key));
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
  s.fused_attention = config.get_bool("model.fused_attention");
  if (config.has("model.grad_datatype")) {
    s.grad_datatype = config.get_string("model.grad_datatype");
    if (!s.grad_datatype.empty()) datatype_bytes(s.grad_datatype, config.where("model.grad_datatype"));
  }
  if (s.optimizer != "adam" && s.optimizer != "momentum" && s.optimizer != "sgd")
    throw BadInput("unknown optimizer '" + s.optimizer + "' (adam, momentum or sgd)",
                   config.where("model.optimizer"));
  return s;
}

StrategySpec strategy_spec_from_config(const Config& config) {
  StrategySpec s;
  s.tp = static_cast<std::uint32_t>(config.get_int("strategy.tp", 1, 1 << 24));
  s.pp = static_cast<std::uint32_t>(config.get_int("strategy.pp", 1, 1 << 24));
  s.dp = static_cast<std::uint32_t>(config.get_int("strategy.dp", 0, 1 << 24));
  s.microbatches = static_cast<std::uint32_t>(config.get_int("strategy.microbatches", 1, 1 << 24));
  if (config.has("strategy.microbatch_size"))
    s.microbatch_size = static_cast<std::uint32_t>(config.get_int("strategy.microbatch_size", 1, 1 << 30));
  const std::string sched = config.get_string("strategy.schedule");
  if (sched == "1f1b")
    s.schedule = PipelineSchedule::OneFOneB;
  else if (sched == "gpipe")
    s.schedule = PipelineSchedule::GPipe;
  else if (sched == "interleaved")
    s.schedule = PipelineSchedule::Interleaved;
  else
    throw BadInput("unknown schedule '" + sched + "' (1f1b, gpipe or interleaved)",
                   config.where("strategy.schedule"));
  s.virtual_stages = static_cast<std::uint32_t>(config.get_int("strategy.virtual_stages", 1, 1 << 24));
  const auto recompute = parse_recompute(config.get_string("strategy.recompute"));
  if (!recompute)
    throw BadInput(
        "'" + config.get_string("strategy.recompute") + "' is not none, selective or full (true/false)",
        config.where("strategy.recompute"));
  s.recompute = *recompute;
  s.zero = zero_stage_from_config(config);
  s.sequence_parallel = config.get_bool("strategy.sequence_parallel");
  s.scatter_gather = config.get_bool("strategy.scatter_gather");
  const std::string overlap = to_lower(trim(config.get_string("strategy.tp_overlap")));
  if (overlap == "none")
    s.tp_overlap = TpOverlap::None;
  else if (overlap == "backward")
    s.tp_overlap = TpOverlap::Backward;
  else if (overlap == "full")
    s.tp_overlap = TpOverlap::Full;
  else
    throw BadInput("unknown TP overlap '" + overlap + "' (none, backward or full)",
                   config.where("strategy.tp_overlap"));
  s.dp_overlap = config.get_bool("strategy.dp_overlap");
  s.p2p_overlap = config.get_bool("strategy.p2p_overlap");
  s.grad_accum_fusion = config.get_bool("strategy.grad_accum_fusion");
  s.bucket_bytes = config.get_size("strategy.bucket_size");
  s.batch_split = two_way(config, "strategy.batch_split", "even", "proportional") ? BatchSplit::Proportional
                                                                                  : BatchSplit::Even;
  s.stage_split =
      two_way(config, "strategy.stage_split", "even", "speed") ? StageSplit::Speed : StageSplit::Even;
  s.compression =
      two_way(config, "strategy.compression", "none", "sfb") ? Compression::Sfb : Compression::None;
  if (config.has("strategy.layer_degrees"))
    for (auto k : config.get_int_list("strategy.layer_degrees", 1, 1 << 24))
      s.layer_degree.push_back(static_cast<std::uint32_t>(k));
  if (config.has("strategy.table_owners"))
    for (auto r : config.get_int_list("strategy.table_owners", 0, 1 << 30))
      s.table_owner.push_back(static_cast<std::uint32_t>(r));
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
