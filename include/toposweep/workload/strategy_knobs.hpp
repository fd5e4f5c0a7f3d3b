#pragma once
// The strategy knobs as one table: every member of StrategyKnobs (what Strategy and StrategySpec
// share) with its names, type, default, doc line, where it matters for a shape and the values the
// strategy search tries. The strategy.* keys and their parsing, the strategy JSON, the optimize.*
// value lists, the sweep's knob names, equality and the spec <-> strategy copies follow it.
// Adding a knob: a member of StrategyKnobs, a row of kStrategyKnobs, and the code that models it
// (a knob the exact search varies also needs its search list in the row and its level in
// kEnumerationOrder: docs/architecture.md, "Open sets").
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "toposweep/util/config_keys.hpp"
#include "toposweep/workload/strategy.hpp"

namespace toposweep {

// A knob's member; its type is the knob's type: a flag, a count (std::uint32_t; the ZeRO stage a
// std::uint8_t), a size in bytes (double), a list of counts, or one of the enums.
using KnobMember =
    std::variant<bool StrategyKnobs::*, std::uint32_t StrategyKnobs::*, std::uint8_t StrategyKnobs::*,
                 double StrategyKnobs::*, std::vector<std::uint32_t> StrategyKnobs::*,
                 PipelineSchedule StrategyKnobs::*, Recompute StrategyKnobs::*, TpOverlap StrategyKnobs::*,
                 BatchSplit StrategyKnobs::*, StageSplit StrategyKnobs::*, Compression StrategyKnobs::*,
                 RecomputeModules StrategyKnobs::*, EpDispatcher StrategyKnobs::*>;

// A named value of an enum knob (the enum's underlying value).
struct KnobValue {
  std::string_view name;
  std::uint8_t value;
};

// Where a knob can change a strategy of shape dp x tp x pp. Elsewhere the enumerator and the
// sweep's all(...) keep its default, so no strategy is visited twice (the models may add their
// own conditions: mixed devices for the splits, factor-sending layers for compression).
enum class KnobScope : std::uint8_t { Always, TensorParallel, DataParallel, Pipeline };

// When strategy_to_json writes the knob: always, only when not its default (lists: non-empty), or
// only with the interleaved schedule (the chunk count).
enum class KnobJson : std::uint8_t { Always, UnlessDefault, Interleaved };

// What the strategy search's local moves (MCMC, opt/strategy_search.cpp) do with a knob: nothing
// (not a knob the global enumeration varies), change it as one move, or change it together with
// the row before it (dp with tp and pp: the degrees are one move; the chunk count goes with the
// schedule).
enum class KnobMove : std::uint8_t { None, Own, WithPrevious };

struct StrategyKnob {
  std::string_view name;               // the key strategy.<name>, the sweep's knob; empty: not a key
  std::string_view json;               // the strategy JSON's key
  KnobMember member;                   // the StrategyKnobs member; its type is the knob's
  std::string_view default_text = {};  // the key's default as --list-keys prints it ("": optional)
  std::string_view doc = {};           // the key's help line
  std::int64_t min = 0, max = 0;       // counts and lists of counts: the key's range
  // Enums: the names, in the order help, checks and errors list them; `fold`: the key's text is
  // trimmed and lower-cased before it is compared (and shown in errors as such); `parse`, when
  // set, reads the text instead (accepting `synonyms` too); `unknown` names the knob in an error
  // ("unknown schedule 'x' (1f1b, gpipe or interleaved)"; empty: "'x' is not a or b"), `note`
  // ends it.
  std::span<const KnobValue> values = {};
  bool fold = true;
  std::optional<std::uint8_t> (*parse)(std::string_view) = nullptr;
  std::span<const std::string_view> synonyms = {};
  std::string_view unknown = {}, note = {};
  // A set of the values (bits of the underlying value) written as a comma list of their names
  // rather than one of them: strategy.recompute_modules.
  bool flags = false;
  KnobJson json_when = KnobJson::Always;
  KnobScope scope = KnobScope::Always;
  // The strategy search: optimize.<search_key> lists the values tried (empty: not a value list),
  // its default and help line.
  std::string_view search_key = {}, search_default = {}, search_doc = {};
  bool sweep = false;  // a knob of the sweep's dpNtpNppN/knob=value spelling and all(...)
  KnobMove move = KnobMove::None;
};

inline constexpr KnobValue kScheduleValues[] = {
    {"1f1b", static_cast<std::uint8_t>(PipelineSchedule::OneFOneB)},
    {"gpipe", static_cast<std::uint8_t>(PipelineSchedule::GPipe)},
    {"interleaved", static_cast<std::uint8_t>(PipelineSchedule::Interleaved)}};
inline constexpr KnobValue kRecomputeValues[] = {
    {"none", static_cast<std::uint8_t>(Recompute::None)},
    {"selective", static_cast<std::uint8_t>(Recompute::Selective)},
    {"full", static_cast<std::uint8_t>(Recompute::Full)}};
inline constexpr KnobValue kRecomputeModuleValues[] = {
    {"core_attn", static_cast<std::uint8_t>(RecomputeModules::CoreAttn)},
    {"layernorm", static_cast<std::uint8_t>(RecomputeModules::Layernorm)},
    {"mla_up_proj", static_cast<std::uint8_t>(RecomputeModules::MlaUpProj)},
    {"mlp", static_cast<std::uint8_t>(RecomputeModules::Mlp)},
    {"moe_act", static_cast<std::uint8_t>(RecomputeModules::MoeAct)}};
inline constexpr std::string_view kRecomputeSynonyms[] = {"true", "false", "yes", "no",
                                                          "on",   "off",   "1",   "0"};
inline constexpr KnobValue kTpOverlapValues[] = {{"none", static_cast<std::uint8_t>(TpOverlap::None)},
                                                 {"backward", static_cast<std::uint8_t>(TpOverlap::Backward)},
                                                 {"full", static_cast<std::uint8_t>(TpOverlap::Full)}};
inline constexpr KnobValue kEpDispatcherValues[] = {
    {"alltoall", static_cast<std::uint8_t>(EpDispatcher::AllToAll)},
    {"deepep", static_cast<std::uint8_t>(EpDispatcher::DeepEp)}};
inline constexpr KnobValue kBatchSplitValues[] = {
    {"even", static_cast<std::uint8_t>(BatchSplit::Even)},
    {"proportional", static_cast<std::uint8_t>(BatchSplit::Proportional)}};
inline constexpr KnobValue kStageSplitValues[] = {{"even", static_cast<std::uint8_t>(StageSplit::Even)},
                                                  {"speed", static_cast<std::uint8_t>(StageSplit::Speed)},
                                                  {"ends", static_cast<std::uint8_t>(StageSplit::Ends)}};
inline constexpr KnobValue kCompressionValues[] = {{"none", static_cast<std::uint8_t>(Compression::None)},
                                                   {"sfb", static_cast<std::uint8_t>(Compression::Sfb)}};

namespace detail {
inline std::optional<std::uint8_t> parse_recompute_value(std::string_view text) {
  const auto r = parse_recompute(text);
  return r ? std::optional<std::uint8_t>(static_cast<std::uint8_t>(*r)) : std::nullopt;
}
inline std::optional<std::uint8_t> parse_recompute_modules_value(std::string_view text) {
  const auto r = parse_recompute_modules(text);
  return r ? std::optional<std::uint8_t>(static_cast<std::uint8_t>(*r)) : std::nullopt;
}
inline std::optional<std::uint8_t> parse_exact_schedule(std::string_view text) {
  for (const KnobValue& v : kScheduleValues)
    if (text == v.name) return v.value;
  return std::nullopt;
}
}  // namespace detail

// Every knob, in the order of `toposweep --list-keys` (strategy.microbatch_size, a spec-only key,
// follows strategy.microbatches; the deprecated strategy.zero1 follows strategy.zero).
inline constexpr StrategyKnob kStrategyKnobs[] = {
    {.name = "dp",
     .json = "dp",
     .member = &StrategyKnobs::dp,
     .default_text = "0",
     .doc = "data-parallel degree (0: all GPUs not used by tp*pp)",
     .min = 0,
     .max = 1 << 24,
     .move = KnobMove::Own},
    {.name = "tp",
     .json = "tp",
     .member = &StrategyKnobs::tp,
     .default_text = "1",
     .doc = "tensor-parallel degree (transformers; divides the head count)",
     .min = 1,
     .max = 1 << 24,
     .move = KnobMove::WithPrevious},
    {.name = "pp",
     .json = "pp",
     .member = &StrategyKnobs::pp,
     .default_text = "1",
     .doc = "pipeline-parallel stages",
     .min = 1,
     .max = 1 << 24,
     .move = KnobMove::WithPrevious},
    {.name = "cp",
     .json = "cp",
     .member = &StrategyKnobs::cp,
     .default_text = "1",
     .doc = "context-parallel degree: each sequence split over cp ranks (ring attention; transformers with "
            "fused attention, seq_len a multiple of 2 cp)",
     .min = 1,
     .max = 1 << 24,
     .json_when = KnobJson::UnlessDefault,
     .search_key = "cp",
     .search_default = "1",
     .search_doc = "strategy search: context-parallel degrees tried (transformers with fused attention)",
     .sweep = true,
     .move = KnobMove::WithPrevious},
    {.name = "ep",
     .json = "ep",
     .member = &StrategyKnobs::ep,
     .default_text = "1",
     .doc = "expert-parallel degree: a MoE model's routed experts split over ep of the dp*cp ranks (divides "
            "dp*cp and the expert count)",
     .min = 1,
     .max = 1 << 24,
     .json_when = KnobJson::UnlessDefault,
     .scope = KnobScope::DataParallel,
     .search_key = "ep",
     .search_default = "1",
     .search_doc = "strategy search: expert-parallel degrees tried (MoE models; those dividing dp*cp and the "
                   "expert count)",
     .sweep = true,
     .move = KnobMove::Own},
    {.name = "etp",
     .json = "etp",
     .member = &StrategyKnobs::etp,
     .default_text = "0",
     .doc = "expert tensor parallelism (Megatron-Core's parallel folding): 0: the routed experts split over "
            "the tp ranks; a divisor of tp: split over that many of them (1: whole experts), the ep group "
            "folded over tp/etp*dp*cp ranks (MoE models with sequence parallelism)",
     .min = 0,
     .max = 1 << 24,
     .json_when = KnobJson::UnlessDefault,
     .search_key = "etp",
     .search_default = "0",
     .search_doc =
         "strategy search: expert tensor parallelism tried (0: experts split over tp; a divisor e < tp of "
         "tp: split over e ranks, 1 whole experts, ep folded over tp/e*dp*cp; MoE models with tp > 1 and "
         "sequence parallelism; values that do not divide a shape's tp are skipped there)",
     .sweep = true},
    {.name = "ep_overlap",
     .json = "ep_overlap",
     .member = &StrategyKnobs::ep_overlap,
     .default_text = "false",
     .doc =
         "expert parallelism: the dispatch/combine All-to-Alls run on their own stream under the pass's "
         "compute (another microbatch's, as Megatron-Core's EP overlap and DualPipe pair them) in the passes "
         "the schedule pairs (not the pipeline's warm-up and cool-down); false: exposed on the compute "
         "stream",
     .json_when = KnobJson::UnlessDefault},
    {.name = "ep_sms",
     .json = "ep_sms",
     .member = &StrategyKnobs::ep_sms,
     .default_text = "20",
     .doc =
         "expert parallelism with ep_overlap: SMs the overlapped dispatch/combine kernels occupy while they "
         "run, taken from the pass's compute (DeepEP's default and DeepSeek-V3's 20, arXiv:2412.19437 Sec. "
         "3.2.2; NCCL's All-to-All takes its channel count); 0: none",
     .min = 0,
     .max = 1 << 12,
     .json_when = KnobJson::UnlessDefault},
    {.name = "ep_dispatcher",
     .json = "ep_dispatcher",
     .member = &StrategyKnobs::ep_dispatcher,
     .default_text = "alltoall",
     .doc =
         "expert parallelism: how tokens reach their experts: alltoall (NCCL's All-to-All, Megatron-Core's "
         "alltoall dispatcher: one copy per token and expert) or deepep (DeepEP / HybridEP, Megatron-Core's "
         "flex dispatcher: one copy per token and destination node, forwarded inside it: fewer network "
         "bytes with top_k > 1)",
     .values = kEpDispatcherValues,
     .unknown = "EP dispatcher",
     .json_when = KnobJson::UnlessDefault},
    {.name = "microbatches",
     .json = "microbatches",
     .member = &StrategyKnobs::microbatches,
     .default_text = "1",
     .doc = "microbatches per iteration and pipeline",
     .min = 1,
     .max = 1 << 24,
     .sweep = true,
     .move = KnobMove::Own},
    {.name = "schedule",
     .json = "schedule",
     .member = &StrategyKnobs::schedule,
     .default_text = "1f1b",
     .doc = "pipeline schedule: 1f1b, gpipe or interleaved",
     .values = kScheduleValues,
     .fold = false,
     .parse = detail::parse_exact_schedule,
     .unknown = "schedule",
     .scope = KnobScope::Pipeline,
     .search_key = "schedules",
     .search_default = "1f1b,gpipe,interleaved",
     .search_doc = "strategy search: pipeline schedules tried (pp > 1 only)",
     .sweep = true,
     .move = KnobMove::Own},
    {.name = "virtual_stages",
     .json = "virtual_stages",
     .member = &StrategyKnobs::virtual_stages,
     .default_text = "1",
     .doc = "model chunks per device with the interleaved schedule (>= 2 there)",
     .min = 1,
     .max = 1 << 24,
     .json_when = KnobJson::Interleaved,
     .scope = KnobScope::Pipeline,
     .sweep = true,
     .move = KnobMove::WithPrevious},
    {.name = "recompute",
     .json = "recompute",
     .member = &StrategyKnobs::recompute,
     .default_text = "none",
     .doc =
         "activation recomputation: none, selective (the modules of strategy.recompute_modules; default the "
         "attention core) or full (true/false: full/none)",
     .values = kRecomputeValues,
     .fold = false,
     .parse = detail::parse_recompute_value,
     .synonyms = kRecomputeSynonyms,
     .note = " (true/false)",
     .search_key = "recompute",
     .search_default = "none,selective,full",
     .search_doc = "strategy search: activation recomputation tried",
     .sweep = true,
     .move = KnobMove::Own},
    // Not searched: the strategy search and the sweep's all(...) keep the configured list (a sweep
    // varies it as an explicit axis, alternatives separated by '|').
    {.name = "recompute_modules",
     .json = "recompute_modules",
     .member = &StrategyKnobs::recompute_modules,
     .default_text = "core_attn",
     .doc = "with strategy.recompute = selective: the modules recomputed, a comma list of Megatron-Core's "
            "names: core_attn (the attention core), layernorm, mla_up_proj, mlp, moe_act (docs/models.md)",
     .values = kRecomputeModuleValues,
     .parse = detail::parse_recompute_modules_value,
     .unknown = "recompute module list",
     .flags = true,
     .json_when = KnobJson::UnlessDefault},
    // Not searched either: the configured count holds in every strategy visited.
    {.name = "recompute_layers",
     .json = "recompute_layers",
     .member = &StrategyKnobs::recompute_layers,
     .default_text = "0",
     .doc =
         "with strategy.recompute = full: the transformer blocks of each pipeline chunk that recompute, the "
         "first ones, the rest keeping their activations (Megatron-Core's --recompute-method block "
         "--recompute-num-layers); 0: every block",
     .min = 0,
     .max = 1 << 24,
     .json_when = KnobJson::UnlessDefault},
    {.name = "sequence_parallel",
     .json = "sequence_parallel",
     .member = &StrategyKnobs::sequence_parallel,
     .default_text = "false",
     .doc =
         "Megatron sequence parallelism: TP AllReduces become ReduceScatter + AllGather, block activations / "
         "tp",
     .scope = KnobScope::TensorParallel,
     .search_key = "sequence_parallel",
     .search_default = "false,true",
     .search_doc = "strategy search: sequence parallelism tried (tp > 1 only)",
     .sweep = true,
     .move = KnobMove::Own},
    {.name = "scatter_gather",
     .json = "scatter_gather",
     .member = &StrategyKnobs::scatter_gather,
     .default_text = "true",
     .doc = "pipeline sends carry 1/tp of the boundary per TP rank, gathered inside the receiving server"},
    {.name = "tp_overlap",
     .json = "tp_overlap",
     .member = &StrategyKnobs::tp_overlap,
     .default_text = "none",
     .doc =
         "TP collectives under GEMMs: none, backward (Megatron-LM async input-gradient collective) or full "
         "(Megatron-Core)",
     .values = kTpOverlapValues,
     .unknown = "TP overlap",
     .scope = KnobScope::TensorParallel,
     .search_key = "tp_overlap",
     .search_default = "none,backward,full",
     .search_doc = "strategy search: TP collective overlap tried (tp > 1 only)",
     .sweep = true,
     .move = KnobMove::Own},
    {.name = "dp_overlap",
     .json = "dp_overlap",
     .member = &StrategyKnobs::dp_overlap,
     .default_text = "true",
     .doc = "gradient buckets reduce during the last backward (false: one reduction after it)",
     .scope = KnobScope::DataParallel,
     .search_key = "dp_overlap",
     .search_default = "true,false",
     .search_doc = "strategy search: gradient reduction overlapped with the backward (dp > 1 only)",
     .sweep = true,
     .move = KnobMove::Own},
    {.name = "param_gather_overlap",
     .json = "param_gather_overlap",
     .member = &StrategyKnobs::param_gather_overlap,
     .default_text = "false",
     .doc =
         "ZeRO 1/2: the updated weights gathered bucket by bucket under the next iteration's first "
         "forward (Megatron-Core's --overlap-param-gather); false: one AllGather after the optimizer step. "
         "ZeRO 3: each pass's gathers bucket by bucket on the DP stream ahead of its layers (FSDP's "
         "prefetch); false: before the pass, on the compute stream",
     .json_when = KnobJson::UnlessDefault,
     .scope = KnobScope::DataParallel},
    {.name = "dp_sms",
     .json = "dp_sms",
     .member = &StrategyKnobs::dp_sms,
     .default_text = "0",
     .doc =
         "SMs the data-parallel collectives occupy while they overlap the stage's compute (gradient "
         "buckets under the backward, weight gathers under the forward), which that compute loses, charged "
         "before the optimizer step (NCCL takes one SM per channel); 0: none",
     .min = 0,
     .max = 1 << 12,
     .json_when = KnobJson::UnlessDefault,
     .scope = KnobScope::DataParallel},
    {.name = "p2p_overlap",
     .json = "p2p_overlap",
     .member = &StrategyKnobs::p2p_overlap,
     .default_text = "true",
     .doc = "pipeline sends on their own stream (false: each send blocks the stage)"},
    {.name = "batch_split",
     .json = "batch_split",
     .member = &StrategyKnobs::batch_split,
     .default_text = "even",
     .doc = "data parallelism on unequal devices: even (same microbatch everywhere) or proportional (each "
            "replica's share of every microbatch in proportion to its compute rate, whole samples)",
     .values = kBatchSplitValues,
     .json_when = KnobJson::UnlessDefault,
     .scope = KnobScope::DataParallel,
     .search_key = "batch_splits",
     .search_default = "even,proportional",
     .search_doc = "strategy search: batch splits tried on mixed servers (even, proportional; dp > 1)",
     .move = KnobMove::Own},
    {.name = "stage_split",
     .json = "stage_split",
     .member = &StrategyKnobs::stage_split,
     .default_text = "even",
     .doc = "pipeline stages: even (equal blocks / FLOPs), speed (layers in proportion to the compute rate "
            "of the devices each stage runs on) or ends (a transformer's blocks split evenly with the "
            "embedding and the output layer each counted as one block: Megatron-Core's "
            "account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split)",
     .values = kStageSplitValues,
     .json_when = KnobJson::UnlessDefault,
     .scope = KnobScope::Pipeline,
     .search_key = "stage_splits",
     .search_default = "even,speed",
     .search_doc = "strategy search: stage splits tried (even, speed on mixed servers, ends; pp > 1)",
     .move = KnobMove::Own},
    {.name = "compression",
     .json = "compression",
     .member = &StrategyKnobs::compression,
     .default_text = "none",
     .doc = "data-parallel gradients: none, or sfb (sufficient-factor broadcasting of dense and conv layers, "
            "lossless, per layer where the network model says it is faster)",
     .values = kCompressionValues,
     .json_when = KnobJson::UnlessDefault,
     .scope = KnobScope::DataParallel,
     .search_key = "compressions",
     .search_default = "none,sfb",
     .search_doc =
         "strategy search: gradient compression tried (none, sfb; dp > 1, ZeRO 0, dense/conv layers)",
     .move = KnobMove::Own},
    {.name = "grad_accum_fusion",
     .json = "grad_accum_fusion",
     .member = &StrategyKnobs::grad_accum_fusion,
     .default_text = "true",
     .doc =
         "weight-gradient GEMMs accumulate into the gradient buffer (false: a separate add per microbatch, "
         "Megatron-LM before 2022-02)"},
    // The JSON also writes zero1 (stage >= 1) for compatibility; strategy.zero1 is its deprecated key.
    {.name = "zero",
     .json = "zero_stage",
     .member = &StrategyKnobs::zero,
     .default_text = "0",
     .doc = "ZeRO stage over the data-parallel group: 0 none, 1 optimizer state sharded, 2 also gradients, 3 "
            "also weights",
     .min = 0,
     .max = kMaxZeroStage,
     .scope = KnobScope::DataParallel,
     .search_key = "zero_stages",
     .search_default = "0,1,2,3",
     .search_doc = "strategy search: ZeRO stages tried (any of 0, 1, 2, 3; only 0 at dp = 1)",
     .sweep = true,
     .move = KnobMove::Own},
    {.name = "bucket_size",
     .json = "bucket_bytes",
     .member = &StrategyKnobs::bucket_bytes,
     .default_text = "25MiB",
     .doc = "gradient AllReduce bucket size"},
    {.name = "layer_degrees",
     .json = "layer_degrees",
     .member = &StrategyKnobs::layer_degree,
     .default_text = "",
     .doc = "per-layer degrees, one per model layer (1: data parallel, k: model parallel over k GPUs)",
     .min = 1,
     .max = 1 << 24,
     .json_when = KnobJson::UnlessDefault},
    {.name = "table_owners",
     .json = "table_owners",
     .member = &StrategyKnobs::table_owner,
     .default_text = "",
     .doc = "GPU rank owning each embedding table (default: round robin)",
     .min = 0,
     .max = 1 << 30,
     .json_when = KnobJson::UnlessDefault},
    // Chosen per design point by the network model (opt/compression.hpp), never read from a key.
    {.name = "",
     .json = "sfb_layers",
     .member = &StrategyKnobs::sfb_layers,
     .json_when = KnobJson::UnlessDefault},
};

// The exact search's levels (for_each_strategy), outermost first: the order it visits strategies
// in, part of the optimizer's answers. `memory`: the memory per GPU depends on the knob; the
// enumerator checks the memory after the last such level (none after it may change it).
struct EnumerationLevel {
  KnobMember member;
  bool memory = false;
};
inline constexpr EnumerationLevel kEnumerationOrder[] = {
    {&StrategyKnobs::microbatches, true},
    {&StrategyKnobs::schedule, true},
    {&StrategyKnobs::virtual_stages, true},
    {&StrategyKnobs::recompute, true},
    {&StrategyKnobs::zero, true},
    {&StrategyKnobs::sequence_parallel, true},
    {&StrategyKnobs::ep, true},
    {&StrategyKnobs::etp, true},
    {&StrategyKnobs::tp_overlap},
    {&StrategyKnobs::dp_overlap},
    {&StrategyKnobs::batch_split},
    {&StrategyKnobs::stage_split, true},
    {&StrategyKnobs::compression},
};

// The row of strategy.<name> (or of a sweep knob), or nullptr.
constexpr const StrategyKnob* find_strategy_knob(std::string_view name) {
  for (const StrategyKnob& k : kStrategyKnobs)
    if (!k.name.empty() && k.name == name) return &k;
  return nullptr;
}

// The row of a member, or nullptr.
constexpr const StrategyKnob* find_strategy_knob(const KnobMember& member) {
  for (const StrategyKnob& k : kStrategyKnobs)
    if (k.member == member) return &k;
  return nullptr;
}

// An enum knob's names as its errors list them: "a, b or c".
std::string knob_value_names(const StrategyKnob& k);
// The name of an enum knob's value (the JSON, the optimizer's lists); "?" for no name.
std::string_view knob_value_name(const StrategyKnob& k, std::uint8_t value);
// A flags knob's value as the JSON writes it: the names of its set bits, comma-separated.
std::string knob_flag_names(const StrategyKnob& k, std::uint8_t value);

// The knob's value of `s` as the JSON writes it (enums by name).
nlohmann::json knob_json(const StrategyKnob& k, const StrategyKnobs& s);
// Whether the knob of `s` is its default value (StrategyKnobs{}'s).
bool knob_is_default(const StrategyKnob& k, const StrategyKnobs& s);

// A flag, count or enum knob's value as a number (false 0, true 1; an enum's underlying value):
// how the enumerator carries the values it tries. Sizes and lists have none (0; set_knob ignores them).
std::uint32_t knob_code(const StrategyKnob& k, const StrategyKnobs& s);
void set_knob(const StrategyKnob& k, StrategyKnobs& s, std::uint32_t code);

// The position of a row in kStrategyKnobs.
constexpr std::size_t knob_index(const StrategyKnob& k) {
  return static_cast<std::size_t>(&k - kStrategyKnobs);
}

// The values of the row's search_default list (optimize.<search_key>'s default), as codes.
std::vector<std::uint32_t> knob_search_default(const StrategyKnob& k);

// The local moves from `a` to `b`: the knobs (moves, KnobMove) that differ, a row changed together
// with the one before it counting once.
int knob_moves(const StrategyKnobs& a, const StrategyKnobs& b);
// Copies the knobs of every move (the global strategy) from `from` to `to`.
void copy_move_knobs(const StrategyKnobs& from, StrategyKnobs& to);

// The key strategy.<name> of a knob: its default, help line and a check by its type (a flag, a
// count in [min, max], a size, a list of counts, one of the enum's names or synonyms).
KeySpec knob_key(const StrategyKnob& k);
// The key optimize.<search_key>: a list of the knob's values (counts as numbers in [min, max]).
KeySpec knob_search_key(const StrategyKnob& k);

namespace detail {
// Converts to anything: counts the members of an aggregate by how many it can be built from.
struct AnyKnob {
  template <class T>
  operator T() const;  // only named in unevaluated operands
};
template <class T, class... Members>
constexpr std::size_t knob_members() {
  if constexpr (requires { T{Members{}..., AnyKnob{}}; })
    return knob_members<T, Members..., AnyKnob>();
  else
    return sizeof...(Members);
}

constexpr bool strategy_knobs_are_well_formed() {
  for (std::size_t i = 0; i < std::size(kStrategyKnobs); ++i) {
    const StrategyKnob& k = kStrategyKnobs[i];
    if (k.json.empty() || k.member.valueless_by_exception()) return false;
    if (!k.name.empty() && k.doc.empty()) return false;
    const bool is_enum = k.member.index() >= 5;
    if (is_enum != !k.values.empty()) return false;  // enums and only enums have names
    if (!k.search_key.empty() && (k.search_default.empty() || k.search_doc.empty())) return false;
    for (std::size_t j = 0; j < i; ++j) {
      const StrategyKnob& g = kStrategyKnobs[j];
      if ((!k.name.empty() && g.name == k.name) || g.json == k.json || g.member == k.member) return false;
      if (!k.search_key.empty() && g.search_key == k.search_key) return false;
    }
  }
  return true;
}
}  // namespace detail

static_assert(detail::strategy_knobs_are_well_formed(),
              "kStrategyKnobs: unique names, JSON keys, members and search keys; docs; names for enums only");
static_assert(detail::knob_members<StrategyKnobs>() == std::size(kStrategyKnobs),
              "every StrategyKnobs member needs its row in kStrategyKnobs");

}  // namespace toposweep
