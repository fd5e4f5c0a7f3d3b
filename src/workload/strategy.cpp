#include "toposweep/workload/strategy.hpp"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "toposweep/util/error.hpp"

namespace toposweep {
namespace {

std::string num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", x);
  return buf;
}

bool divides(double whole, double part) {
  return part > 0 && std::fmod(whole, part) == 0;
}

// Set by the user (a file or --set), not filled in from the key's default.
bool user_set(const Config& config, const std::string& key) {
  return config.has(key) && config.entries().at(key).origin != "default";
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

}  // namespace

const char* schedule_name(PipelineSchedule s) {
  return s == PipelineSchedule::GPipe ? "gpipe" : s == PipelineSchedule::Interleaved ? "interleaved" : "1f1b";
}

bool operator==(const Strategy& a, const Strategy& b) {
  return a.dp == b.dp && a.tp == b.tp && a.pp == b.pp && a.microbatches == b.microbatches &&
         a.schedule == b.schedule && a.virtual_stages == b.virtual_stages && a.recompute == b.recompute && a.zero == b.zero &&
         a.sequence_parallel == b.sequence_parallel && a.bucket_bytes == b.bucket_bytes &&
         a.layer_degree == b.layer_degree && a.table_owner == b.table_owner;
}

Strategy strategy_from_config(const Config& config, const Workload& w, std::uint32_t gpus) {
  Strategy s;
  s.tp = static_cast<std::uint32_t>(config.get_int("strategy.tp", 1, 1 << 24));
  s.pp = static_cast<std::uint32_t>(config.get_int("strategy.pp", 1, 1 << 24));
  const auto dp = config.get_int("strategy.dp", 0, 1 << 24);
  if (dp == 0) {
    if (gpus % (s.tp * s.pp) != 0)
      throw InvalidDesign(
          "tp*pp = " + std::to_string(s.tp * s.pp) + " does not divide the " + std::to_string(gpus) + " GPUs",
          config.where("strategy.tp"));
    s.dp = gpus / (s.tp * s.pp);
  } else {
    s.dp = static_cast<std::uint32_t>(dp);
  }
  if (s.dp * s.tp * s.pp != gpus)
    throw InvalidDesign("dp*tp*pp = " + std::to_string(s.dp) + "*" + std::to_string(s.tp) + "*" +
                       std::to_string(s.pp) + " is not the " + std::to_string(gpus) + " GPUs",
                   config.where("strategy.dp"));
  s.microbatches = static_cast<std::uint32_t>(config.get_int("strategy.microbatches", 1, 1 << 24));
  if (config.has("strategy.microbatch_size")) {
    const double mbs = static_cast<double>(config.get_int("strategy.microbatch_size", 1));
    const double replica = w.global_batch / s.dp;
    if (!divides(replica, mbs))
      throw InvalidDesign(
          "microbatch size " + num(mbs) + " does not divide the " + num(replica) + " samples per replica",
          config.where("strategy.microbatch_size"));
    s.microbatches = static_cast<std::uint32_t>(replica / mbs);
  }
  const std::string sched = config.get_string("strategy.schedule");
  if (sched == "1f1b")
    s.schedule = PipelineSchedule::OneFOneB;
  else if (sched == "gpipe")
    s.schedule = PipelineSchedule::GPipe;
  else if (sched == "interleaved")
    s.schedule = PipelineSchedule::Interleaved;
  else
    throw BadInput("unknown schedule '" + sched + "' (1f1b, gpipe or interleaved)", config.where("strategy.schedule"));
  s.virtual_stages = static_cast<std::uint32_t>(config.get_int("strategy.virtual_stages", 1, 1 << 24));
  s.recompute = config.get_bool("strategy.recompute");
  s.zero = zero_stage_from_config(config);
  s.sequence_parallel = config.get_bool("strategy.sequence_parallel");
  s.bucket_bytes = config.get_size("strategy.bucket_size");
  if (config.has("strategy.layer_degrees")) {
    for (auto k : config.get_int_list("strategy.layer_degrees", 1, 1 << 24))
      s.layer_degree.push_back(static_cast<std::uint32_t>(k));
    if (s.layer_degree.size() != w.model.layers.size())
      throw BadInput(
          "expected " + std::to_string(w.model.layers.size()) + " degrees, one per layer of " + w.model.name,
          config.where("strategy.layer_degrees"));
  }
  if (config.has("strategy.table_owners")) {
    for (auto r : config.get_int_list("strategy.table_owners", 0, static_cast<std::int64_t>(gpus) - 1))
      s.table_owner.push_back(static_cast<std::uint32_t>(r));
    if (s.table_owner.size() != w.model.tables.size())
      throw BadInput(
          "expected " + std::to_string(w.model.tables.size()) + " ranks, one per table of " + w.model.name,
          config.where("strategy.table_owners"));
  }
  try {
    validate_strategy(s, w, gpus);
  } catch (const BadInput& e) {
    // Point at where the user set the strategy when the check names a strategy key.
    std::string key = e.where().starts_with("key ") ? e.where().substr(4) : "";
    if (key == "strategy.zero" && !user_set(config, key) && user_set(config, "strategy.zero1"))
      key = "strategy.zero1";
    if (!key.empty() && config.has(key)) {
      // Keep the kind: an impossible design stays one (sweeps count it infeasible, not failed).
      if (dynamic_cast<const InvalidDesign*>(&e)) throw InvalidDesign(e.what(), config.where(key));
      throw BadInput(e.what(), config.where(key));
    }
    throw;
  }
  return s;
}

void validate_strategy(const Strategy& s, const Workload& w, std::uint32_t gpus) {
  const Model& m = w.model;
  if (s.dp == 0 || s.tp == 0 || s.pp == 0 || s.microbatches == 0)
    throw BadInput("strategy degrees must be at least 1", "key strategy.dp");
  if (static_cast<std::uint64_t>(s.dp) * s.tp * s.pp != gpus)
    throw InvalidDesign("dp*tp*pp = " + std::to_string(std::uint64_t{s.dp} * s.tp * s.pp) + " is not the " +
                       std::to_string(gpus) + " GPUs",
                   "key strategy.dp");
  if (m.transformer) {
    if (s.tp > m.transformer->heads)
      throw InvalidDesign("tp = " + std::to_string(s.tp) + " exceeds the " + std::to_string(m.transformer->heads) +
                         " attention heads of " + m.name,
                     "key strategy.tp");
    if (m.transformer->heads % s.tp != 0)
      throw InvalidDesign("tp = " + std::to_string(s.tp) + " does not divide the " +
                         std::to_string(m.transformer->heads) + " attention heads of " + m.name,
                     "key strategy.tp");
  } else if (s.tp > 1) {
    throw InvalidDesign(
        "tensor parallelism (tp > 1) needs a transformer model; use strategy.layer_degrees for " + m.name,
        "key strategy.tp");
  }
  if (s.pp > m.pipeline_units())
    throw InvalidDesign("pp = " + std::to_string(s.pp) + " exceeds the " + std::to_string(m.pipeline_units()) +
                       " layers of " + m.name,
                   "key strategy.pp");
  if (s.pp > 1 && m.has_tables())
    throw InvalidDesign("pipeline parallelism is not supported for models with embedding tables",
                   "key strategy.pp");
  if (!divides(w.global_batch, s.dp))
    throw InvalidDesign(
        "global batch " + num(w.global_batch) + " is not divisible by dp = " + std::to_string(s.dp),
        "key strategy.dp");
  if (!divides(w.global_batch / s.dp, s.microbatches))
    throw InvalidDesign("batch per replica " + num(w.global_batch / s.dp) + " is not divisible by " +
                       std::to_string(s.microbatches) + " microbatches",
                   "key strategy.microbatches");
  if (s.virtual_stages == 0)
    throw BadInput("virtual stages must be at least 1", "key strategy.virtual_stages");
  if (s.schedule != PipelineSchedule::Interleaved && s.virtual_stages != 1)
    throw BadInput("strategy.virtual_stages = " + std::to_string(s.virtual_stages) +
                       " needs strategy.schedule = interleaved",
                   "key strategy.virtual_stages");
  if (s.schedule == PipelineSchedule::Interleaved) {
    if (s.virtual_stages < 2)
      throw InvalidDesign("the interleaved schedule needs strategy.virtual_stages >= 2",
                          "key strategy.virtual_stages");
    if (s.pp < 2)
      throw InvalidDesign("the interleaved schedule needs pp >= 2", "key strategy.pp");
    if (static_cast<std::uint64_t>(s.pp) * s.virtual_stages > m.pipeline_units())
      throw InvalidDesign("pp * virtual_stages = " + std::to_string(std::uint64_t{s.pp} * s.virtual_stages) +
                              " model chunks exceed the " + std::to_string(m.pipeline_units()) + " layers of " +
                              m.name,
                          "key strategy.virtual_stages");
    if (s.microbatches % s.pp != 0)
      throw InvalidDesign("the interleaved schedule needs microbatches (" + std::to_string(s.microbatches) +
                              ") to be a multiple of pp = " + std::to_string(s.pp),
                          "key strategy.microbatches");
  }
  if (s.zero > kMaxZeroStage)
    throw BadInput("ZeRO stage " + std::to_string(s.zero) + " does not exist (0, 1, 2 or 3)",
                   "key strategy.zero");
  if (!(s.bucket_bytes > 0)) throw BadInput("bucket size must be positive", "key strategy.bucket_size");
  if (s.per_layer()) {
    if (s.layer_degree.size() != m.layers.size())
      throw BadInput("expected one degree per layer (" + std::to_string(m.layers.size()) + ")",
                     "key strategy.layer_degrees");
    if (s.zero > 0)
      throw BadInput("ZeRO is supported with global strategies only, not with per-layer degrees",
                     "key strategy.zero");
    if (s.tp != 1 || s.pp != 1 || m.transformer)
      throw BadInput("per-layer degrees need tp = pp = 1 and a non-transformer model",
                     "key strategy.layer_degrees");
    for (std::size_t i = 0; i < s.layer_degree.size(); ++i)
      if (s.layer_degree[i] == 0 || gpus % s.layer_degree[i] != 0)
        throw BadInput("degree " + std::to_string(s.layer_degree[i]) + " of layer " + m.layers[i].name +
                           " does not divide the " + std::to_string(gpus) + " GPUs",
                       "key strategy.layer_degrees");
  }
  if (!s.table_owner.empty()) {
    if (s.table_owner.size() != m.tables.size())
      throw BadInput("expected one owner per table (" + std::to_string(m.tables.size()) + ")",
                     "key strategy.table_owners");
    for (auto r : s.table_owner)
      if (r >= gpus)
        throw BadInput("table owner rank " + std::to_string(r) + " >= GPUs", "key strategy.table_owners");
  }
}

double microbatch_size(const Strategy& s, const Workload& w) {
  return w.global_batch / s.dp / s.microbatches;
}

std::vector<std::uint32_t> table_owners(const Strategy& s, std::size_t tables, std::uint32_t gpus) {
  if (!s.table_owner.empty()) return s.table_owner;
  std::vector<std::uint32_t> owners(tables);
  for (std::size_t i = 0; i < tables; ++i)
    owners[i] =
        tables >= gpus ? static_cast<std::uint32_t>(i % gpus) : static_cast<std::uint32_t>(i * gpus / tables);
  return owners;
}

Strategy data_parallel_strategy(std::uint32_t gpus) {
  Strategy s;
  s.dp = gpus;
  return s;
}

nlohmann::json strategy_to_json(const Strategy& s) {
  nlohmann::json j = {{"dp", s.dp},
                      {"tp", s.tp},
                      {"pp", s.pp},
                      {"microbatches", s.microbatches},
                      {"schedule", schedule_name(s.schedule)},
                      {"recompute", s.recompute},
                      {"zero1", s.zero >= 1},
                      {"zero_stage", s.zero},
                      {"sequence_parallel", s.sequence_parallel},
                      {"bucket_bytes", s.bucket_bytes}};
  if (s.schedule == PipelineSchedule::Interleaved) j["virtual_stages"] = s.virtual_stages;
  if (s.per_layer()) j["layer_degrees"] = s.layer_degree;
  if (!s.table_owner.empty()) j["table_owners"] = s.table_owner;
  return j;
}

}  // namespace toposweep
