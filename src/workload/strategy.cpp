#include "toposweep/workload/strategy.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/block.hpp"
#include "toposweep/workload/memory.hpp"
#include "toposweep/workload/spec.hpp"

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

}  // namespace

const char* schedule_name(PipelineSchedule s) {
  return s == PipelineSchedule::GPipe ? "gpipe" : s == PipelineSchedule::Interleaved ? "interleaved" : "1f1b";
}

const char* recompute_name(Recompute r) {
  return r == Recompute::Full ? "full" : r == Recompute::Selective ? "selective" : "none";
}

std::optional<Recompute> parse_recompute(std::string_view text) {
  std::string t;
  for (char c : text)
    if (c != ' ' && c != '\t') t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "none" || t == "false" || t == "no" || t == "off" || t == "0") return Recompute::None;
  if (t == "full" || t == "true" || t == "yes" || t == "on" || t == "1") return Recompute::Full;
  if (t == "selective") return Recompute::Selective;
  return std::nullopt;
}

const char* tp_overlap_name(TpOverlap o) {
  return o == TpOverlap::Full ? "full" : o == TpOverlap::Backward ? "backward" : "none";
}

const char* batch_split_name(BatchSplit b) {
  return b == BatchSplit::Proportional ? "proportional" : "even";
}
const char* stage_split_name(StageSplit s) {
  return s == StageSplit::Speed ? "speed" : s == StageSplit::Ends ? "ends" : "even";
}
const char* compression_name(Compression c) {
  return c == Compression::Sfb ? "sfb" : "none";
}

std::string context_parallel_problem(const Workload& w, std::uint32_t cp) {
  if (cp <= 1) return "";
  const auto& t = w.model.transformer;
  if (!t || w.model.has_tables())
    return "context parallelism splits a transformer's sequence: " + w.model.name + " has none";
  if (!w.fused_attention)
    return "context parallelism (ring attention) runs on fused attention kernels: set model.fused_attention "
           "= "
           "true";
  if (t->seq_len % (2 * cp) != 0)
    return "cp = " + std::to_string(cp) + " needs the sequence length (" + std::to_string(t->seq_len) +
           ") to be a multiple of 2 cp (load-balanced causal chunks)";
  if (w.mixed()) return "context parallelism on mixed devices is not modelled";
  return "";
}

std::string expert_parallel_problem(const Model& m, std::uint32_t ep, std::uint64_t replicas,
                                    std::uint32_t folded) {
  if (ep <= 1) return "";
  const std::string what = "ep = " + std::to_string(ep);
  if (!m.transformer || !m.transformer->moe) return what + " needs a model with routed experts (moe)";
  if (m.transformer->moe->experts % ep != 0)
    return what + " does not divide the " + std::to_string(m.transformer->moe->experts) + " experts of " +
           m.name;
  const std::uint64_t ranks = replicas * std::max<std::uint32_t>(folded, 1);
  if (ranks % ep != 0)
    return what + " does not divide " + (folded > 1 ? "tp/etp*dp*cp = " : "dp*cp = ") +
           std::to_string(ranks) +
           (folded > 1 ? " (the ranks of a stage the experts fold over)"
                       : " (the ranks sharing the dense weights)");
  return "";
}

std::string expert_tensor_problem(const Model& m, const StrategyKnobs& s) {
  if (s.etp == 0 || s.etp == s.tp) return "";
  const std::string what = "etp = " + std::to_string(s.etp);
  if (s.etp > s.tp || s.tp % s.etp != 0)
    return what + " does not divide tp = " + std::to_string(s.tp) +
           " (the routed experts split over a sub-group of the tensor-parallel ranks)";
  if (!m.transformer || !m.transformer->moe) return what + " needs a model with routed experts (moe)";
  if (!s.sequence_parallel)
    return what + " below tp = " + std::to_string(s.tp) +
           " needs strategy.sequence_parallel = true (Megatron-Core runs MoE with tp > 1 only with it)";
  return "";
}

ParamGatherOverlap param_gather_overlap(const Strategy& s, const Model& m) {
  if (!s.param_gather_overlap || s.per_layer() || m.has_tables() || s.zero == 0)
    return ParamGatherOverlap::None;
  return s.zero >= 3 ? ParamGatherOverlap::Prefetch : ParamGatherOverlap::BeforeForward;
}

void check_context_parallel(const Workload& w, std::uint32_t cp) {
  const std::string problem = context_parallel_problem(w, cp);
  if (!problem.empty()) throw InvalidDesign(problem, "key strategy.cp");
}

Strategy resolve_strategy(const StrategySpec& spec, const Workload& w, std::uint32_t gpus) {
  Strategy s;
  // Every knob as written; dp and the microbatch count are resolved below.
  static_cast<StrategyKnobs&>(s) = spec;
  // The degrees' names and product as errors spell them (cp only when set).
  const std::uint64_t model_ranks = std::uint64_t{s.tp} * s.pp * s.cp;
  if (spec.dp == 0) {
    if (gpus % model_ranks != 0) {
      std::string what = s.cp > 1 ? "tp*pp*cp = " : "tp*pp = ";
      what += std::to_string(model_ranks);
      what += " does not divide the ";
      what += std::to_string(gpus);
      what += " GPUs";
      throw InvalidDesign(what, "key strategy.tp");
    }
    s.dp = static_cast<std::uint32_t>(gpus / model_ranks);
  }
  if (s.dp * model_ranks != gpus) {
    std::string what = s.cp > 1 ? "dp*tp*pp*cp = " : "dp*tp*pp = ";
    for (const std::uint32_t degree : {s.dp, s.tp, s.pp}) {
      what += std::to_string(degree);
      what += "*";
    }
    what.pop_back();
    if (s.cp > 1) {
      what += "*";
      what += std::to_string(s.cp);
    }
    what += " is not the ";
    what += std::to_string(gpus);
    what += " GPUs";
    throw InvalidDesign(what, "key strategy.dp");
  }
  if (spec.microbatch_size > 0) {
    const double mbs = spec.microbatch_size;
    const double replica = w.global_batch / s.dp;
    if (!divides(replica, mbs))
      throw InvalidDesign(
          "microbatch size " + num(mbs) + " does not divide the " + num(replica) + " samples per replica",
          "key strategy.microbatch_size");
    s.microbatches = static_cast<std::uint32_t>(replica / mbs);
  }
  if (!s.layer_degree.empty() && s.layer_degree.size() != w.model.layers.size())
    throw BadInput(
        "expected " + std::to_string(w.model.layers.size()) + " degrees, one per layer of " + w.model.name,
        "key strategy.layer_degrees");
  if (!s.table_owner.empty() && s.table_owner.size() != w.model.tables.size())
    throw BadInput(
        "expected " + std::to_string(w.model.tables.size()) + " ranks, one per table of " + w.model.name,
        "key strategy.table_owners");
  validate_strategy(s, w, gpus);
  return s;
}

StrategySpec spec_of(const Strategy& s) {
  StrategySpec spec;
  static_cast<StrategyKnobs&>(spec) = s;  // microbatch_size stays 0: the count is resolved
  return spec;
}

void validate_strategy(const Strategy& s, const Workload& w, std::uint32_t gpus) {
  const Model& m = w.model;
  if (s.dp == 0 || s.tp == 0 || s.pp == 0 || s.cp == 0 || s.ep == 0 || s.microbatches == 0)
    throw BadInput("strategy degrees must be at least 1", "key strategy.dp");
  if (static_cast<std::uint64_t>(s.dp) * s.tp * s.pp * s.cp != gpus)
    throw InvalidDesign(std::string(s.cp > 1 ? "dp*tp*pp*cp" : "dp*tp*pp") + " = " +
                            std::to_string(std::uint64_t{s.dp} * s.tp * s.pp * s.cp) + " is not the " +
                            std::to_string(gpus) + " GPUs",
                        "key strategy.dp");
  if (s.cp > 1) check_context_parallel(w, s.cp);
  if (const std::string problem = expert_tensor_problem(m, s); !problem.empty())
    throw InvalidDesign(problem, "key strategy.etp");
  if (const std::string problem = expert_parallel_problem(m, s.ep, s.grad_replicas(), s.tp / s.expert_tp());
      !problem.empty())
    throw InvalidDesign(problem, "key strategy.ep");
  if (m.transformer) {
    if (s.tp > m.transformer->heads)
      throw InvalidDesign("tp = " + std::to_string(s.tp) + " exceeds the " +
                              std::to_string(m.transformer->heads) + " attention heads of " + m.name,
                          "key strategy.tp");
    if (m.transformer->heads % s.tp != 0)
      throw InvalidDesign("tp = " + std::to_string(s.tp) + " does not divide the " +
                              std::to_string(m.transformer->heads) + " attention heads of " + m.name,
                          "key strategy.tp");
    check_tp_against_kv_heads(m, s.tp);
  } else if (s.recompute == Recompute::Selective) {
    throw InvalidDesign("selective recomputation recomputes attention: it needs a transformer model",
                        "key strategy.recompute");
  } else if (s.recompute_layers > 0) {
    throw InvalidDesign("strategy.recompute_layers counts transformer blocks: it needs a transformer model",
                        "key strategy.recompute_layers");
  }
  if (!m.transformer && s.tp > 1) {
    throw InvalidDesign(
        "tensor parallelism (tp > 1) needs a transformer model; use strategy.layer_degrees for " + m.name,
        "key strategy.tp");
  }
  // With the ends counted (Megatron-Core's account_for_embedding/loss_in_pipeline_split) the embedding and
  // the loss take a block's place each: a model chunk may hold one of them alone.
  const std::uint64_t units = pipeline_slots(m, s.stage_split);
  if (s.pp > units)
    throw InvalidDesign("pp = " + std::to_string(s.pp) + " exceeds the " + std::to_string(units) +
                            (units == m.pipeline_units() ? " layers of " : " pipeline slots of ") + m.name,
                        "key strategy.pp");
  if (s.pp > 1 && m.has_tables())
    throw InvalidDesign("pipeline parallelism is not supported for models with embedding tables",
                        "key strategy.pp");
  if (s.batch_split == BatchSplit::Proportional) {
    // Whole samples per replica and microbatch: the batch splits into microbatch rounds, each
    // round's samples over the replicas, at least one each.
    if (!divides(w.global_batch, s.microbatches))
      throw InvalidDesign("global batch " + num(w.global_batch) + " is not divisible by " +
                              std::to_string(s.microbatches) + " microbatches",
                          "key strategy.microbatches");
    if (w.global_batch / s.microbatches < s.dp)
      throw InvalidDesign("a proportional split needs at least one sample per replica and microbatch (" +
                              num(w.global_batch / s.microbatches) +
                              " samples, dp = " + std::to_string(s.dp) + ")",
                          "key strategy.batch_split");
    if (s.per_layer() || m.has_tables())
      throw InvalidDesign("a proportional split needs a global strategy without embedding tables",
                          "key strategy.batch_split");
  } else if (!divides(w.global_batch, s.dp))
    throw InvalidDesign(
        "global batch " + num(w.global_batch) + " is not divisible by dp = " + std::to_string(s.dp),
        "key strategy.dp");
  else if (!divides(w.global_batch / s.dp, s.microbatches))
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
    if (s.pp < 2) throw InvalidDesign("the interleaved schedule needs pp >= 2", "key strategy.pp");
    if (static_cast<std::uint64_t>(s.pp) * s.virtual_stages > units)
      throw InvalidDesign("pp * virtual_stages = " + std::to_string(std::uint64_t{s.pp} * s.virtual_stages) +
                              " model chunks exceed the " + std::to_string(units) +
                              (units == m.pipeline_units() ? " layers of " : " pipeline slots of ") + m.name,
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
  if (s.compression == Compression::None && !s.sfb_layers.empty())
    throw BadInput("SFB layers are set but strategy.compression = none", "key strategy.compression");
  if (s.compression == Compression::Sfb && s.zero > 0)
    throw InvalidDesign("sufficient-factor broadcasting replaces the gradient AllReduce: it needs ZeRO 0",
                        "key strategy.compression");
  if (!s.sfb_layers.empty() && (s.per_layer() || m.has_tables()))
    throw InvalidDesign("sufficient factors need a global strategy without embedding tables",
                        "key strategy.compression");
  for (auto l : s.sfb_layers)
    if (l >= m.layers.size() || !(m.layers[l].sfb_elements > 0))
      throw BadInput("layer " + std::to_string(l) + " cannot send sufficient factors",
                     "key strategy.compression");
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

}  // namespace toposweep
