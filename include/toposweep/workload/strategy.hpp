#pragma once
// A parallelization strategy: the global 3-D split (data x tensor x pipeline), the pipeline's
// microbatching and schedule, memory savers (activation recompute, ZeRO stages 1-3: optimizer
// state, gradients and weights sharded over the data-parallel group), gradient bucketing, and
// two finer-grained choices TopoOpt's MCMC mutates: per-layer degrees for non-transformer
// models and table-wise placement of embedding tables.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toposweep/util/config.hpp"
#include "toposweep/workload/recompute_modules.hpp"
#include "toposweep/workload/workload.hpp"

namespace toposweep {

// Interleaved: Megatron-LM's interleaved 1F1B (Narayanan et al. SC'21), each device holding
// `virtual_stages` model chunks (chunk c on device c % pp).
enum class PipelineSchedule : std::uint8_t { GPipe, OneFOneB, Interleaved };
const char* schedule_name(PipelineSchedule s);  // "gpipe", "1f1b", "interleaved"

// Activation recomputation (Korthikanti et al. 2022): none; selective = the attention core
// (QK^T, softmax, dropout, attention x V) is recomputed in backward instead of keeping its s x s
// tensors; full = only each layer's input is kept and the whole forward runs again. Selective
// recomputes the modules of strategy.recompute_modules (recompute_modules.hpp; by default the
// attention core).
enum class Recompute : std::uint8_t { None, Selective, Full };
const char* recompute_name(Recompute r);  // "none", "selective", "full"
// "none", "selective", "full", and the booleans (true = full, false = none); nullopt otherwise.
std::optional<Recompute> parse_recompute(std::string_view text);

// Which tensor-parallel collectives run under a GEMM instead of between kernels: none (every
// collective blocks, Megatron-LM before 2021-09); backward (Megatron-LM's asynchronous
// input-gradient collective of the column-parallel layers, overlapped with their weight-gradient
// GEMM, and with sequence parallelism the re-gather of the saved input with the input-gradient
// GEMM); full (Megatron-Core / Transformer Engine: every TP collective pipelined with its GEMM).
enum class TpOverlap : std::uint8_t { None, Backward, Full };
// How a MoE layer's tokens reach their experts' ranks (strategy.ep_dispatcher): alltoall (NCCL's
// All-to-All, Megatron-Core's alltoall dispatcher: one copy per (token, expert)) or deepep (DeepEP /
// HybridEP through Megatron-Core's flex dispatcher: one copy per destination node, forwarded inside
// it; util/alltoall_dedup.hpp).
enum class EpDispatcher : std::uint8_t { AllToAll, DeepEp };
const char* tp_overlap_name(TpOverlap o);  // "none", "backward", "full"

// How a global batch is split over data-parallel replicas on unequal devices: even (every replica
// the same microbatch) or proportional to each replica's compute rate, in whole samples (each
// replica's microbatch differs; the gradient AllReduce still joins every replica).
enum class BatchSplit : std::uint8_t { Even, Proportional };
const char* batch_split_name(BatchSplit b);  // "even", "proportional"
// How layers are split over pipeline stages: even (today's rule), in proportion to the compute
// rate of the devices each stage lands on, or even with a transformer's embedding and output layer
// each counted as one block (Megatron-Core's account_for_embedding_in_pipeline_split and
// account_for_loss_in_pipeline_split).
enum class StageSplit : std::uint8_t { Even, Speed, Ends };
const char* stage_split_name(StageSplit s);  // "even", "speed", "ends"
// Data-parallel gradient compression: none, or sufficient-factor broadcasting (SFB: dense and
// conv layers whose factors are cheaper to AllGather than their gradient is to AllReduce send
// the factors; lossless). The layers are chosen per design point by the network model
// (opt/compression.hpp) and stored in Strategy::sfb_layers.
enum class Compression : std::uint8_t { None, Sfb };
const char* compression_name(Compression c);  // "none", "sfb"

// Every knob of a strategy, declared once: a Strategy is these values resolved for a GPU count,
// a StrategySpec (spec.hpp) the same knobs as the user wrote them. Each member has its row in
// kStrategyKnobs (strategy_knobs.hpp): its keys, JSON, docs and search lists come from there.
struct StrategyKnobs {
  std::uint32_t dp = 1, tp = 1, pp = 1;
  // Context parallelism (Megatron-Core's ring attention): each sequence split over cp ranks, each
  // holding s / cp tokens (two load-balanced causal chunks of s / 2cp); KV blocks pass around the
  // CP group under the attention kernels; gradients reduce over dp x cp.
  std::uint32_t cp = 1;
  // Expert parallelism (Megatron-Core): a MoE layer's routed experts split over ep ranks of the
  // dp x cp ranks holding the same dense weights (ep divides dp x cp, and the expert count);
  // tokens reach their experts by an All-to-All over the ep group (dispatch) and come back by
  // another (combine); expert gradients reduce over the dp x cp / ep ranks holding the same experts.
  std::uint32_t ep = 1;
  // Expert tensor parallelism (Megatron-Core's parallel folding, arXiv:2504.14960): the routed
  // experts' GEMMs split over etp ranks instead of tp, the EP group folded over the tp / etp x dp x
  // cp ranks of a stage (Megatron-Core's expert rank order: etp innermost, then ep, then the expert
  // data-parallel ranks). 0: tp (Megatron-Core's default; a strategy may also say tp, the same);
  // otherwise a divisor of tp. With etp < tp and sequence parallelism each rank dispatches its own
  // s / tp tokens; the token dispatcher gathers them over the etp ranks (none with etp = 1: whole
  // experts) and reduce-scatters the experts' outputs back over them.
  std::uint32_t etp = 0;
  // The dispatch/combine All-to-Alls run on a stream of their own under the pass's compute
  // (Megatron-Core's --overlap-moe-expert-parallel-comm, DeepSeek-V3's DualPipe: another
  // microbatch's compute hides them) in the passes the schedule pairs: not the pipeline's warm-up
  // forwards and cool-down backwards, nor the first forward and last backward without pipelining
  // (Megatron-Core's combined 1F1B); false: on the compute stream, exposed (Megatron-Core's default).
  bool ep_overlap = false;
  // With ep_overlap: the SMs the overlapped dispatch/combine kernels occupy while they run, which
  // the pass's compute loses (DeepEP's default and DeepSeek-V3's 20 of 132, arXiv:2412.19437
  // Sec. 3.2.2; NCCL's All-to-All takes its channel count instead).
  std::uint32_t ep_sms = 20;
  // The dispatch/combine path (EpDispatcher): its All-to-Alls' network bytes.
  EpDispatcher ep_dispatcher = EpDispatcher::AllToAll;
  std::uint32_t microbatches = 1;
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  // Model chunks per device with the interleaved schedule (>= 2 there; 1 otherwise): the layers
  // are split into pp * virtual_stages chunks, device p holding chunks p, p + pp, p + 2 pp, ...
  std::uint32_t virtual_stages = 1;
  Recompute recompute = Recompute::None;
  // With recompute = selective: the modules recomputed (Megatron-Core's --recompute-modules).
  RecomputeModules recompute_modules = RecomputeModules::CoreAttn;
  // With recompute = full: how many transformer blocks of each pipeline chunk recompute, the
  // first ones, the others keeping every activation (Megatron-Core's --recompute-method block
  // --recompute-num-layers N; block_recompute.hpp). 0: every block.
  std::uint32_t recompute_layers = 0;
  bool sequence_parallel = false;  // Megatron-SP: TP AllReduces become RS + AG, activations /tp
  // Megatron's pipeline scatter/gather: each TP rank sends 1/tp of the stage boundary and the
  // receiver all-gathers it inside the server (with sequence parallelism the tensor is already
  // split, so nothing is gathered).
  bool scatter_gather = true;
  TpOverlap tp_overlap = TpOverlap::None;
  // Gradient buckets reduce while the last backward still runs (DDP); false: one reduction after
  // the backward (Megatron-LM's local DDP until 2022).
  bool dp_overlap = true;
  // ZeRO-1/2: the updated weights are all-gathered at the start of the next iteration, bucket by
  // bucket on the DP stream, each layer's first forward waiting for its bucket (Megatron-Core's
  // --overlap-param-gather); false: one AllGather after the optimizer step, before the iteration
  // ends. ZeRO-3: every pass gathers its weights bucket by bucket on the DP stream, each bucket
  // as soon as the one before it is done, each layer waiting for its bucket (FSDP's prefetch: the
  // pass's first bucket exposed, the rest under the layers before them); false: on the compute
  // stream before the pass.
  bool param_gather_overlap = false;
  // The SMs the data-parallel collectives (gradient reductions, weight gathers) occupy while they
  // run, which the stage's compute they overlap loses (NCCL runs a collective on its channel
  // count of SMs, one block each); 0: none, the compute unslowed.
  std::uint32_t dp_sms = 0;
  // Pipeline sends on their own streams; false: every send blocks its stage's compute until it
  // is done (Megatron-LM's p2p exchanges before Megatron-Core).
  bool p2p_overlap = true;
  // The weight-gradient GEMMs accumulate into the gradient buffer (Megatron-LM since 2022-02);
  // false: each microbatch's gradients are added by a separate kernel.
  bool grad_accum_fusion = true;
  // ZeRO stage over the data-parallel group: 0 none, 1 optimizer state sharded, 2 also
  // gradients, 3 also the weights (Rajbhandari et al. 2020: P_os, P_os+g, P_os+g+p).
  std::uint8_t zero = 0;
  double bucket_bytes = 25.0 * 1024 * 1024;  // gradient AllReduce bucket (PyTorch DDP default)
  // Per model layer (same order as Model::layers): 1 = data parallel over all GPUs; k > 1 =
  // model parallel over k consecutive ranks (k divides the GPU count). Empty: all 1. Only
  // with tp = pp = 1 and non-transformer models.
  std::vector<std::uint32_t> layer_degree;
  // Per embedding table: the GPU rank that owns it. Empty: round robin (table i on rank
  // i * gpus / tables, spreading tables over servers).
  std::vector<std::uint32_t> table_owner;
  BatchSplit batch_split = BatchSplit::Even;
  StageSplit stage_split = StageSplit::Even;
  Compression compression = Compression::None;
  // With compression = sfb: the layers (indices into Model::layers) whose gradients travel as
  // sufficient factors. Written by the chooser, not a key; empty: none (identical to no compression).
  std::vector<std::uint32_t> sfb_layers;

  bool operator==(const StrategyKnobs&) const = default;
};

struct Strategy : StrategyKnobs {
  std::uint32_t gpus() const { return dp * tp * pp * cp; }
  // The ranks that hold the same weights and reduce their gradients together: dp x cp.
  std::uint32_t grad_replicas() const { return dp * cp; }
  // The expert tensor-parallel degree (etp, 0 meaning tp).
  std::uint32_t expert_tp() const { return etp != 0 ? etp : tp; }
  // The ranks that hold the same routed experts and reduce their gradients together (Megatron-Core's
  // expert data-parallel group): tp x dp x cp / (etp x ep); dp x cp / ep without folding.
  std::uint32_t expert_replicas() const { return tp / expert_tp() * dp * cp / ep; }
  // Whether the routed experts' gradients reduce apart from the dense ones: over another group
  // (ep > 1 or etp < tp).
  bool experts_apart() const { return ep > 1 || expert_tp() != tp; }
  bool per_layer() const { return !layer_degree.empty(); }
  bool operator==(const Strategy&) const = default;
};

inline constexpr std::uint8_t kMaxZeroStage = 3;

// resolve_strategy(strategy_spec_from_config(config), w, gpus) (spec.hpp), errors re-pointed at
// the line that set the key. strategy.zero (0..3) sets the ZeRO stage; the deprecated
// strategy.zero1 = true means stage 1 (false: 0). Both given: BadInput naming strategy.zero1
// unless zero1 == (zero >= 1).
Strategy strategy_from_config(const Config& config, const Workload& w, std::uint32_t gpus);

// BadInput (naming the strategy key) when the strategy is inconsistent: degrees whose product
// is not `gpus`, tp > heads or not dividing heads, pp > layers, tp > 1 on a non-transformer,
// pp > 1 with embedding tables, global batch not divisible by dp x microbatches, bad per-layer
// degrees or table owners, a ZeRO stage above 3 or with per-layer degrees.
void validate_strategy(const Strategy& s, const Workload& w, std::uint32_t gpus);

// Why context parallelism over `cp` ranks cannot run for this workload, or "" when it can:
// Megatron-Core's ring attention needs a transformer, fused (flash) attention, a sequence of
// 2 cp equal load-balanced chunks (seq_len a multiple of 2 cp) and, here, one device kind.
std::string context_parallel_problem(const Workload& w, std::uint32_t cp);
// The same as a strategy check: throws InvalidDesign naming strategy.cp.
void check_context_parallel(const Workload& w, std::uint32_t cp);
// Why expert parallelism over `ep` ranks cannot run with `replicas` = dp x cp ranks sharing the
// dense weights, or "" when it can: a model with routed experts, ep dividing their count and
// dp x cp (Megatron-Core's rule). `folded` > 1: the EP group folds over that many tensor-parallel
// ranks too (tp / etp, strategy.etp), so ep divides folded x dp x cp.
std::string expert_parallel_problem(const Model& m, std::uint32_t ep, std::uint64_t replicas,
                                    std::uint32_t folded = 1);
// Why strategy.etp cannot run with the rest of `s`, or "" when it can: 0 or tp, or a divisor of tp
// for a model with routed experts with sequence parallelism (Megatron-Core needs it for MoE with
// tp > 1).
std::string expert_tensor_problem(const Model& m, const StrategyKnobs& s);

// Where strategy.param_gather_overlap puts the weight gathers (iteration.cpp), the one rule the
// iteration and the strategy search's bound share: on the 3-D programs (no per-layer degrees, no
// embedding tables), ZeRO-1/2's gather after the optimizer step moves under the next first
// forward (BeforeForward) and ZeRO-3's gathers before every pass go onto the DP stream ahead of
// the layers (Prefetch); None elsewhere, or with the knob off.
enum class ParamGatherOverlap : std::uint8_t { None, BeforeForward, Prefetch };
ParamGatherOverlap param_gather_overlap(const Strategy& s, const Model& m);

// Samples per microbatch on one pipeline (one DP replica).
double microbatch_size(const Strategy& s, const Workload& w);
// Rank that owns each table (the strategy's table_owner, or the round-robin default).
std::vector<std::uint32_t> table_owners(const Strategy& s, std::size_t tables, std::uint32_t gpus);

// Writes `zero_stage` (0..3) and, for compatibility, `zero1` (bool: stage >= 1).
nlohmann::json strategy_to_json(const Strategy& s);

// TopoOpt's starting point: every GPU a data-parallel replica (tp = pp = 1, one microbatch).
// Per-layer degrees are the divisors of the GPU count (enumerate.hpp: divisors()).
Strategy data_parallel_strategy(std::uint32_t gpus);

}  // namespace toposweep
