// Builds one iteration's TaskGraph from a workload and a strategy (shape: docs/models.md).
#include "toposweep/workload/iteration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/block.hpp"
#include "toposweep/workload/block_recompute.hpp"
#include "toposweep/workload/hetero.hpp"
#include "toposweep/workload/moe_routing.hpp"
#include "toposweep/workload/ranks.hpp"
#include "toposweep/workload/split.hpp"

namespace toposweep {
namespace {

constexpr std::uint32_t kNoSet = ~std::uint32_t{0};
constexpr double kGiB = 1024.0 * 1024 * 1024;

// One step of a stage's forward or backward program, per microbatch.
struct Op {
  enum class Kind : std::uint8_t { Compute, Comm, ExchangeStart, ExchangeWait } kind = Kind::Compute;
  double flops = 0;
  double duration_s = 0;  // compute: its time (with `timed`, or when > 0: memory-bound steps)
  bool timed = false;     // compute: duration_s is the time, flops only count
  // Comm: runs under the pass's GEMMs on the stage's overlap stream (strategy.tp_overlap).
  bool overlapped = false;
  CollectiveOp op = CollectiveOp::AllReduce;
  CommPurpose purpose = CommPurpose::None;
  bool is_mutable = false;
  double bytes = 0;
  std::uint32_t group_set = 0;
  std::uint32_t repeat = 1;
  std::uint32_t layer = kNoLayer;
  // Megatron TP collectives on the compute stream may be folded with the stage's compute (their
  // order within a pass does not change the stream's busy time); others stay in order.
  bool foldable = false;
  // Gradients complete once this op is done, and the group set that reduces them.
  double grad_bytes = 0;
  std::uint32_t grad_group_set = kNoSet;
  // Expert parallelism (ep > 1): the layer's routed experts' gradients, reduced apart over the
  // ranks holding the same experts (the stage's expert replica groups).
  double expert_grad_bytes = 0;
  // Compute: the layer sends sufficient factors (SFB) instead of its weight gradient; its
  // AllGather starts after this op in the final backward.
  bool sfb = false;
  // strategy.ep_overlap: the in-order copy of an overlapped dispatch/combine, emitted on the
  // compute stream in the passes the schedule does not pair (their overlapped copy then is not).
  bool unpaired_only = false;
};

struct StageProgram {
  std::vector<Op> forward, backward;
  std::vector<Op> overlapped_forward, overlapped_backward;  // TP collectives under the pass's GEMMs
  double output_elements = 0;                               // per sample, sent to the next stage
  // Each layer's parameters on one GPU, in forward order: all of them (the optimizer step's) and
  // of those the routed experts' that reduce apart, over their replicas (ep > 1 or etp < tp).
  struct LayerParams {
    std::uint32_t layer;
    double params, experts;
  };
  std::vector<LayerParams> layer_params;
  double local_params() const {
    double sum = 0;
    for (const LayerParams& l : layer_params) sum += l.params;
    return sum;
  }
  double local_experts() const {
    double sum = 0;
    for (const LayerParams& l : layer_params) sum += l.experts;
    return sum;
  }
};

class IterationBuilder {
 public:
  IterationBuilder(const Workload& w, const Strategy& s, const TransformerCosts* costs,
                   const TransformerCosts* kept_costs, const DeviceShares& shares)
      : w_(w),
        s_(s),
        kept_storage_(partial_recompute(s) ? std::optional<Strategy>(without_recompute(s)) : std::nullopt),
        kept_s_(kept_storage_ ? *kept_storage_ : s),
        costs_(costs),
        kept_costs_(kept_costs ? kept_costs : costs),
        m_(w.model),
        gpus_(s.gpus()),
        ranks_(axis_grid(s)),
        mb_(microbatch_size(s, w)),
        virtual_stages_(s.schedule == PipelineSchedule::Interleaved ? s.virtual_stages : 1),
        shares_(shares),
        bytes_mb_(shares_.max_samples),
        byte_scale_(shares_.max_samples / mb_),
        boundary_(stage_boundary(s, w.model.transformer.has_value())),
        gather_overlap_(param_gather_overlap(s, w.model)) {}

  TaskGraph build();
  double total_flops() const { return total_flops_; }

 private:
  void make_3d_programs();
  void make_per_layer_program();
  // One pass on a device's compute stream: a microbatch's forward or backward through a chunk.
  struct Pass {
    bool forward;
    std::uint32_t micro, chunk;
    // Run merged with a pass of the other direction (Megatron-Core's EP overlap pairs the steady
    // state's forward and backward); warm-up forwards and cool-down backwards run alone, their
    // expert-parallel All-to-Alls exposed.
    bool paired = true;
  };
  std::vector<Pass> stage_order(std::uint32_t stage) const;
  std::uint32_t chunks() const { return s_.pp * virtual_stages_; }
  double device_params(std::uint32_t stage) const;
  void emit_pass(std::uint32_t chunk, std::uint32_t micro, bool forward, bool final_backward, bool last_pass,
                 bool paired);
  void emit_op(const Op& op, std::uint32_t stage, std::uint32_t micro, TaskPhase phase);
  void emit_exchange(std::uint32_t stage, std::uint32_t micro, TaskPhase phase);
  // A gradient bucket being filled in a final backward: its bytes and the group set reducing them.
  struct GradBucket {
    double bytes = 0;
    std::uint32_t set = kNoSet;
  };
  void close_bucket(GradBucket& bucket, bool experts, std::uint32_t stage, std::uint32_t micro);
  double device_experts(std::uint32_t stage) const;
  void emit_optimizer(std::uint32_t stage);
  void add_param_gathers();
  // strategy.param_gather_overlap (param_gather_overlap, strategy.hpp): ZeRO-1/2's gather under
  // the first forward, or ZeRO-3's every pass on the DP stream ahead of the layers (FSDP's
  // prefetch) instead of on the compute stream before the pass.
  bool gathers_before_forward() const { return gather_overlap_ == ParamGatherOverlap::BeforeForward; }
  bool zero3_prefetch() const { return gather_overlap_ == ParamGatherOverlap::Prefetch; }
  // A chunk's weights in gather buckets, in forward order: the layers first..last, their dense
  // and routed-expert parameters. A bucket closes at strategy.bucket_bytes of gradients, as the
  // reductions' do.
  struct ParamBucket {
    std::uint32_t first = 0, last = 0;
    double dense = 0, experts = 0;
  };
  std::vector<ParamBucket> param_buckets(std::uint32_t chunk) const;
  // The AllGathers of one bucket on the stage's DP stream after `after` (the dense weights over
  // dp x cp, the routed experts over their replicas; ZeRO-3's both labelled dp_param_allgather,
  // as before the pass): the last of them, or kNone.
  TaskId gather_bucket(std::uint32_t stage, TaskPhase phase, std::uint32_t micro, const ParamBucket& b,
                       TaskId after);
  // ZeRO-3 with prefetch: the pass's gathers, each as (the layer from which the pass waits for
  // it, the gather), in the pass's layer order.
  std::vector<std::pair<std::uint32_t, TaskId>> zero3_pass_gathers(std::uint32_t chunk, std::uint32_t micro,
                                                                   bool forward);
  // SFB: the AllGather of a layer's factors after its final backward, and the rebuild of its
  // weight gradient from them once the stage's last backward is done.
  void emit_sfb_allgather(std::uint32_t stage, std::uint32_t layer, std::uint32_t micro);
  void emit_sfb_rebuilds(std::uint32_t stage);
  // Closes a pass whose overlapped communication `on_sms` takes SMs with a compute task timing
  // what that took from the pass's compute (its tasks from `pass_first` on; Task::sm_share).
  void add_contention(std::uint32_t stage, std::uint32_t micro, TaskPhase phase, TaskId pass_first,
                      const std::vector<TaskId>& on_sms);
  // strategy.ep_dispatcher = deepep: an expert-parallel All-to-All's tokens go once per
  // destination node (Task::dedup); otherwise, and for every other task, inactive.
  TokenDedup token_dedup(const Task& t) const {
    if (s_.ep_dispatcher != EpDispatcher::DeepEp || t.purpose != CommPurpose::ExpertParallel ||
        t.op != CollectiveOp::AllToAll || !m_.transformer || !m_.transformer->moe)
      return {};
    return token_routing(*m_.transformer->moe);
  }
  // strategy.dp_sms: before the stage's optimizer step, a compute task timing what the stage's
  // data-parallel collectives took from the compute they overlapped (Task::sm_share).
  void add_dp_contention(std::uint32_t stage);
  struct SfbPending {
    std::uint32_t layer;
    TaskId gathered;
  };
  std::vector<std::vector<SfbPending>> sfb_pending_;  // per stage
  bool is_sfb_layer(std::uint32_t layer) const {
    return std::find(s_.sfb_layers.begin(), s_.sfb_layers.end(), layer) != s_.sfb_layers.end();
  }
  void add_zero3_gathers();
  void flush(std::uint32_t stage, std::uint32_t micro, TaskPhase phase);
  TaskId add_task(const Task& t, std::initializer_list<TaskId> deps);
  TaskId add_task_with_pending(const Task& t, TaskId also);  // next_deps_ + also
  double embedding_lookup_seconds() const;
  // Task labels, registered in the graph on first use.
  enum Label : std::uint8_t {
    kForward,
    kBackward,
    kTpAllReduce,
    kMpAllGather,
    kMpAllToAll,
    kMpReduceScatter,
    kMpOther,
    kEmbeddingExchange,
    kDpAllReduce,
    kDpReduceScatter,
    kDpAllGather,
    kPpSendForward,
    kPpSendBackward,
    kOptimizer,
    kEmbeddingSync,
    kTpReduceScatter,
    kTpAllGather,
    kDpParamAllGather,
    kDpSfbAllGather,
    kSfbRebuild,
    kCpAllGather,
    kCpReduceScatter,
    kExpertDpAllReduce,
    kExpertDpReduceScatter,
    kExpertDpAllGather,
    kSmContention,
    kDpSmContention,
    kLabelCount
  };
  std::uint32_t label(Label l);
  std::uint32_t label_ids_[kLabelCount] = {};
  // A data-parallel collective on the stage's DP stream: what every DP task shares.
  Task dp_collective(std::uint32_t stage, TaskPhase phase, CollectiveOp op, double bytes,
                     std::uint32_t group_set, Label l);
  std::vector<TaskId> scratch_;
  std::uint32_t tied_sync_set_ = kNoSet;  // first <-> last stage pairs when embeddings are tied
  TaskId last_stage_backward_ = ~TaskId{0};

  const Workload& w_;
  const Strategy& s_;
  // The blocks block recomputation skips (strategy.recompute_layers) run as without recomputation
  // (kept_s_; s_ itself, not a copy, when no block is skipped).
  const std::optional<Strategy> kept_storage_;
  const Strategy& kept_s_;
  const TransformerCosts* costs_;       // transformer layers (counts always; times when per-operator)
  const TransformerCosts* kept_costs_;  // the same without recomputation (the skipped blocks')
  const Model& m_;
  std::uint32_t gpus_;
  AxisGrid ranks_;
  double mb_;
  std::uint32_t virtual_stages_;  // model chunks per device (1 unless interleaved)
  // Unequal devices or microbatches: the stage split, per-stage compute slowdown and the
  // largest replica microbatch, which sample-proportional messages are sized by (the same as
  // mb_ and 1.0 on homogeneous clusters with an even split).
  const DeviceShares& shares_;
  double bytes_mb_;
  double byte_scale_;
  // How a stage boundary's tensor is held: split over the TP ranks, gathered after receipt.
  StageBoundary boundary_;
  // A stage boundary's tensor of `elements` per sample on one rank of a TP group: a CP rank's
  // s / cp tokens of it (a transformer's), for one (largest) microbatch.
  double boundary_bytes(double elements) const {
    return bytes_mb_ * elements * w_.bytes_per_element / (m_.transformer ? s_.cp : 1);
  }
  // HBM bandwidth of the slowest device among ranks [first, last): what memory-bound training
  // kernels reach with `kernels` (the per-operator model's fraction), else the line rate.
  double slowest_hbm_Bps(std::uint32_t first, std::uint32_t last, bool kernels) const;
  TaskGraph g_;
  std::vector<StageProgram> programs_;  // per model chunk (chunk c runs on device c % pp)
  std::vector<std::uint32_t> compute_stream_, dp_stream_, send_fwd_stream_, send_bwd_stream_;
  std::vector<std::uint32_t> overlap_stream_;     // per stage, created on first use
  std::vector<std::uint32_t> cp_stream_;          // per stage: ring attention's KV, on first use
  std::vector<std::uint32_t> ep_stream_;          // per stage: overlapped dispatch/combine, on first use
  std::vector<std::vector<TaskId>> stage_waits_;  // per stage: what its next pass waits for
  std::vector<std::uint32_t> dp_set_;             // per stage, kNoSet when dp = 1
  // Per stage: the expert replica groups (expert grid's Dp groups, dp x cp / ep ranks) when
  // ep > 1 and dp x cp / ep > 1, else kNoSet.
  std::vector<std::uint32_t> expert_dp_set_;
  std::vector<std::uint32_t> pp_fwd_set_, pp_bwd_set_;  // per stage: sends to the next/previous
  // Interleaved: device pp-1 -> device 0 (forward) and 0 -> pp-1 (backward) between chunk rounds.
  std::uint32_t pp_wrap_fwd_set_ = kNoSet, pp_wrap_bwd_set_ = kNoSet;
  // Embedding exchange per phase (forward, backward): (kind, bytes per sample, group set).
  struct Exchange {
    TaskKind kind;
    double elements;
    std::uint32_t group_set;
  };
  std::map<TaskPhase, std::vector<Exchange>> exchange_plan_;
  std::vector<std::vector<TaskId>> sent_fwd_, sent_bwd_;  // [chunk][micro] transfer ids
  std::vector<TaskId> last_compute_;                      // per stage
  std::vector<TaskId> last_dp_;                           // per stage
  const ParamGatherOverlap gather_overlap_;
  // With it: per chunk, its gather buckets (param_buckets, built once), and for ZeRO-1/2 (first
  // layer of a bucket, its gather) in forward order, which the chunk's first forward waits for.
  std::vector<std::vector<ParamBucket>> buckets_;
  std::vector<std::vector<std::pair<std::uint32_t, TaskId>>> param_waits_;
  std::vector<TaskId> next_deps_;  // extra dependencies of the next compute-stream task
  std::vector<TaskId> exchanges_;  // embedding exchanges not yet waited for
  std::uint32_t exchange_stream_ = kNoSet;
  std::map<std::uint32_t, std::uint32_t> mp_sets_, replica_sets_;
  double total_flops_ = 0;
  // Folding state: compute and one kind of collective on the compute stream.
  double pend_flops_ = 0, pend_timed_flops_ = 0, pend_seconds_ = 0;
  bool pend_compute_ = false;
  std::vector<Op> pend_comms_;  // foldable collectives, at most two kinds (RS + AG)
  std::uint32_t pend_layer_ = kNoLayer;
  // Gradient buckets being filled in a final backward: dense and (ep > 1) expert gradients.
  GradBucket bucket_, expert_bucket_;
  std::vector<double> deferred_grad_bytes_;  // per stage: chunks' gradients waiting for its last pass
  std::vector<double> deferred_expert_bytes_;
  static constexpr TaskId kNone = ~TaskId{0};
};

std::uint32_t IterationBuilder::label(Label l) {
  static constexpr const char* kNames[kLabelCount] = {"forward",
                                                      "backward",
                                                      "tp_allreduce",
                                                      "mp_allgather",
                                                      "mp_alltoall",
                                                      "mp_reducescatter",
                                                      "mp_other",
                                                      "embedding_exchange",
                                                      "dp_allreduce",
                                                      "dp_reducescatter",
                                                      "dp_allgather",
                                                      "pp_send_forward",
                                                      "pp_send_backward",
                                                      "optimizer",
                                                      "embedding_sync",
                                                      "tp_reducescatter",
                                                      "tp_allgather",
                                                      "dp_param_allgather",
                                                      "dp_sfb_allgather",
                                                      "sfb_rebuild",
                                                      "cp_allgather",
                                                      "cp_reducescatter",
                                                      "expert_dp_allreduce",
                                                      "expert_dp_reducescatter",
                                                      "expert_dp_allgather",
                                                      "sm_contention",
                                                      "dp_sm_contention"};
  if (label_ids_[l] == 0) label_ids_[l] = g_.add_label(kNames[l]);
  return label_ids_[l];
}

Task IterationBuilder::dp_collective(std::uint32_t stage, TaskPhase phase, CollectiveOp op, double bytes,
                                     std::uint32_t group_set, Label l) {
  Task t;
  t.kind = TaskKind::Collective;
  t.phase = phase;
  t.purpose = CommPurpose::DataParallel;
  t.stream = dp_stream_[stage];
  t.op = op;
  t.is_mutable = true;
  t.bytes = bytes;
  t.group_set = group_set;
  t.stage = stage;
  t.label = label(l);
  return t;
}

TaskId IterationBuilder::add_task(const Task& t, std::initializer_list<TaskId> deps) {
  scratch_.clear();
  for (TaskId d : deps)
    if (d != kNone) scratch_.push_back(d);
  std::sort(scratch_.begin(), scratch_.end());
  scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
  return g_.add(t, scratch_);
}

TaskId IterationBuilder::add_task_with_pending(const Task& t, TaskId also) {
  scratch_.clear();
  for (TaskId d : next_deps_)
    if (d != kNone) scratch_.push_back(d);
  if (also != kNone) scratch_.push_back(also);
  std::sort(scratch_.begin(), scratch_.end());
  scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
  next_deps_.clear();
  return g_.add(t, scratch_);
}

double IterationBuilder::embedding_lookup_seconds() const {
  // The busiest owner reads lookups x dim elements of each of its tables for every sample of
  // the global microbatch.
  const auto owners = table_owners(s_, m_.tables.size(), gpus_);
  std::vector<double> elements(gpus_, 0);
  for (std::size_t t = 0; t < m_.tables.size(); ++t)
    elements[owners[t]] += m_.tables[t].lookups_per_sample * m_.tables[t].dim;
  const double worst = *std::max_element(elements.begin(), elements.end());
  return worst * mb_ * gpus_ * w_.table_bytes_per_element / slowest_hbm_Bps(0, gpus_, false);
}

double IterationBuilder::slowest_hbm_Bps(std::uint32_t first, std::uint32_t last, bool kernels) const {
  const auto rate = [&](const Device& d) {
    return kernels && w_.per_operator ? d.hbm_Bps * d.memory_efficiency : d.hbm_Bps;
  };
  if (!w_.mixed()) return rate(w_.device);
  double bw = rate(w_.device_of_rank(first));
  for (std::uint32_t r = first + 1; r < last; ++r) bw = std::min(bw, rate(w_.device_of_rank(r)));
  return bw;
}

void IterationBuilder::make_3d_programs() {
  const auto& stages = shares_.chunks;
  const double shard = m_.transformer ? s_.tp : 1;  // a layer's weights
  const double flop_shard = compute_shard(m_, s_);  // its FLOPs: tp x cp
  const double B = w_.bytes_per_element;
  const double G = w_.grad_bytes_per_element;
  const bool timed = costs_ != nullptr && w_.per_operator;
  std::vector<std::uint32_t> tp_sets(s_.pp, kNoSet), cp_sets(s_.pp, kNoSet), ep_sets(s_.pp, kNoSet),
      etp_sets(s_.pp, kNoSet);
  // A dispatch or combine All-to-All's bytes, the same for every MoE layer: the busiest EP rank
  // sends and receives Workload::expert_load x the mean (model.moe_imbalance; the capacity factor).
  // Dispatches (tokens to the experts, and the output gradients sent to them) at model.moe_dispatch_datatype,
  // combines at B.
  const double ep_elements =
      s_.ep > 1 && m_.transformer
          ? bytes_mb_ * dispatch_elements(*m_.transformer, activation_split(s_)) * w_.expert_load(s_.ep)
          : 0.0;
  const double combine_bytes = ep_elements * B, dispatch_bytes = ep_elements * w_.dispatch_bytes();
  for (std::uint32_t c = 0; c < chunks(); ++c) {
    const std::uint32_t p = c % s_.pp;  // the device holding chunk c
    StageProgram& prog = programs_[c];
    if (s_.tp > 1 && tp_sets[p] == kNoSet)
      tp_sets[p] = g_.add_group_set(ranks_.groups(Axis::Tp, {{Axis::Pp, p}}));
    const std::uint32_t tp_set = tp_sets[p];
    // The routed experts' token collectives run over the expert tensor-parallel ranks: the TP
    // group itself, or (1 < etp < tp) its sub-groups of etp consecutive ranks (the expert grid's).
    const std::uint32_t etp = s_.expert_tp();
    if (etp > 1 && etp < s_.tp && etp_sets[p] == kNoSet)
      etp_sets[p] = g_.add_group_set(expert_grid(s_).groups(Axis::Tp, {{Axis::Pp, p}}));
    const std::uint32_t etp_set = etp < s_.tp ? etp_sets[p] : tp_set;
    if (s_.cp > 1 && cp_sets[p] == kNoSet)
      cp_sets[p] = g_.add_group_set(ranks_.groups(Axis::Cp, {{Axis::Pp, p}}));
    if (s_.ep > 1 && ep_sets[p] == kNoSet)
      ep_sets[p] = g_.add_group_set(expert_grid(s_).groups(Axis::Ep, {{Axis::Pp, p}}));
    // Expert parallelism: a MoE layer's tokens go to the ranks of their experts (dispatch) and
    // come back (combine), an All-to-All each over the EP group, on the compute stream (the
    // experts wait for them); backward sends their gradients the same way. With
    // strategy.ep_overlap they run on the stage's EP stream under the pass's compute, exposed
    // only where they outlast it: the compute that hides them is another microbatch's (paired
    // forward and backward chunks), which one pass's compute stands for; in the passes the
    // schedule does not pair (warm-up and cool-down) they stay on the compute stream.
    const auto ep_op = [&](std::uint32_t layer, bool dispatch) {
      Op c;
      c.kind = Op::Kind::Comm;
      c.op = CollectiveOp::AllToAll;
      c.purpose = CommPurpose::ExpertParallel;
      c.bytes = dispatch ? dispatch_bytes : combine_bytes;
      c.group_set = ep_sets[p];
      c.layer = layer;
      c.overlapped = s_.ep_overlap;
      return c;
    };
    // Context parallelism (Megatron-Core's ring attention): a block's keys and values pass around
    // the CP group chunk by chunk under its attention kernels, which a ring AllGather of the
    // sequence's KV (on this TP rank's heads) moves exactly; backward passes them again and sends
    // their gradients back, a ReduceScatter. On the CP overlap stream: exposed only where the
    // pass's compute is shorter.
    const auto cp_op = [&](CollectiveOp op, std::uint32_t layer) {
      Op c;
      c.kind = Op::Kind::Comm;
      c.op = op;
      c.purpose = CommPurpose::ContextParallel;
      c.is_mutable = true;
      c.bytes = bytes_mb_ * kv_elements(*m_.transformer) / s_.tp * B;
      c.group_set = cp_sets[p];
      c.layer = layer;
      c.overlapped = true;
      return c;
    };
    auto tp_op = [&](CollectiveOp op, double bytes, std::uint32_t count, std::uint32_t layer, bool overlapped,
                     std::uint32_t set) {
      Op c;
      c.kind = Op::Kind::Comm;
      c.op = op;
      c.purpose = CommPurpose::TensorParallel;
      c.is_mutable = true;
      c.bytes = bytes;
      c.group_set = set;
      c.repeat = count;
      c.layer = layer;
      c.foldable = true;
      c.overlapped = overlapped;
      return c;
    };
    // A pass's TP collectives: exposed ones on the compute stream (folded with the compute),
    // overlapped ones on the stage's overlap stream.
    auto tp_comms = [&](const TpCollectives& n, double bytes, std::uint32_t layer, bool overlapped,
                        std::vector<Op>& out, std::uint32_t set) {
      if (set == kNoSet) return;
      const std::pair<CollectiveOp, std::uint32_t> kinds[] = {{CollectiveOp::AllReduce, n.allreduce},
                                                              {CollectiveOp::ReduceScatter, n.reducescatter},
                                                              {CollectiveOp::AllGather, n.allgather}};
      for (const auto& [op, count] : kinds)
        if (count > 0) out.push_back(tp_op(op, bytes, count, layer, overlapped, set));
    };
    // Scatter/gather: the received boundary tensor (or its gradient) is gathered inside the
    // receiving server before the pass uses it.
    if (boundary_.gathered && c > 0) {
      const double bytes = boundary_bytes(m_.layers[stages[c - 1].last - 1].output_elements);
      prog.forward.push_back(tp_op(CollectiveOp::AllGather, bytes, 1, stages[c].first, false, tp_set));
    }
    std::vector<Op> backward_reversed;
    ChunkRecompute blocks(s_);
    for (std::uint32_t i = stages[c].first; i < stages[c].last; ++i) {
      const Layer& l = m_.layers[i];
      // The strategy and costs this layer runs under (block recomputation skips some blocks).
      const bool skips = blocks.skips(l);
      const Strategy& ls = skips ? kept_s_ : s_;
      const TransformerCosts* layer_costs = skips ? kept_costs_ : costs_;
      const LayerCost* cost = layer_costs ? cost_of_layer(*layer_costs, l) : nullptr;
      Op f;
      f.flops = l.forward_flops * mb_ / flop_shard;
      f.layer = i;
      if (cost && timed) {
        f.timed = true;
        f.duration_s = cost->forward.compute_s;
      }
      prog.forward.push_back(f);
      // Backward: with recomputation the recomputed forward (full: all of it, with its
      // collectives; selective: the attention core, 4 s^2 h FLOPs per sample) runs again.
      Op b;
      const double recomputed = recomputed_forward_flops(w_, ls, l);
      b.flops = (l.backward_flops + recomputed) * mb_ / flop_shard;
      b.layer = i;
      if (cost && timed) {
        b.timed = true;
        b.duration_s = cost->backward.compute_s;
      }
      const double expert_shard = m_.transformer ? s_.expert_tp() : 1;
      double params =
          l.params_sharded / shard + l.params_replicated + l.params_expert / (expert_shard * s_.ep);
      if (l.kind == LayerKind::Head) params += tied_embedding_copy(m_, shard, s_.pp);
      // ep > 1 (or etp < tp): the routed experts' gradients go apart, over their replicas
      // (Megatron-Core's expert data-parallel group); else with the dense ones, the same group.
      const double experts = s_.experts_apart() ? l.params_expert / (expert_shard * s_.ep) : 0.0;
      prog.layer_params.push_back({i, params, experts});
      params -= experts;
      std::vector<Op> layer_bwd{b};
      // Only a transformer's layers have TP collectives: validate_strategy keeps tp = 1 without one.
      if (cost) {
        const double tp_bytes = cost->tp_bytes * byte_scale_;
        tp_comms(cost->forward.exposed, tp_bytes, i, false, prog.forward, tp_set);
        tp_comms(cost->forward.hidden, tp_bytes, i, true, prog.overlapped_forward, tp_set);
        tp_comms(cost->backward.exposed, tp_bytes, i, false, layer_bwd, tp_set);
        tp_comms(cost->backward.hidden, tp_bytes, i, true, prog.overlapped_backward, tp_set);
        const double expert_bytes = cost->expert_tp_bytes * byte_scale_;
        tp_comms(cost->forward.expert, expert_bytes, i, false, prog.forward, etp_set);
        tp_comms(cost->backward.expert, expert_bytes, i, false, layer_bwd, etp_set);
      }
      if (s_.ep > 1 && l.moe) {  // dispatch and combine; the recomputed forward's again
        // Forward: dispatch, combine. Backward: the recomputed forward's dispatch and combine,
        // then the output gradients to the experts (a dispatch) and their input gradients back
        // (a combine). With the overlap each goes on the EP stream of the passes the schedule
        // pairs, and in order on the compute stream of those it runs alone (Pass::paired).
        const auto add = [&](std::vector<Op>& in_order, std::vector<Op>& overlapped, bool dispatch) {
          Op c = ep_op(i, dispatch);
          if (s_.ep_overlap) {
            overlapped.push_back(c);
            c.overlapped = false;
            c.unpaired_only = true;
          }
          in_order.push_back(c);
        };
        add(prog.forward, prog.overlapped_forward, true);
        add(prog.forward, prog.overlapped_forward, false);
        for (int n = ls.recompute == Recompute::Full ? 2 : 1; n > 0; --n) {
          add(layer_bwd, prog.overlapped_backward, true);
          add(layer_bwd, prog.overlapped_backward, false);
        }
      }
      if (s_.cp > 1 && l.kind == LayerKind::TransformerBlock) {
        prog.overlapped_forward.push_back(cp_op(CollectiveOp::AllGather, i));
        if (ls.recompute == Recompute::Full)  // the recomputed forward gathers them again
          prog.overlapped_backward.push_back(cp_op(CollectiveOp::AllGather, i));
        prog.overlapped_backward.push_back(cp_op(CollectiveOp::AllGather, i));
        prog.overlapped_backward.push_back(cp_op(CollectiveOp::ReduceScatter, i));
      }
      // Gradients are complete after the layer's backward compute and its collectives. An SFB
      // layer's weight gradient travels as factors; its bias (replicated parameters) stays.
      const bool sfb = is_sfb_layer(i);
      if (sfb) {
        layer_bwd.front().sfb = true;
        params -= l.params_sharded / shard;
      }
      // The layer's gradients are done with its last op that every pass runs.
      Op* last = &layer_bwd.back();
      while (last->unpaired_only) --last;
      last->grad_bytes = params * G;
      last->grad_group_set = dp_set_[p];
      last->expert_grad_bytes = experts * G;
      for (auto it = layer_bwd.rbegin(); it != layer_bwd.rend(); ++it) backward_reversed.push_back(*it);
    }
    if (boundary_.gathered && c + 1 < chunks()) {
      const double bytes = boundary_bytes(m_.layers[stages[c].last - 1].output_elements);
      backward_reversed.push_back(
          tp_op(CollectiveOp::AllGather, bytes, 1, stages[c].last - 1, false, tp_set));
    }
    prog.backward.assign(backward_reversed.rbegin(), backward_reversed.rend());
    prog.output_elements = m_.layers[stages[c].last - 1].output_elements;
  }
}

void IterationBuilder::make_per_layer_program() {
  // Segments: runs of consecutive layers with the same degree, split at the embedding tables
  // and before the interaction. A degree-k segment gathers its input over k ranks (AllGather)
  // and returns the output to the sample owners (AllToAll); backward mirrors it with an
  // AllToAll of output gradients and a ReduceScatter of input gradients.
  StageProgram& prog = programs_[0];
  const auto n = static_cast<std::uint32_t>(m_.layers.size());
  const double B = w_.bytes_per_element;
  auto degree = [&](std::uint32_t i) { return s_.per_layer() ? s_.layer_degree[i] : 1u; };
  struct Segment {
    std::uint32_t first, last, k;
    bool bag;
  };
  std::vector<Segment> segments;
  for (std::uint32_t i = 0; i < n;) {
    if (m_.layers[i].kind == LayerKind::EmbeddingBag) {
      segments.push_back({i, i + 1, 1, true});
      ++i;
      continue;
    }
    std::uint32_t j = i + 1;
    while (j < n && degree(j) == degree(i) && m_.layers[j].kind != LayerKind::EmbeddingBag &&
           m_.layers[j].kind != LayerKind::Interaction)
      ++j;
    segments.push_back({i, j, degree(i), false});
    i = j;
  }
  auto mp_set = [&](std::uint32_t k) {
    auto it = mp_sets_.find(k);
    if (it != mp_sets_.end()) return it->second;
    return mp_sets_[k] = g_.add_group_set(model_parallel_groups(k, gpus_));
  };
  auto replica_set = [&](std::uint32_t k) {
    if (gpus_ / k < 2) return kNoSet;
    auto it = replica_sets_.find(k);
    if (it != replica_sets_.end()) return it->second;
    return replica_sets_[k] = g_.add_group_set(shard_replica_groups(k, gpus_));
  };
  auto comm = [&](CollectiveOp op, double bytes, std::uint32_t k, std::uint32_t layer) {
    Op c;
    c.kind = Op::Kind::Comm;
    c.op = op;
    c.purpose = CommPurpose::TensorParallel;
    c.bytes = bytes;
    c.group_set = mp_set(k);
    c.layer = layer;
    return c;
  };
  const double lookup_s = m_.has_tables() ? embedding_lookup_seconds() : 0;
  auto kind_op = [](Op::Kind k) {
    Op o;
    o.kind = k;
    return o;
  };

  bool exchange_open = false;
  for (const Segment& seg : segments) {
    if (seg.bag) {
      Op lookup;
      lookup.duration_s = lookup_s;
      lookup.layer = seg.first;
      prog.forward.push_back(lookup);
      prog.forward.push_back(kind_op(Op::Kind::ExchangeStart));
      exchange_open = true;
      continue;
    }
    if (exchange_open && m_.layers[seg.first].kind == LayerKind::Interaction) {
      prog.forward.push_back(kind_op(Op::Kind::ExchangeWait));
      exchange_open = false;
    }
    const double in = m_.layers[seg.first].input_elements, out = m_.layers[seg.last - 1].output_elements;
    if (seg.k > 1)
      prog.forward.push_back(comm(CollectiveOp::AllGather, seg.k * mb_ * in * B, seg.k, seg.first));
    for (std::uint32_t x = seg.first; x < seg.last; ++x) {
      Op f;
      f.flops = m_.layers[x].forward_flops * mb_;
      f.layer = x;
      prog.forward.push_back(f);
    }
    if (seg.k > 1) prog.forward.push_back(comm(CollectiveOp::AllToAll, mb_ * out * B, seg.k, seg.last - 1));
  }
  if (exchange_open) prog.forward.push_back(kind_op(Op::Kind::ExchangeWait));

  bool exchange_started = false;
  for (auto seg = segments.rbegin(); seg != segments.rend(); ++seg) {
    if (seg->bag) {
      if (!exchange_started) prog.backward.push_back(kind_op(Op::Kind::ExchangeStart));
      exchange_started = true;
      prog.backward.push_back(kind_op(Op::Kind::ExchangeWait));
      Op update;
      update.duration_s = 2 * lookup_s;  // read and write the touched rows
      update.layer = seg->first;
      prog.backward.push_back(update);
      continue;
    }
    const double in = m_.layers[seg->first].input_elements, out = m_.layers[seg->last - 1].output_elements;
    if (seg->k > 1)
      prog.backward.push_back(comm(CollectiveOp::AllToAll, mb_ * out * B, seg->k, seg->last - 1));
    const std::uint32_t grad_set = replica_set(seg->k);
    for (std::uint32_t x = seg->last; x-- > seg->first;) {
      const Layer& l = m_.layers[x];
      Op b;
      b.flops = (l.backward_flops + (s_.recompute == Recompute::Full ? l.forward_flops : 0)) * mb_;
      b.layer = x;
      const double params = l.parameters() / seg->k;
      prog.layer_params.push_back({x, params, 0.0});
      if (grad_set != kNoSet && params > 0) {
        b.grad_bytes = params * B;
        b.grad_group_set = grad_set;
      }
      prog.backward.push_back(b);
      if (m_.has_tables() && !exchange_started && l.kind == LayerKind::Interaction) {
        prog.backward.push_back(kind_op(Op::Kind::ExchangeStart));
        exchange_started = true;
      }
    }
    if (seg->k > 1)
      prog.backward.push_back(comm(CollectiveOp::ReduceScatter, seg->k * mb_ * in * B, seg->k, seg->first));
  }
  prog.output_elements = 0;
}

// The order of passes on a device's compute stream.
std::vector<IterationBuilder::Pass> IterationBuilder::stage_order(std::uint32_t stage) const {
  const std::uint32_t mu = s_.microbatches;
  std::vector<Pass> order;
  const auto unpaired = [](Pass p) {
    p.paired = false;
    return p;
  };
  if (s_.schedule == PipelineSchedule::Interleaved && s_.pp > 1) {
    // Megatron-LM (forward_backward_pipelining_with_interleaving): mu * v units per direction;
    // the k-th forward unit is microbatch (k / (pp v)) pp + k % pp through the device's chunk
    // round (k % (pp v)) / pp; backward units walk the rounds in reverse. Warm-up
    // 2 (pp - p - 1) + (v - 1) pp forwards (capped at all of them), then one forward and one
    // backward each step, then the remaining backwards.
    const std::uint32_t pp = s_.pp, v = virtual_stages_, total = mu * v, group = pp * v;
    auto unit = [&](std::uint32_t k, bool forward) {
      const std::uint32_t round = (k % group) / pp;
      return Pass{forward, (k / group) * pp + k % pp, (forward ? round : v - 1 - round) * pp + stage};
    };
    const std::uint32_t warmup = std::min(2 * (pp - stage - 1) + (v - 1) * pp, total);
    for (std::uint32_t k = 0; k < warmup; ++k) order.push_back(unpaired(unit(k, true)));
    for (std::uint32_t i = 0; i + warmup < total; ++i) {
      order.push_back(unit(warmup + i, true));
      order.push_back(unit(i, false));
    }
    for (std::uint32_t k = total - warmup; k < total; ++k) order.push_back(unpaired(unit(k, false)));
    return order;
  }
  if (s_.schedule == PipelineSchedule::GPipe || s_.pp == 1) {
    // Without pipelining Megatron-Core pairs microbatch m's backward with m + 1's forward: the
    // first forward and the last backward run alone (combined_1f1b_schedule_for_no_pipelining).
    // GPipe pairs nothing in Megatron-Core; its passes keep the overlap as the option says.
    const bool alone = s_.pp == 1;
    for (std::uint32_t m = 0; m < mu; ++m)
      order.push_back(alone && m == 0 ? unpaired({true, m, stage}) : Pass{true, m, stage});
    for (std::uint32_t m = 0; m < mu; ++m)
      order.push_back(alone && m + 1 == mu ? unpaired({false, m, stage}) : Pass{false, m, stage});
    return order;
  }
  const std::uint32_t warmup = std::min(s_.pp - stage - 1, mu);
  for (std::uint32_t m = 0; m < warmup; ++m) order.push_back(unpaired({true, m, stage}));
  for (std::uint32_t i = 0; i + warmup < mu; ++i) {
    order.push_back({true, warmup + i, stage});
    order.push_back({false, i, stage});
  }
  for (std::uint32_t m = mu - warmup; m < mu; ++m) order.push_back(unpaired({false, m, stage}));
  return order;
}

double IterationBuilder::device_params(std::uint32_t stage) const {
  double params = 0;
  for (std::uint32_t c = stage; c < programs_.size(); c += s_.pp) params += programs_[c].local_params();
  return params;
}

double IterationBuilder::device_experts(std::uint32_t stage) const {
  double params = 0;
  for (std::uint32_t c = stage; c < programs_.size(); c += s_.pp) params += programs_[c].local_experts();
  return params;
}

void IterationBuilder::flush(std::uint32_t stage, std::uint32_t micro, TaskPhase phase) {
  const bool fwd = phase == TaskPhase::Forward;
  if (pend_compute_) {
    Task t;
    t.kind = TaskKind::Compute;
    t.phase = phase;
    t.stream = compute_stream_[stage];
    t.flops = pend_flops_ + pend_timed_flops_;
    // The stage's slowdown scales compute: FLOP-timed layers and per-operator times. Without the
    // per-operator model, pend_seconds_ on mixed devices holds only memory-bound steps, already
    // timed at the slowest device's bandwidth.
    const double slow = shares_.slow[stage];
    t.duration_s =
        pend_flops_ / w_.flops_per_s * slow + pend_seconds_ * (w_.mixed() && !w_.per_operator ? 1.0 : slow);
    t.stage = stage;
    t.layer = pend_layer_;
    t.microbatch = micro;
    t.label = label(fwd ? kForward : kBackward);
    last_compute_[stage] = add_task_with_pending(t, last_compute_[stage]);
    total_flops_ += (pend_flops_ + pend_timed_flops_) * gpus_ / s_.pp;
  }
  for (const Op& c : pend_comms_) {
    Task t;
    t.kind = TaskKind::Collective;
    t.phase = phase;
    t.purpose = c.purpose;
    t.stream = compute_stream_[stage];
    t.op = c.op;
    t.is_mutable = c.is_mutable;
    t.bytes = c.bytes;
    t.group_set = c.group_set;
    t.repeat = c.repeat;
    t.stage = stage;
    t.layer = c.layer;
    t.microbatch = micro;
    t.dedup = token_dedup(t);
    if (c.purpose == CommPurpose::DataParallel)
      t.label = label(kDpParamAllGather);
    else if (c.foldable)
      t.label = label(c.op == CollectiveOp::AllReduce       ? kTpAllReduce
                      : c.op == CollectiveOp::ReduceScatter ? kTpReduceScatter
                                                            : kTpAllGather);
    else
      t.label = label(c.op == CollectiveOp::AllGather       ? kMpAllGather
                      : c.op == CollectiveOp::AllToAll      ? kMpAllToAll
                      : c.op == CollectiveOp::ReduceScatter ? kMpReduceScatter
                                                            : kMpOther);
    last_compute_[stage] = add_task_with_pending(t, last_compute_[stage]);
  }
  pend_comms_.clear();
  pend_flops_ = pend_timed_flops_ = pend_seconds_ = 0;
  pend_compute_ = false;
  pend_layer_ = kNoLayer;
}

void IterationBuilder::emit_op(const Op& op, std::uint32_t stage, std::uint32_t micro, TaskPhase phase) {
  switch (op.kind) {
    case Op::Kind::Compute:
      if (!pend_compute_) pend_layer_ = op.layer;
      pend_compute_ = true;
      (op.timed ? pend_timed_flops_ : pend_flops_) += op.flops;
      pend_seconds_ += op.duration_s;
      break;
    case Op::Kind::Comm: {
      if (!op.foldable) {  // in order: after what is pending, before what follows
        flush(stage, micro, phase);
        pend_comms_.push_back(op);
        flush(stage, micro, phase);
        break;
      }
      auto same = std::find_if(pend_comms_.begin(), pend_comms_.end(), [&](const Op& c) {
        return c.op == op.op && c.bytes == op.bytes && c.group_set == op.group_set;
      });
      if (same != pend_comms_.end()) {
        same->repeat += op.repeat;
        break;
      }
      if (pend_comms_.size() >= 2) flush(stage, micro, phase);
      pend_comms_.push_back(op);
      break;
    }
    case Op::Kind::ExchangeStart:
      flush(stage, micro, phase);
      emit_exchange(stage, micro, phase);
      break;
    case Op::Kind::ExchangeWait:
      flush(stage, micro, phase);
      next_deps_.insert(next_deps_.end(), exchanges_.begin(), exchanges_.end());
      exchanges_.clear();
      break;
  }
}

void IterationBuilder::emit_exchange(std::uint32_t stage, std::uint32_t micro, TaskPhase phase) {
  // Table-wise embeddings: every owner sends each rank the looked-up vectors of that rank's
  // samples (forward), and receives their gradients back (backward). Not mutable.
  if (exchange_stream_ == kNoSet) exchange_stream_ = g_.add_stream("stage0.embedding");
  auto planned = exchange_plan_.find(phase);
  if (planned == exchange_plan_.end()) {
    std::vector<Exchange> plan;
    const auto owners = table_owners(s_, m_.tables.size(), gpus_);
    std::vector<double> elements(gpus_, 0);  // per sample of each destination
    for (std::size_t t = 0; t < m_.tables.size(); ++t)
      elements[owners[t]] += m_.tables[t].exchanged_elements_per_sample();
    if (std::all_of(elements.begin(), elements.end(), [&](double e) { return e == elements[0]; })) {
      GroupSet all;
      all.groups.emplace_back(gpus_);
      for (std::uint32_t r = 0; r < gpus_; ++r) all.groups[0][r] = r;
      // AllToAll per-rank send buffer: its share for every destination, itself included.
      plan.push_back({TaskKind::Collective, elements[0] * gpus_, g_.add_group_set(std::move(all))});
    } else {
      // Uneven ownership: one transfer task per distinct per-owner volume, listing its pairs.
      std::map<double, GroupSet> by_volume;
      for (std::uint32_t r = 0; r < gpus_; ++r) {
        if (elements[r] == 0) continue;
        GroupSet& gs = by_volume[elements[r]];
        for (std::uint32_t d = 0; d < gpus_; ++d)
          if (d != r)
            gs.groups.push_back(phase == TaskPhase::Forward ? std::vector<std::uint32_t>{r, d}
                                                            : std::vector<std::uint32_t>{d, r});
      }
      for (auto& [e, gs] : by_volume)
        plan.push_back({TaskKind::Transfer, e, g_.add_group_set(std::move(gs))});
    }
    planned = exchange_plan_.emplace(phase, std::move(plan)).first;
  }
  for (const Exchange& x : planned->second) {
    Task t;
    t.kind = x.kind;
    t.op = CollectiveOp::AllToAll;
    t.phase = phase;
    t.purpose = CommPurpose::Embedding;
    t.stream = exchange_stream_;
    t.bytes = x.elements * mb_ * w_.bytes_per_element;
    t.group_set = x.group_set;
    t.stage = stage;
    t.microbatch = micro;
    t.label = label(kEmbeddingExchange);
    exchanges_.push_back(add_task(t, {last_compute_[stage]}));
  }
}

void IterationBuilder::close_bucket(GradBucket& bucket, bool experts, std::uint32_t stage,
                                    std::uint32_t micro) {
  if (bucket.bytes <= 0 || bucket.set == kNoSet) return;
  const Label reduce_scatter = experts ? kExpertDpReduceScatter : kDpReduceScatter;
  const Label all_reduce = experts ? kExpertDpAllReduce : kDpAllReduce;
  Task t = dp_collective(stage, TaskPhase::Backward,
                         s_.zero >= 1 ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce, bucket.bytes,
                         bucket.set, s_.zero >= 1 ? reduce_scatter : all_reduce);
  t.microbatch = micro;
  last_dp_[stage] = add_task(t, {last_compute_[stage], last_dp_[stage]});
  bucket.bytes = 0;
}

void IterationBuilder::emit_pass(std::uint32_t chunk, std::uint32_t micro, bool forward, bool final_backward,
                                 bool last_pass, bool paired) {
  const StageProgram& prog = programs_[chunk];
  const std::uint32_t stage = chunk % s_.pp;  // the device
  const TaskPhase phase = forward ? TaskPhase::Forward : TaskPhase::Backward;
  // Gradients are reduced in the final backward pass; ZeRO-2/3 keep only their shard of the
  // gradients, so every backward pass reduce-scatters its own (DeepSpeed's micro-steps). Before
  // the final pass one ReduceScatter per pass (no bucketing) keeps the graph small: it overlaps
  // the passes that follow instead of the rest of its own.
  bool reduce = final_backward || (!forward && s_.zero >= 2);
  // Without DP overlap every chunk's gradients wait for the device's last pass and go in one
  // reduction after it.
  const bool defer = final_backward && !s_.dp_overlap && !last_pass && s_.zero < 2;
  if (defer) reduce = false;
  if (final_backward && !s_.dp_overlap && last_pass && s_.zero < 2) {
    bucket_.bytes += deferred_grad_bytes_[stage];
    bucket_.set = dp_set_[stage];
    deferred_grad_bytes_[stage] = 0;
    expert_bucket_.bytes += deferred_expert_bytes_[stage];
    expert_bucket_.set = expert_dp_set_[stage];
    deferred_expert_bytes_[stage] = 0;
  }
  // Without DP overlap the gradients go in one reduction after the pass.
  const double bucket_limit =
      final_backward && s_.dp_overlap ? s_.bucket_bytes : std::numeric_limits<double>::infinity();
  const std::vector<std::pair<std::uint32_t, TaskId>> zero3_gathers =
      zero3_prefetch() ? zero3_pass_gathers(chunk, micro, forward)
                       : std::vector<std::pair<std::uint32_t, TaskId>>{};
  if (forward && chunk > 0) next_deps_.push_back(sent_fwd_[chunk - 1][micro]);
  if (!forward && chunk + 1 < chunks()) next_deps_.push_back(sent_bwd_[chunk + 1][micro]);
  next_deps_.insert(next_deps_.end(), stage_waits_[stage].begin(), stage_waits_[stage].end());
  stage_waits_[stage].clear();
  // TP collectives under the pass's GEMMs start with it, on the stage's overlap stream; the
  // stage's next pass (and the pass's send) waits for them.
  std::vector<TaskId> overlapped, on_sms;  // on_sms: the overlapped tasks whose kernels take SMs
  for (const Op& c : forward ? prog.overlapped_forward : prog.overlapped_backward) {
    // TP, CP and EP collectives each on their own stream (NCCL communicators of their own).
    const bool cp = c.purpose == CommPurpose::ContextParallel;
    const bool ep = c.purpose == CommPurpose::ExpertParallel;
    if (ep && !paired) continue;  // its in-order copy runs on the compute stream (Op::unpaired_only)
    std::vector<std::uint32_t>& streams = cp ? cp_stream_ : ep ? ep_stream_ : overlap_stream_;
    if (streams[stage] == kNoSet)
      streams[stage] = g_.add_stream("stage" + std::to_string(stage) +
                                     (cp   ? ".cp_overlap"
                                      : ep ? ".ep_overlap"
                                           : ".tp_overlap"));
    Task t;
    t.kind = TaskKind::Collective;
    t.phase = phase;
    t.purpose = c.purpose;
    t.stream = streams[stage];
    t.op = c.op;
    t.is_mutable = c.is_mutable;
    t.bytes = c.bytes;
    t.group_set = c.group_set;
    t.repeat = c.repeat;
    t.stage = stage;
    t.layer = c.layer;
    t.microbatch = micro;
    t.dedup = token_dedup(t);
    t.label = label(ep   ? kMpAllToAll
                    : cp ? (c.op == CollectiveOp::AllGather ? kCpAllGather : kCpReduceScatter)
                    : c.op == CollectiveOp::AllReduce     ? kTpAllReduce
                    : c.op == CollectiveOp::ReduceScatter ? kTpReduceScatter
                                                          : kTpAllGather);
    scratch_.clear();
    for (TaskId d : next_deps_)
      if (d != kNone) scratch_.push_back(d);
    if (last_compute_[stage] != kNone) scratch_.push_back(last_compute_[stage]);
    std::sort(scratch_.begin(), scratch_.end());
    scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
    overlapped.push_back(g_.add(t, scratch_));
    if (ep) on_sms.push_back(overlapped.back());
  }
  const auto pass_first = static_cast<TaskId>(g_.tasks.size());  // the pass's own tasks from here
  // strategy.param_gather_overlap: the chunk's first forward (ZeRO-1/2), or every pass (ZeRO-3),
  // waits for each bucket's gather before the first layer of it the pass reaches.
  const auto& waits = zero3_prefetch() ? zero3_gathers : param_waits_[chunk];
  std::size_t wait = zero3_prefetch() || (forward && micro == 0) ? 0 : waits.size();
  const auto reached = [&](std::uint32_t layer) {
    return wait < waits.size() && (forward ? layer >= waits[wait].first : layer <= waits[wait].first);
  };
  for (const Op& op : forward ? prog.forward : prog.backward) {
    if (op.unpaired_only && paired) continue;  // its overlapped copy runs on the EP stream
    if (reached(op.layer)) {
      flush(stage, micro, phase);
      for (; reached(op.layer); ++wait) next_deps_.push_back(waits[wait].second);
    }
    emit_op(op, stage, micro, phase);
    if (final_backward && op.sfb) {
      flush(stage, micro, phase);
      emit_sfb_allgather(stage, op.layer, micro);
    }
    if (defer && op.grad_group_set != kNoSet) deferred_grad_bytes_[stage] += op.grad_bytes;
    if (defer) deferred_expert_bytes_[stage] += op.expert_grad_bytes;
    if (reduce && op.grad_group_set != kNoSet && op.grad_bytes > 0) {
      // Gradients fill buckets in backward order; a full bucket (or a change of group) starts
      // its AllReduce as soon as the compute that produced it is done.
      if (bucket_.set != op.grad_group_set && bucket_.bytes > 0) {
        flush(stage, micro, phase);
        close_bucket(bucket_, false, stage, micro);
      }
      bucket_.set = op.grad_group_set;
      bucket_.bytes += op.grad_bytes;
      if (bucket_.bytes >= bucket_limit) {
        flush(stage, micro, phase);
        close_bucket(bucket_, false, stage, micro);
      }
    }
    // Expert gradients fill buckets of their own (Megatron-Core's expert-parallel buffers), the
    // same size, reduced over the expert replicas.
    if (reduce && expert_dp_set_[stage] != kNoSet && op.expert_grad_bytes > 0) {
      expert_bucket_.set = expert_dp_set_[stage];
      expert_bucket_.bytes += op.expert_grad_bytes;
      if (expert_bucket_.bytes >= bucket_limit) {
        flush(stage, micro, phase);
        close_bucket(expert_bucket_, true, stage, micro);
      }
    }
  }
  flush(stage, micro, phase);
  // Before the last buckets close: their gradients are done when the slowed compute is.
  add_contention(stage, micro, phase, pass_first, on_sms);
  if (reduce) {
    close_bucket(bucket_, false, stage, micro);
    close_bucket(expert_bucket_, true, stage, micro);
  }
  stage_waits_[stage].insert(stage_waits_[stage].end(), overlapped.begin(), overlapped.end());

  const bool send = forward ? chunk + 1 < chunks() : chunk > 0;
  if (!send) return;
  // Between chunk rounds the last device sends to the first (forward) and back (backward).
  const bool wrap = forward ? stage + 1 == s_.pp : stage == 0;
  Task t;
  t.kind = TaskKind::Transfer;
  t.phase = phase;
  t.purpose = CommPurpose::PipelineParallel;
  // The stage boundary's activations (forward) or their gradients (backward); with sequence
  // parallelism or scatter/gather each TP rank sends its 1/tp of them.
  const double elements = forward ? prog.output_elements : programs_[chunk - 1].output_elements;
  t.bytes = boundary_bytes(elements) / (boundary_.split ? s_.tp : 1);
  t.stage = stage;
  t.microbatch = micro;
  t.label = label(forward ? kPpSendForward : kPpSendBackward);
  t.stream = forward ? send_fwd_stream_[stage] : send_bwd_stream_[stage];
  t.group_set = wrap ? (forward ? pp_wrap_fwd_set_ : pp_wrap_bwd_set_)
                     : (forward ? pp_fwd_set_[stage] : pp_bwd_set_[stage]);
  next_deps_.assign(overlapped.begin(), overlapped.end());
  const TaskId sent = add_task_with_pending(t, last_compute_[stage]);
  (forward ? sent_fwd_ : sent_bwd_)[chunk][micro] = sent;
  // Megatron-LM's blocking exchanges: the stage goes on once its send is done.
  if (!s_.p2p_overlap) stage_waits_[stage].push_back(sent);
}

void IterationBuilder::add_contention(std::uint32_t stage, std::uint32_t micro, TaskPhase phase,
                                      TaskId pass_first, const std::vector<TaskId>& on_sms) {
  // strategy.ep_sms: the overlapped dispatch/combine kernels take that many of the device's SMs
  // while they run; the pass's compute loses them (sim/contention.hpp times the task).
  const std::uint32_t sms = w_.device.sms;
  if (on_sms.empty() || s_.ep_sms == 0 || sms == 0) return;
  scratch_.assign(on_sms.begin(), on_sms.end());
  for (TaskId i = pass_first; i < g_.tasks.size(); ++i)
    if (g_.tasks[i].kind == TaskKind::Compute && g_.tasks[i].stream == compute_stream_[stage])
      scratch_.push_back(i);
  if (scratch_.size() == on_sms.size()) return;  // no compute in the pass
  Task t;
  t.kind = TaskKind::Compute;
  t.phase = phase;
  t.stream = compute_stream_[stage];
  t.sm_share = std::min(0.9, static_cast<double>(s_.ep_sms) / sms);
  t.stage = stage;
  t.microbatch = micro;
  t.label = label(kSmContention);
  last_compute_[stage] = g_.add(t, scratch_);
}

void IterationBuilder::add_dp_contention(std::uint32_t stage) {
  // The collectives on the stage's DP stream (gradient buckets under the backward, weight gathers
  // under the forward) take strategy.dp_sms of the device's SMs while they run. Charged once, after
  // the stage's compute and DP communication: the stage's compute ends share x overlap later, as if
  // slowed where they overlapped (sim/contention.hpp); what that slowdown would have delayed in
  // between (a pipeline send) is not.
  const std::uint32_t sms = w_.device.sms;
  if (s_.dp_sms == 0 || sms == 0) return;
  scratch_.clear();
  bool comm = false;
  for (TaskId i = 0; i < g_.tasks.size(); ++i) {
    const Task& t = g_.tasks[i];
    if (t.stream == dp_stream_[stage] && t.kind != TaskKind::Compute) {
      scratch_.push_back(i);
      comm = true;
    } else if (t.kind == TaskKind::Compute && t.stream == compute_stream_[stage]) {
      scratch_.push_back(i);
    }
  }
  if (!comm) return;
  Task t;
  t.kind = TaskKind::Compute;
  t.phase = TaskPhase::Backward;
  t.stream = compute_stream_[stage];
  t.sm_share = std::min(0.9, static_cast<double>(s_.dp_sms) / sms);
  t.stage = stage;
  t.label = label(kDpSmContention);
  last_compute_[stage] = g_.add(t, scratch_);
}

void IterationBuilder::emit_sfb_allgather(std::uint32_t stage, std::uint32_t layer, std::uint32_t micro) {
  if (dp_set_[stage] == kNoSet) return;
  Task t =
      dp_collective(stage, TaskPhase::Backward, CollectiveOp::AllGather,
                    sfb_gather_bytes(w_, s_, shares_, m_.layers[layer]), dp_set_[stage], kDpSfbAllGather);
  t.layer = layer;
  t.microbatch = micro;
  last_dp_[stage] = add_task(t, {last_compute_[stage], last_dp_[stage]});
  sfb_pending_[stage].push_back({layer, last_dp_[stage]});
}

void IterationBuilder::emit_sfb_rebuilds(std::uint32_t stage) {
  for (const SfbPending& pending : sfb_pending_[stage]) {
    const auto [flops, seconds] = sfb_rebuild(w_, s_, shares_, m_.layers[pending.layer], stage);
    Task t;
    t.kind = TaskKind::Compute;
    t.phase = TaskPhase::Backward;
    t.stream = compute_stream_[stage];
    t.flops = flops;
    t.duration_s = seconds;
    t.stage = stage;
    t.layer = pending.layer;
    t.label = label(kSfbRebuild);
    last_compute_[stage] = add_task(t, {last_compute_[stage], pending.gathered});
    total_flops_ += flops * s_.dp;
  }
  sfb_pending_[stage].clear();
}

void IterationBuilder::add_zero3_gathers() {
  // ZeRO-3: each GPU holds 1/dp of the stage's weights; every forward and every backward pass
  // (per microbatch, as DeepSpeed gathers per pass) first AllGathers them over the DP group.
  // One task per pass stands for the per-layer gathers run back to back before each layer's
  // compute, on the compute stream: on the critical path, no prefetch overlap. With
  // strategy.param_gather_overlap each pass gathers on the DP stream instead (zero3_pass_gathers).
  if (s_.zero < 3 || zero3_prefetch()) return;
  for (std::uint32_t c = 0; c < programs_.size(); ++c) {
    StageProgram& prog = programs_[c];
    const std::uint32_t p = c % s_.pp;
    const double local = prog.local_params(), experts = prog.local_experts();
    if (dp_set_[p] == kNoSet || local <= 0) continue;
    Op gather;
    gather.kind = Op::Kind::Comm;
    gather.op = CollectiveOp::AllGather;
    gather.purpose = CommPurpose::DataParallel;
    gather.is_mutable = true;
    // AllGather output: the full weights; ep > 1: the experts' over their own replicas.
    gather.bytes = (local - experts) * w_.bytes_per_element;
    gather.group_set = dp_set_[p];
    std::vector<Op> gathers{gather};
    if (expert_dp_set_[p] != kNoSet && experts > 0) {
      gather.bytes = experts * w_.bytes_per_element;
      gather.group_set = expert_dp_set_[p];
      gathers.push_back(gather);
    }
    prog.forward.insert(prog.forward.begin(), gathers.begin(), gathers.end());
    prog.backward.insert(prog.backward.begin(), gathers.begin(), gathers.end());
  }
}

void IterationBuilder::emit_optimizer(std::uint32_t stage) {
  // Tied embeddings split over the first and last stage: Megatron sums their gradients with an
  // AllReduce between the two copies before either steps. The last stage finishes its backward
  // first, so the sync is issued from the first stage.
  if (tied_sync_set_ != kNoSet && stage + 1 == s_.pp) last_stage_backward_ = last_compute_[stage];
  if (tied_sync_set_ != kNoSet && stage == 0) {
    const Task sync = dp_collective(0, TaskPhase::Backward, CollectiveOp::AllReduce,
                                    static_cast<double>(m_.transformer->vocab) * m_.transformer->hidden /
                                        s_.tp * w_.grad_bytes_per_element,
                                    tied_sync_set_, kEmbeddingSync);
    last_dp_[0] = add_task(sync, {last_compute_[0], last_dp_[0], last_stage_backward_});
  }
  add_dp_contention(stage);
  // ZeRO: the stage's share of the dense states (1 / dp x cp) and, ep > 1, of the experts'
  // (1 / their dp x cp / ep replicas).
  const double experts = device_experts(stage);
  const double params =
      s_.zero >= 1 && s_.experts_apart()
          ? (device_params(stage) - experts) / s_.grad_replicas() + experts / s_.expert_replicas()
          : device_params(stage) / (s_.zero >= 1 ? s_.grad_replicas() : 1);
  Task t;
  t.kind = TaskKind::Compute;
  t.phase = TaskPhase::WeightUpdate;
  t.stream = compute_stream_[stage];
  // The step is memory bound: it streams gradients, optimizer state and weights once, at the
  // bandwidth memory-bound kernels reach.
  const std::uint32_t stage_ranks = ranks_.stride(Axis::Pp);  // a stage's ranks are consecutive
  const double memory_Bps = slowest_hbm_Bps(stage * stage_ranks, (stage + 1) * stage_ranks, true);
  t.duration_s = params * w_.optimizer_step_bytes_per_param() / memory_Bps;
  t.stage = stage;
  t.label = label(kOptimizer);
  // The step also waits for what the stage's last pass left running (a blocking send, TP
  // collectives on the overlap stream).
  next_deps_.assign(stage_waits_[stage].begin(), stage_waits_[stage].end());
  stage_waits_[stage].clear();
  next_deps_.push_back(last_dp_[stage]);
  last_compute_[stage] = add_task_with_pending(t, last_compute_[stage]);
  // ZeRO-1/2 gather the updated weights now (with strategy.param_gather_overlap under the next
  // forward instead: add_param_gathers); ZeRO-3 keeps them sharded until the next forward.
  if (gathers_before_forward()) return;
  if (s_.zero >= 1 && s_.zero <= 2 && dp_set_[stage] != kNoSet) {
    const Task ag =
        dp_collective(stage, TaskPhase::WeightUpdate, CollectiveOp::AllGather,
                      (device_params(stage) - experts) * w_.bytes_per_element,  // gathered weights
                      dp_set_[stage], kDpAllGather);
    last_dp_[stage] = add_task(ag, {last_compute_[stage], last_dp_[stage]});
  }
  if (s_.zero >= 1 && s_.zero <= 2 && expert_dp_set_[stage] != kNoSet && experts > 0) {
    const Task ag = dp_collective(stage, TaskPhase::WeightUpdate, CollectiveOp::AllGather,
                                  experts * w_.bytes_per_element, expert_dp_set_[stage], kExpertDpAllGather);
    last_dp_[stage] = add_task(ag, {last_compute_[stage], last_dp_[stage]});
  }
}

std::vector<IterationBuilder::ParamBucket> IterationBuilder::param_buckets(std::uint32_t chunk) const {
  std::vector<ParamBucket> out;
  const double G = w_.grad_bytes_per_element;
  bool open = false;
  for (const StageProgram::LayerParams& l : programs_[chunk].layer_params) {
    if (!open) out.push_back({l.layer, l.layer, 0, 0});
    open = true;
    ParamBucket& b = out.back();
    b.last = l.layer;
    b.dense += l.params - l.experts;
    b.experts += l.experts;
    if ((b.dense + b.experts) * G >= s_.bucket_bytes) open = false;
  }
  return out;
}

TaskId IterationBuilder::gather_bucket(std::uint32_t stage, TaskPhase phase, std::uint32_t micro,
                                       const ParamBucket& b, TaskId after) {
  const double B = w_.bytes_per_element;
  TaskId gathered = kNone;
  const bool zero3 = s_.zero == 3;
  for (const auto& [params, set, l] :
       {std::tuple{b.dense, dp_set_[stage], zero3 ? kDpParamAllGather : kDpAllGather},
        std::tuple{b.experts, expert_dp_set_[stage], zero3 ? kDpParamAllGather : kExpertDpAllGather}}) {
    if (params <= 0 || set == kNoSet) continue;
    Task t = dp_collective(stage, phase, CollectiveOp::AllGather, params * B, set, l);
    t.microbatch = micro;
    gathered = last_dp_[stage] = add_task(t, {after, last_dp_[stage]});
  }
  return gathered;
}

void IterationBuilder::add_param_gathers() {
  // Megatron-Core's --overlap-param-gather: the weights the last optimizer step updated are
  // all-gathered bucket by bucket when the next iteration starts (the iteration here stands for
  // the next), on the stage's DP stream in the order its first forward needs them; the first
  // forward of each chunk waits, layer by layer, for the bucket holding the layer. The routed
  // experts' parameters (ep > 1 or etp < tp) go over their own replicas.
  param_waits_.assign(chunks(), {});
  buckets_.assign(chunks(), {});
  if (gather_overlap_ == ParamGatherOverlap::None) return;
  for (std::uint32_t c = 0; c < chunks(); ++c) buckets_[c] = param_buckets(c);
  if (!gathers_before_forward()) return;
  for (std::uint32_t c = 0; c < chunks(); ++c)
    for (const ParamBucket& b : buckets_[c]) {
      const TaskId gathered = gather_bucket(c % s_.pp, TaskPhase::Forward, 0, b, kNone);
      if (gathered != kNone) param_waits_[c].emplace_back(b.first, gathered);
    }
}

std::vector<std::pair<std::uint32_t, TaskId>> IterationBuilder::zero3_pass_gathers(std::uint32_t chunk,
                                                                                   std::uint32_t micro,
                                                                                   bool forward) {
  // FSDP: the pass's first bucket is gathered when the pass begins (after the stage's previous
  // compute), each later one on the DP stream as soon as the one before it is done, under the
  // layers before it (the prefetch); the backward gathers in reverse layer order.
  const std::vector<ParamBucket>& buckets = buckets_[chunk];
  const std::uint32_t stage = chunk % s_.pp;
  std::vector<std::pair<std::uint32_t, TaskId>> out;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const ParamBucket& b = buckets[forward ? i : buckets.size() - 1 - i];
    const TaskId gathered = gather_bucket(stage, forward ? TaskPhase::Forward : TaskPhase::Backward, micro, b,
                                          last_compute_[stage]);
    if (gathered != kNone) out.emplace_back(forward ? b.first : b.last, gathered);
  }
  return out;
}

TaskGraph IterationBuilder::build() {
  g_.gpus = gpus_;
  const std::uint32_t pp = s_.pp;
  programs_.resize(chunks());
  dp_set_.assign(pp, kNoSet);
  expert_dp_set_.assign(pp, kNoSet);
  overlap_stream_.assign(pp, kNoSet);
  cp_stream_.assign(pp, kNoSet);
  ep_stream_.assign(pp, kNoSet);
  deferred_grad_bytes_.assign(pp, 0);
  deferred_expert_bytes_.assign(pp, 0);
  stage_waits_.assign(pp, {});
  const bool wrap = virtual_stages_ > 1;  // sends from the last device to the first and back
  for (std::uint32_t p = 0; p < pp; ++p) {
    compute_stream_.push_back(g_.add_stream("stage" + std::to_string(p) + ".compute"));
    dp_stream_.push_back(g_.add_stream("stage" + std::to_string(p) + ".dp"));
    send_fwd_stream_.push_back(
        p + 1 < pp || wrap ? g_.add_stream("stage" + std::to_string(p) + ".send_forward") : 0);
    send_bwd_stream_.push_back(p > 0 || wrap ? g_.add_stream("stage" + std::to_string(p) + ".send_backward")
                                             : 0);
    // Gradients reduce over every rank holding the same weights: dp x cp.
    if (s_.grad_replicas() > 1 && !s_.per_layer())
      dp_set_[p] = g_.add_group_set(ranks_.joint_groups({Axis::Cp, Axis::Dp}, {{Axis::Pp, p}}));
    // ep > 1: expert gradients reduce over the ranks holding the same experts (none when every
    // rank of the dp x cp group holds different ones).
    if (s_.experts_apart() && s_.expert_replicas() > 1 && !s_.per_layer())
      expert_dp_set_[p] = g_.add_group_set(expert_grid(s_).groups(Axis::Dp, {{Axis::Pp, p}}));
    pp_fwd_set_.push_back(p + 1 < pp ? g_.add_group_set(ranks_.pairs(Axis::Pp, p, p + 1)) : kNoSet);
    pp_bwd_set_.push_back(p > 0 ? g_.add_group_set(ranks_.pairs(Axis::Pp, p, p - 1)) : kNoSet);
  }
  if (wrap) {
    pp_wrap_fwd_set_ = g_.add_group_set(ranks_.pairs(Axis::Pp, pp - 1, 0));
    pp_wrap_bwd_set_ = g_.add_group_set(ranks_.pairs(Axis::Pp, 0, pp - 1));
  }
  if (m_.transformer && m_.transformer->tied_embeddings && pp > 1) {
    tied_sync_set_ = g_.add_group_set(ranks_.pairs(Axis::Pp, 0, pp - 1));
  }
  const std::size_t estimate = 8 * std::size_t{chunks()} * s_.microbatches + 64 * pp + m_.layers.size();
  g_.tasks.reserve(estimate);
  g_.dep_offsets.reserve(estimate + 1);
  g_.deps.reserve(2 * estimate);
  if (!s_.sfb_layers.empty()) sfb_pending_.assign(pp, {});
  if (s_.per_layer() || m_.has_tables())
    make_per_layer_program();
  else
    make_3d_programs();
  add_zero3_gathers();

  sent_fwd_.assign(chunks(), std::vector<TaskId>(s_.microbatches, kNone));
  sent_bwd_.assign(chunks(), std::vector<TaskId>(s_.microbatches, kNone));
  last_compute_.assign(pp, kNone);
  last_dp_.assign(pp, kNone);
  add_param_gathers();
  std::vector<std::vector<Pass>> orders(pp);
  std::vector<std::size_t> cursor(pp, 0);
  std::size_t remaining = 0;
  for (std::uint32_t p = 0; p < pp; ++p) {
    orders[p] = stage_order(p);
    remaining += orders[p].size();
  }
  // Emit passes stage by stage as their cross-stage inputs exist, so every dependency is
  // added before the task that needs it.
  while (remaining > 0) {
    bool progress = false;
    for (std::uint32_t p = 0; p < pp; ++p) {
      while (cursor[p] < orders[p].size()) {
        const auto [forward, micro, chunk, paired] = orders[p][cursor[p]];
        const bool ready = forward ? (chunk == 0 || sent_fwd_[chunk - 1][micro] != kNone)
                                   : (chunk + 1 == chunks() || sent_bwd_[chunk + 1][micro] != kNone);
        if (!ready) break;
        const bool last_pass = cursor[p] + 1 == orders[p].size();
        // A chunk's gradients are complete after its last backward (microbatch mu - 1; with
        // one chunk per device that is the device's last pass).
        const bool final_backward =
            !forward && (virtual_stages_ == 1 ? last_pass : micro + 1 == s_.microbatches);
        emit_pass(chunk, micro, forward, final_backward, last_pass, paired);
        if (last_pass && !sfb_pending_.empty()) emit_sfb_rebuilds(p);
        if (last_pass) emit_optimizer(p);
        ++cursor[p];
        --remaining;
        progress = true;
      }
    }
    if (!progress) throw RuntimeFailure("pipeline schedule deadlocked while building the task graph");
  }
  return std::move(g_);
}

}  // namespace

namespace {

// Unequal devices or microbatches: memory is checked GPU by GPU (workload/hetero.hpp).
bool per_gpu_memory(const Workload& w, const Strategy& s) {
  return w.mixed() || s.batch_split == BatchSplit::Proportional;
}

// The plan's fields and memory check (the strategy already validated); `shares` when the memory
// is checked GPU by GPU.
IterationPlan memory_plan(const Workload& workload, const Strategy& strategy, const DeviceShares* shares) {
  IterationPlan plan;
  plan.strategy = strategy;
  plan.dp = strategy.dp;
  plan.tp = strategy.tp;
  plan.pp = strategy.pp;
  plan.cp = strategy.cp;
  plan.ep = strategy.ep;
  plan.microbatches = strategy.microbatches;
  plan.global_batch = workload.global_batch;
  plan.graph.gpus = strategy.gpus();
  double capacity = workload.device.hbm_bytes;
  std::string device;  // named when the devices differ
  if (shares) {
    plan.replica_samples = shares->replica_samples;
    RankMemory tight = tightest_rank_memory(workload, strategy, shares->replica_samples);
    plan.memory = tight.memory;
    capacity = tight.capacity;
    device = " " + tight.device;
  } else {
    plan.memory = memory_per_gpu(workload, strategy);
  }
  plan.memory_per_gpu_bytes = plan.memory.total();
  plan.feasible = plan.memory.total() <= capacity;
  if (!plan.feasible) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "needs %.3g GiB per GPU on stage %u (%.3g GiB reserve included), device%s has %.3g GiB",
                  plan.memory.total() / kGiB, plan.memory.stage, plan.memory.reserve / kGiB, device.c_str(),
                  capacity / kGiB);
    plan.infeasible_reason = buf;
  }
  return plan;
}

}  // namespace

IterationPlan plan_memory(const Workload& workload, const Strategy& strategy) {
  validate_strategy(strategy, workload, strategy.gpus());
  if (!per_gpu_memory(workload, strategy)) return memory_plan(workload, strategy, nullptr);
  const DeviceShares shares = device_shares(workload, strategy);
  return memory_plan(workload, strategy, &shares);
}

IterationPlan plan_iteration(const Workload& workload, const Strategy& strategy, LayerCostCache* cache) {
  validate_strategy(strategy, workload, strategy.gpus());
  // The stage split and per-stage slowdowns, shared by the memory check and the graph.
  const DeviceShares shares = device_shares(workload, strategy);
  IterationPlan plan =
      memory_plan(workload, strategy, per_gpu_memory(workload, strategy) ? &shares : nullptr);
  // Transformer layers: their collectives (and, per operator, their times) from the layer costs.
  const bool transformer =
      workload.model.transformer && !strategy.per_layer() && !workload.model.has_tables();
  std::optional<TransformerCosts> own, own_kept;
  const TransformerCosts* costs = nullptr;
  const TransformerCosts* kept_costs = nullptr;  // block recomputation's skipped blocks
  if (transformer) {
    LayerCostKey key = layer_cost_key(workload, strategy);
    if (!workload.per_operator) {
      // Only the collective counts are used: any valid device gives them.
      key.device = KernelDevice{1, 1, 1, 0, 1, {{1, 1}}, 1, 1, {}, 0, 1, 1};
    }
    if (partial_recompute(strategy)) {  // a copy: the next lookup may move or replace the cache's entries
      const LayerCostKey kept = skipped_blocks_key(key);
      own_kept = cache ? cache->get(kept) : transformer_costs(kept);
      kept_costs = &*own_kept;
    }
    if (cache) {
      costs = &cache->get(key);
    } else {
      own = transformer_costs(key);
      costs = &*own;
    }
  }
  IterationBuilder builder(workload, strategy, costs, kept_costs, shares);
  plan.graph = builder.build();
  plan.total_flops = builder.total_flops();
  return plan;
}

}  // namespace toposweep
