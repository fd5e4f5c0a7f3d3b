// Per-operator costs of a transformer's block, embedding and head (docs/models.md). Byte counts
// are HBM traffic per element: e bytes per activation element, 1 per dropout-mask element, 4 per
// fp32 value; the kernel list and the traffic of each follow Megatron-LM's GPT layers with its
// fused kernels (bias + GeLU, bias + dropout + residual add, scale-mask-softmax).
#include "toposweep/workload/layer_cost.hpp"

#include <algorithm>
#include <cmath>

#include "toposweep/workload/block.hpp"
#include "toposweep/workload/cross_entropy.hpp"
#include "toposweep/workload/fp8_quantize.hpp"
#include "toposweep/workload/memory.hpp"

namespace toposweep {

KernelDevice kernel_device(const Workload& w) {
  const Device& dev = w.device;
  KernelDevice d;
  d.peak_flops = w.peak_flops_per_s;
  d.gemm_efficiency = dev.gemm_efficiency;
  d.weight_gemm_peak_flops = w.gemm_peak_flops_per_s;
  d.weight_gemm_efficiency = w.gemm_efficiency;
  // Grouped expert GEMMs at their measured fraction; with fp8 the fp8 fraction scaled by the same
  // grouped / dense ratio (no fp8 grouped GEMM was measured).
  const double grouped = dev.grouped_gemm_efficiency;
  d.expert_gemm_efficiency = !(grouped > 0) ? w.gemm_efficiency
                             : w.fp8()      ? w.gemm_efficiency * grouped / dev.gemm_efficiency
                                            : grouped;
  d.memory_Bps = dev.hbm_Bps * dev.memory_efficiency;
  d.kernel_floor_s = dev.kernel_floor_s;
  d.sms = std::max<std::uint32_t>(1, dev.sms);
  d.tiles = dev.gemm_tiles;
  d.flash_forward = dev.flash_forward_efficiency;
  d.flash_backward = dev.flash_backward_efficiency;
  d.intra_server = dev.intra_server;
  d.collective_sm_share = std::min(0.9, static_cast<double>(dev.collective_sms) / d.sms);
  return d;
}

double wave_efficiency(double M, double N, double batch, std::uint32_t sms,
                       const std::vector<std::pair<std::uint32_t, std::uint32_t>>& tiles) {
  double best = 0;
  for (const auto& [tm, tn] : tiles) {
    const double count = std::ceil(M / tm) * std::ceil(N / tn) * batch;
    const double waves = std::ceil(count / sms);
    best = std::max(best, M * N * batch / (static_cast<double>(tm) * tn) / (waves * sms));
  }
  return best > 0 ? best : 1.0;
}

double gemm_seconds(const KernelDevice& d, double M, double N, double K, double batch, double elem,
                    double out_bytes) {
  const double flops = 2.0 * M * N * K * batch;
  const double compute =
      flops / (d.peak_flops * d.gemm_efficiency * wave_efficiency(M, N, batch, d.sms, d.tiles));
  const double bytes = batch * (elem * (M * K + K * N) + out_bytes * M * N);
  return std::max({compute, bytes / d.memory_Bps, d.kernel_floor_s});
}

double memory_seconds(const KernelDevice& d, double bytes) {
  return std::max(bytes / d.memory_Bps, d.kernel_floor_s);
}

double intra_collective_seconds(const LinkClass& link, CollectiveOp op, double bytes, std::uint32_t ranks) {
  if (ranks <= 1 || bytes <= 0 || !(link.achievable_Bps() > 0)) return 0;
  const double steps = op == CollectiveOp::AllReduce ? 2.0 * (ranks - 1) : ranks - 1.0;
  return link.latency_s + steps * link.step_latency_s +
         busbw_factor(op, static_cast<int>(ranks)) * bytes / link.achievable_Bps();
}

namespace {

// Builds one pass: compute time, and the TP collectives with where they run.
class Pass {
 public:
  Pass(const KernelDevice& d, const LayerCostKey& k, double tp_bytes) : d_(d), k_(k), bytes_(tp_bytes) {}
  void kernel(double seconds) { cost_.compute_s += seconds; }
  void exposed(CollectiveOp op) { count(cost_.exposed, op); }
  // One of the routed experts' token collectives (PassCost::expert), exposed.
  void expert(CollectiveOp op) { count(cost_.expert, op); }
  // A collective under `gemm_s` of GEMM time: the GEMM loses the SMs the collective's kernels
  // occupy while both run (at most until the GEMM would have finished at the reduced rate), and
  // the pass waits for what of the collective outlasts its GEMM: the next kernel needs its
  // result (Transformer Engine's userbuffers and Megatron's asynchronous gradient collectives
  // overlap each collective with its own GEMM, not with the whole pass).
  void hidden(CollectiveOp op, double gemm_s) {
    count(cost_.hidden, op);
    const double share = d_.collective_sm_share;
    const double comm = intra_collective_seconds(d_.intra_server, op, bytes_, k_.split.tp);
    const double slowed = gemm_s / (1 - share);  // the GEMM's time while the collective runs
    cost_.compute_s += share * std::min(comm, slowed) + std::max(0.0, comm - slowed);
  }
  // A collective that is hidden when `overlap`, else exposed.
  void collective(CollectiveOp op, bool overlap, double gemm_s) {
    if (overlap)
      hidden(op, gemm_s);
    else
      exposed(op);
  }
  const PassCost& cost() const { return cost_; }
  void add(const PassCost& other) {
    cost_.compute_s += other.compute_s;
    for (auto [mine, theirs] :
         {std::pair{&cost_.exposed, &other.exposed}, std::pair{&cost_.hidden, &other.hidden},
          std::pair{&cost_.expert, &other.expert}}) {
      mine->allreduce += theirs->allreduce;
      mine->reducescatter += theirs->reducescatter;
      mine->allgather += theirs->allgather;
    }
  }

 private:
  static void count(TpCollectives& c, CollectiveOp op) {
    if (op == CollectiveOp::AllReduce) ++c.allreduce;
    if (op == CollectiveOp::ReduceScatter) ++c.reducescatter;
    if (op == CollectiveOp::AllGather) ++c.allgather;
  }
  const KernelDevice& d_;
  const LayerCostKey& k_;
  double bytes_;
  PassCost cost_;
};

struct Dims {
  double T, h, s, V, b;  // tokens, hidden, sequence (the rank's s / cp), vocab, batch
  double t;              // tp
  double cp;             // context parallelism: the sequence's ranks (each query attends to cp x s keys)
  double hr;             // elements per token the norm / dropout region holds (h / t with SP)
  bool sp;               // sequence parallelism: the sequence region split over the t ranks
  double ep;             // expert parallelism: the rank's experts / ep experts take ep x the tokens
  double imbalance;      // the busiest EP rank's share of them over the mean (Workload::expert_load)
  double et;             // expert tensor parallelism: the ranks each routed expert is split over
  // The tokens the expert tensor-parallel ranks gather over the rank's own: with sequence
  // parallelism each rank holds 1 / t of them and the etp ranks gather etp / t; without, all.
  double expert_tokens;
  // How many ranks an operator on `axis` splits its columns over: t, or et for the experts.
  double ranks(ParallelAxis axis) const { return axis == ParallelAxis::Expert ? et : t; }
  // Whether an operator on `axis` is tensor-split over more than one rank (its TP collectives run).
  bool split(ParallelAxis axis) const {
    return (axis == ParallelAxis::Tensor || axis == ParallelAxis::Expert) && ranks(axis) > 1;
  }
};

Dims dims_of(const LayerCostKey& k) {
  const TransformerShape& sh = k.shape;
  Dims x{};
  x.b = k.microbatch;
  x.cp = k.split.cp;
  x.s = sh.seq_len / x.cp;
  x.T = x.b * x.s;
  x.h = sh.hidden;
  x.V = sh.vocab;
  x.t = k.split.tp;
  x.sp = k.split.sequence_split();
  x.ep = k.split.ep;
  x.imbalance = k.expert_load;
  x.hr = x.sp ? x.h / x.t : x.h;
  x.et = k.split.expert_tp();
  x.expert_tokens = x.sp ? x.et / x.t : 1;
  return x;
}

bool tp_comms(const LayerCostKey& k) {
  return k.split.tp > 1;
}

// A block operator's GEMM on one TP rank for a microbatch: tensor-split projections lose their
// N (column-parallel) or K (row-parallel) to the ranks, the attention core its heads; a grouped
// expert GEMM keeps its batch (one GEMM per expert); a sequence-axis GEMM (the MoE router, MLA's
// down projections) runs on the rank's s / t tokens with sequence parallelism.
struct RankGemm {
  double M, N, K, batch;
};
RankGemm rank_gemm(const BlockOp& op, const Dims& x) {
  if (op.kind == OpKind::AttentionCore) return {op.M, op.N, op.K, x.b * op.batch / x.t};
  const double T = x.b * op.M;
  if (op.role == OpRole::ExpertGemm) {
    // Expert parallelism: experts / ep local experts, each with the tokens ep ranks send it (the
    // etp ranks' gathered tokens), split over the etp ranks.
    const double M = T * x.ep * x.imbalance * x.expert_tokens, batch = op.batch / x.ep;
    return op.column ? RankGemm{M, op.N / x.et, op.K, batch} : RankGemm{M, op.N, op.K / x.et, batch};
  }
  if (op.axis == ParallelAxis::Sequence && x.sp) return {T / x.t, op.N, op.K, op.batch};
  if (op.axis != ParallelAxis::Tensor) return {T, op.N, op.K, op.batch};
  return op.column ? RankGemm{T, op.N / x.t, op.K, op.batch} : RankGemm{T, op.N, op.K / x.t, op.batch};
}
double forward_gemm_seconds(const KernelDevice& d, const BlockOp& op, const Dims& x, double e) {
  const RankGemm g = rank_gemm(op, x);
  return gemm_seconds(d, g.M, g.N, g.K, g.batch, e, e);
}

// The device the weight GEMMs (the block's projections and expert GEMMs) run on: with
// model.datatype = fp8 the fp8 peak and efficiency (their operands are k.gemm_elem bytes, their
// outputs k.elem); else `d` itself.
KernelDevice weight_gemm_device(const KernelDevice& d) {
  KernelDevice g = d;
  g.peak_flops = d.weight_gemm_peak_flops;
  g.gemm_efficiency = d.weight_gemm_efficiency;
  return g;
}
// The MoE layer's expert GEMMs: the weight GEMMs' device at the grouped GEMMs' efficiency (0, as
// in a KernelDevice built by hand: the weight GEMMs' own).
KernelDevice expert_gemm_device(const KernelDevice& d) {
  KernelDevice g = weight_gemm_device(d);
  if (d.expert_gemm_efficiency > 0) g.gemm_efficiency = d.expert_gemm_efficiency;
  return g;
}
// Transformer Engine's modules run the block's projections and expert GEMMs (fp8 under
// model.datatype = fp8). Megatron-Core's MoE router is not one (TopKRouter's gating is a torch
// GEMM) and stays in the activations' datatype, as does the output layer (head_cost).
bool te_gemm(const BlockOp& op) {
  return op.role != OpRole::Router;
}
// The GEMMs' operands are quantized to fp8 (model.datatype = fp8): fp8_quantize.hpp.
bool fp8_operands(const LayerCostKey& k) {
  return k.gemm_elem < k.elem;
}
// The devices a pass's block GEMMs run on, built once: `d` itself for the router; else the weight
// GEMMs' device, at the grouped GEMMs' efficiency for the experts. Operands: k.gemm_elem bytes for
// Transformer Engine's GEMMs, else the activations'.
struct GemmDevices {
  explicit GemmDevices(const KernelDevice& d)
      : base(d), weight(weight_gemm_device(d)), expert(expert_gemm_device(d)) {}
  const KernelDevice& of(const BlockOp& op) const {
    return !te_gemm(op) ? base : op.role == OpRole::ExpertGemm ? expert : weight;
  }
  static double elem(const BlockOp& op, const LayerCostKey& k) { return te_gemm(op) ? k.gemm_elem : k.elem; }
  const KernelDevice& base;
  KernelDevice weight, expert;
};
double projection_seconds(const GemmDevices& devs, const BlockOp& op, const Dims& x, const LayerCostKey& k) {
  const RankGemm g = rank_gemm(op, x);
  return gemm_seconds(devs.of(op), g.M, g.N, g.K, g.batch, GemmDevices::elem(op, k), k.elem);
}
// How many ranks' operands an fp8 operand of `op` is gathered from (fp8_quantize_bytes): with
// sequence parallelism, a column-parallel GEMM's input (forward) and a row-parallel GEMM's output
// gradient (backward) are all-gathered in fp8 over the TP ranks; with an fp8 dispatch the experts'
// first GEMM receives top_k x imbalance copies of tokens quantized once before the dispatch.
double gathered_over(const BlockOp& op, const Dims& x, const LayerCostKey& k, bool input) {
  if (op.role == OpRole::ExpertGemm)
    return input && op.column && k.fp8_dispatch && k.shape.moe ? k.shape.moe->top_k * x.imbalance : 1;
  const bool gathered = x.sp && x.t > 1 && op.axis == ParallelAxis::Tensor && op.column == input;
  return gathered ? x.t : 1;
}
// Whether the norm before `gemm` writes its output in fp8 itself (fp8_norm_writes_fp8).
bool norm_writes_fp8(const LayerCostKey& k, const BlockOp& gemm) {
  return fp8_operands(k) && gemm.norm_fused_input && te_gemm(gemm) && fp8_norm_writes_fp8(k.fp8_recipe);
}
// Quantizing a TE GEMM's fp8 operands (fp8_quantize.hpp) on one rank for a microbatch: forward,
// its input (M x K); backward, its output gradient (M x N) and the column-wise copy of a gathered
// input (a transpose) for the weight gradient. 0 unless the operands are fp8. A norm-fed input
// needs the kernels of fp8_norm_fed_bytes (none at all when its norm writes it gathered in fp8).
double quantize_seconds(const KernelDevice& d, const BlockOp& op, const RankGemm& g, const Dims& x,
                        const LayerCostKey& k, bool backward) {
  if (!fp8_operands(k) || op.kind != OpKind::Gemm || !te_gemm(op)) return 0;
  const double input = g.M * g.K * g.batch, grad = g.M * g.N * g.batch;
  const double in = gathered_over(op, x, k, true), out = gathered_over(op, x, k, false);
  if (!backward) {
    if (!op.norm_fused_input) return memory_seconds(d, fp8_quantize_bytes(input, in, k.fp8_recipe));
    const double bytes = fp8_norm_fed_bytes(input, in, k.fp8_recipe);
    return bytes > 0 ? memory_seconds(d, bytes) : 0.0;
  }
  double bytes = fp8_quantize_bytes(grad, out, k.fp8_recipe);
  if (out > 1) bytes += fp8_transpose_bytes(grad);
  if (in > 1) bytes += fp8_transpose_bytes(input);
  return memory_seconds(d, bytes);
}

// Bytes a memory-bound operator's kernel with traffic `tr` moves on one TP rank for a
// microbatch: per-head s x s tensors split by heads, token tensors by the tensor axis (or, with
// sequence parallelism, the sequence axis).
double kernel_bytes(const Traffic& tr, const BlockOp& op, const Dims& x, double e, bool sp) {
  const double c = tr.bytes(e);
  if (op.batch > 1) return c * (x.b * (op.batch / x.t) * op.M * op.N);
  const double T = x.b * op.M;
  if (op.axis == ParallelAxis::Tensor) return c * T * op.N / x.t;
  if (op.axis == ParallelAxis::Expert) return c * T * x.expert_tokens * op.N / x.et;
  return c * T * (sp ? op.N / x.t : op.N);
}

// The GEMM the output of operator `i` (a norm) feeds: the next operator but collectives, if a GEMM.
const BlockOp* fed_gemm(const std::vector<BlockOp>& ops, std::size_t i) {
  for (std::size_t j = i + 1; j < ops.size(); ++j)
    if (ops[j].kind != OpKind::Collective) return ops[j].kind == OpKind::Gemm ? &ops[j] : nullptr;
  return nullptr;
}
// The forward bytes of memory-bound operator `i`: a norm whose output a norm_writes_fp8 GEMM reads
// writes it in fp8, 1 byte an element instead of e.
double forward_kernel_bytes(const LayerCostKey& k, const std::vector<BlockOp>& ops, std::size_t i,
                            const Dims& x, double e, bool sp) {
  const BlockOp& op = ops[i];
  const double bytes = kernel_bytes(op.forward, op, x, e, sp);
  const BlockOp* gemm = op.role == OpRole::Norm ? fed_gemm(ops, i) : nullptr;
  if (!gemm || !norm_writes_fp8(k, *gemm)) return bytes;
  return bytes - (e - 1) * kernel_bytes(Traffic{1, 0}, op, x, 1, sp);
}

// The kernels of the block's operators of `role`, all alike, as one count x time.
double alike_seconds(const KernelDevice& d, const std::vector<BlockOp>& ops, OpRole role, const Dims& x,
                     double e, bool sp) {
  double count = 0;
  const BlockOp* first = nullptr;
  for (const BlockOp& op : ops)
    if (op.role == role) {
      ++count;
      if (!first) first = &op;
    }
  return first ? count * memory_seconds(d, kernel_bytes(first->forward, *first, x, e, sp)) : 0;
}

const BlockOp* first_of(const std::vector<BlockOp>& ops, OpKind kind) {
  for (const BlockOp& op : ops)
    if (op.kind == kind) return &op;
  return nullptr;
}

bool moe_kernel(const BlockOp& op) {
  return op.role == OpRole::Permute || op.role == OpRole::ExpertActivation || op.role == OpRole::Unpermute;
}

// A MoE layer's memory-bound kernels (block_moe.cpp): the permutation, the experts' activation
// and the unpermutation, forward or backward.
void moe_kernels(const KernelDevice& d, const Dims& x, const std::vector<BlockOp>& ops, double e, bool sp,
                 bool backward, Pass& pass) {
  for (const BlockOp& op : ops)
    if (moe_kernel(op))
      pass.kernel(memory_seconds(d, kernel_bytes(backward ? op.backward : op.forward, op, x, e, sp)));
}

// A fused (flash) attention kernel: causal QK^T and x V over half the score matrix (a sliding
// window's share of it, block_window.cpp), `factor` x b (a / t) s^2 d FLOPs (2 forward, 2.5 x 2
// backward) at the direction's fraction of peak.
double flash_seconds(const KernelDevice& d, const LayerCostKey& k, const Dims& x,
                     const std::vector<BlockOp>& ops, double factor, double efficiency) {
  const BlockOp& sc = *first_of(ops, OpKind::AttentionCore);
  return factor * x.b * (sc.batch / x.t) * sc.M * sc.N * x.cp * sc.K *
         attended_share(k.shape.seq_len, sc.window) / (d.peak_flops * efficiency);
}

// The block's forward kernels on `pass` (collectives included), as Megatron-LM runs them. The
// table is read in the order this model has always added the kernels' times (norms, the
// projections, the collectives, the attention core, the residuals, the activation), which
// keeps every sum as it was.
void block_forward(const KernelDevice& d, const LayerCostKey& k, const Dims& x,
                   const std::vector<BlockOp>& ops, Pass& pass) {
  const double e = k.elem;
  const bool sp = k.split.sequence_split();
  const bool full = k.tp_overlap == TpOverlap::Full;
  // The norms, one kernel each (alike unless one writes fp8 for its GEMM).
  double norms = 0;
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].role == OpRole::Norm) norms += memory_seconds(d, forward_kernel_bytes(k, ops, i, x, e, sp));
  pass.kernel(norms);
  std::vector<double> gemm_s(ops.size(), 0);
  double projections = 0, quantize = 0;
  const GemmDevices devs(d);
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == OpKind::Gemm) {
      projections += gemm_s[i] = projection_seconds(devs, ops[i], x, k);
      quantize += quantize_seconds(d, ops[i], rank_gemm(ops[i], x), x, k, false);
    }
  pass.kernel(projections);
  if (quantize > 0) pass.kernel(quantize);
  if (tp_comms(k)) {
    // Megatron's f before a column-parallel GEMM (an AllGather with SP) and g after a
    // row-parallel one (a ReduceScatter with SP, else an AllReduce), each under its GEMM; none
    // around experts that are not tensor-split (strategy.etp = 1). The routed experts' own
    // (Expert axis: the token dispatcher's gather after the dispatch and reduce-scatter before the
    // combine) run on the compute stream, outside Transformer Engine's GEMM overlap.
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (!x.split(ops[i].axis)) continue;
      if (ops[i].axis == ParallelAxis::Expert) {
        if (ops[i].role == OpRole::TpEnter && sp) pass.expert(CollectiveOp::AllGather);
        if (ops[i].role == OpRole::TpExit)
          pass.expert(sp ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce);
        continue;
      }
      if (ops[i].role == OpRole::TpEnter && sp && i + 1 < ops.size())
        pass.collective(CollectiveOp::AllGather, full, gemm_s[i + 1]);
      if (ops[i].role == OpRole::TpExit && i > 0)
        pass.collective(sp ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce, full, gemm_s[i - 1]);
    }
  }
  if (k.fused_attention) {
    pass.kernel(flash_seconds(d, k, x, ops, 2.0, d.flash_forward));
  } else {
    for (const BlockOp& op : ops)
      if (op.kind == OpKind::AttentionCore) pass.kernel(forward_gemm_seconds(d, op, x, e));
    for (const BlockOp& op : ops)  // softmax, dropout (+ mask), context permute
      if (op.role == OpRole::Softmax || op.role == OpRole::ScoreDropout || op.role == OpRole::ContextPermute)
        pass.kernel(memory_seconds(d, kernel_bytes(op.forward, op, x, e, sp)));
  }
  for (const BlockOp& op : ops)  // rotary embeddings on Q and K, fused attention or not
    if (op.role == OpRole::Rotary) pass.kernel(memory_seconds(d, kernel_bytes(op.forward, op, x, e, sp)));
  pass.kernel(alike_seconds(d, ops, OpRole::Residual, x, e, sp));    // bias + dropout + residual
  pass.kernel(alike_seconds(d, ops, OpRole::Activation, x, e, sp));  // bias + GeLU / SwiGLU
  moe_kernels(d, x, ops, e, sp, false, pass);
}

// What selective recomputation runs again: the attention core and the s x s kernels it dropped.
double attention_core_forward(const KernelDevice& d, const LayerCostKey& k, const Dims& x,
                              const std::vector<BlockOp>& ops) {
  const double e = k.elem;
  double seconds = 0;
  for (const BlockOp& op : ops)
    if (op.kind == OpKind::AttentionCore) seconds += forward_gemm_seconds(d, op, x, e);
  for (const BlockOp& op : ops)
    if (op.recompute == RecomputeClass::DroppedUnderSelective)
      seconds += memory_seconds(d, kernel_bytes(op.forward, op, x, e, k.split.sequence_split()));
  return seconds;
}

// What selective recomputation runs again for the modules besides the attention core
// (recompute_modules.hpp): the forward of every operator a listed module tags, as block_forward
// times it, and the TP collectives at the ends of a recomputed sublayer (a recomputed MLP gathers
// its input and reduces its output again).
void recomputed_modules_forward(const KernelDevice& d, const LayerCostKey& k, const Dims& x,
                                const std::vector<BlockOp>& ops, Pass& pass) {
  const RecomputeModules modules = without_core_attn(k.recompute_modules);
  if (modules == RecomputeModules::None) return;
  const double e = k.elem;
  const bool sp = k.split.sequence_split();
  const bool full = k.tp_overlap == TpOverlap::Full;
  const GemmDevices devs(d);
  auto gemm = [&](std::size_t i) {
    const BlockOp& op = ops[i];
    return op.kind == OpKind::Gemm ? projection_seconds(devs, op, x, k) : 0.0;
  };
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const BlockOp& op = ops[i];
    if (!recomputes(modules, op.module)) continue;
    if (op.kind == OpKind::Gemm) {
      pass.kernel(gemm(i));
      const double quantize = quantize_seconds(d, op, rank_gemm(op, x), x, k, false);  // its input, again
      if (quantize > 0) pass.kernel(quantize);
    } else if (op.kind == OpKind::MemoryBound) {
      pass.kernel(memory_seconds(d, forward_kernel_bytes(k, ops, i, x, e, sp)));
    } else if (op.kind == OpKind::AttentionCore) {
      pass.kernel(forward_gemm_seconds(d, op, x, e));
    } else if (tp_comms(k) && x.split(op.axis)) {
      if (op.role == OpRole::TpEnter && sp && i + 1 < ops.size())
        pass.collective(CollectiveOp::AllGather, full, gemm(i + 1));
      if (op.role == OpRole::TpExit && i > 0)
        pass.collective(sp ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce, full, gemm(i - 1));
    }
  }
}

double block_params_local(const Dims& x, const std::vector<BlockOp>& ops) {
  const BlockTotals sum = block_totals(ops);
  return sum.params_sharded / x.t + sum.params_replicated + sum.params_expert / (x.et * x.ep);
}

void block_backward(const KernelDevice& d, const LayerCostKey& k, const Dims& x,
                    const std::vector<BlockOp>& ops, Pass& pass) {
  const double e = k.elem;
  const bool sp = k.split.sequence_split();
  const TpOverlap ov = k.tp_overlap;
  const double wgrad_out = k.grad_accum_fusion ? 8 : e;  // fp32 accumulate (read + write) or a fresh gradient
  // Sequence-axis kernels (norm backwards, residual adds, dropout + add backwards), alike ones
  // counted together in the order they first appear.
  std::vector<std::pair<Traffic, double>> groups;
  const BlockOp* token_op = nullptr;
  for (const BlockOp& op : ops) {
    if (op.kind != OpKind::MemoryBound || op.axis != ParallelAxis::Sequence || moe_kernel(op)) continue;
    token_op = &op;
    for (const Traffic& tr : {op.backward, op.backward2}) {
      if (tr == Traffic{}) continue;
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == tr; });
      if (it == groups.end())
        groups.emplace_back(tr, 1.0);
      else
        ++it->second;
    }
  }
  for (const auto& [tr, count] : groups)
    pass.kernel(count * memory_seconds(d, kernel_bytes(tr, *token_op, x, e, sp)));
  for (const BlockOp& op : ops)
    if (op.role == OpRole::Activation)
      pass.kernel(memory_seconds(d, kernel_bytes(op.backward, op, x, e, sp)));
  moe_kernels(d, x, ops, e, sp, true, pass);
  for (const BlockOp& op : ops)  // the rotation of Q's and K's gradients back
    if (op.role == OpRole::Rotary) pass.kernel(memory_seconds(d, kernel_bytes(op.backward, op, x, e, sp)));
  const BlockOp& qkv = *first_of(ops, OpKind::Gemm);
  if (k.shape.biases) pass.kernel(memory_seconds(d, e * x.T * (qkv.N / x.t)));  // QKV bias gradient
  // Each projection's input-gradient (dgrad) and weight-gradient (wgrad) GEMMs (fp8 operands
  // with model.datatype = fp8, as Transformer Engine runs them).
  const GemmDevices devs(d);
  for (const BlockOp& op : ops) {
    if (op.kind != OpKind::Gemm) continue;
    const RankGemm g = rank_gemm(op, x);
    const KernelDevice& dg = devs.of(op);
    const double ge = GemmDevices::elem(op, k);
    const double dgrad = gemm_seconds(dg, g.M, g.K, g.N, g.batch, ge, e);
    const double wgrad = gemm_seconds(dg, g.K, g.N, g.M, g.batch, ge, wgrad_out);
    pass.kernel(dgrad + wgrad);
    const double quantize = quantize_seconds(d, op, g, x, k, true);
    if (quantize > 0) pass.kernel(quantize);
    // The routed experts keep their gathered tokens and take their gradients through the token
    // collectives' backward (below), not per GEMM.
    if (!tp_comms(k) || !x.split(op.axis) || op.axis == ParallelAxis::Expert) continue;
    if (op.column) {  // QKV and FFN1 split their outputs over TP ranks
      if (sp) {
        // Re-gather the saved (sequence-split) input for the weight gradient; reduce-scatter the
        // input gradient.
        pass.collective(CollectiveOp::AllGather, ov != TpOverlap::None, dgrad);
        pass.collective(CollectiveOp::ReduceScatter, ov != TpOverlap::None, wgrad);
      } else {
        pass.collective(CollectiveOp::AllReduce, ov != TpOverlap::None, wgrad);
      }
    } else if (sp) {
      // Gradient of the forward ReduceScatter: gather the incoming gradient before dgrad.
      pass.collective(CollectiveOp::AllGather, ov == TpOverlap::Full, dgrad);
    }
  }
  // The routed experts' token collectives backward: the gather's is a ReduceScatter of the
  // tokens' gradients (an AllReduce without sequence parallelism), the reduce-scatter's an
  // AllGather of the output gradients.
  if (tp_comms(k))
    for (const BlockOp& op : ops) {
      if (op.kind != OpKind::Collective || op.axis != ParallelAxis::Expert || !x.split(op.axis)) continue;
      if (op.role == OpRole::TpEnter) pass.expert(sp ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce);
      if (op.role == OpRole::TpExit && sp) pass.expert(CollectiveOp::AllGather);
    }
  if (!k.grad_accum_fusion)  // add this microbatch's gradients: read both, write the sum
    pass.kernel(memory_seconds(d, 3 * k.grad_elem * block_params_local(x, ops)));
  if (k.fused_attention) {
    pass.kernel(flash_seconds(d, k, x, ops, 2.5 * 2.0, d.flash_backward));
  } else {
    for (const BlockOp& op : ops)
      if (op.kind == OpKind::AttentionCore)
        pass.kernel(op.backward_gemms * forward_gemm_seconds(d, op, x, e));
    for (auto it = ops.rbegin(); it != ops.rend(); ++it)  // dropout backward, softmax backward
      if (it->kind == OpKind::MemoryBound && it->batch > 1)
        pass.kernel(memory_seconds(d, kernel_bytes(it->backward, *it, x, e, sp)));
    for (const BlockOp& op : ops)
      if (op.role == OpRole::ContextPermute)
        pass.kernel(memory_seconds(d, kernel_bytes(op.backward, op, x, e, sp)));
  }
}

// The block one CP rank runs: its s / cp tokens (the attention's keys still span the sequence:
// Dims::cp scales the attention core back up).
TransformerShape rank_shape(const LayerCostKey& k) {
  TransformerShape sh = k.shape;
  sh.seq_len /= k.split.cp;
  return sh;
}

LayerCost block_cost(const KernelDevice& d, const LayerCostKey& k, bool moe = false, bool windowed = false) {
  const Dims x = dims_of(k);
  const std::vector<BlockOp> ops = describe_block(rank_shape(k), moe, windowed);
  LayerCost c;
  c.tp_bytes = x.T * x.h * k.elem;
  for (const BlockOp& op : ops)  // the routed experts' tokens on one rank of the etp group
    if (op.kind == OpKind::Collective && op.axis == ParallelAxis::Expert && x.split(op.axis))
      c.expert_tp_bytes = x.b * op.M * op.N * x.expert_tokens * x.imbalance * k.elem;
  Pass fwd(d, k, c.tp_bytes), bwd(d, k, c.tp_bytes);
  block_forward(d, k, x, ops, fwd);
  block_backward(d, k, x, ops, bwd);
  if (k.recompute == Recompute::Full)
    bwd.add(fwd.cost());
  else if (k.recompute == Recompute::Selective) {
    if (recomputes(k.recompute_modules, RecomputeModules::CoreAttn) && !k.fused_attention)
      bwd.kernel(attention_core_forward(d, k, x, ops));
    recomputed_modules_forward(d, k, x, ops, bwd);
  }
  c.forward = fwd.cost();
  c.backward = bwd.cost();
  return c;
}

LayerCost embedding_cost(const KernelDevice& d, const LayerCostKey& k) {
  const Dims x = dims_of(k);
  const double e = k.elem;
  LayerCost c;
  c.tp_bytes = x.T * x.h * e;
  Pass fwd(d, k, c.tp_bytes), bwd(d, k, c.tp_bytes);
  fwd.kernel(memory_seconds(d, 2 * e * x.T * x.h));         // vocab-parallel lookup
  if (k.shape.position != PositionKind::Rotary)             // rotary models add no position table here
    fwd.kernel(memory_seconds(d, 3 * e * x.T * x.hr));      // + position embedding
  fwd.kernel(memory_seconds(d, (2 * e + 1) * x.T * x.hr));  // dropout
  if (tp_comms(k))
    fwd.exposed(k.split.sequence_split() ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce);
  bwd.kernel(memory_seconds(d, (2 * e + 1) * x.T * x.hr));  // dropout backward
  bwd.kernel(memory_seconds(d, (2 * e + 8) * x.T * x.h));   // scatter-add into the fp32 embedding gradient
  c.forward = fwd.cost();
  c.backward = bwd.cost();
  return c;
}

LayerCost head_cost(const KernelDevice& d, const LayerCostKey& k) {
  const Dims x = dims_of(k);
  const double e = k.elem;
  const double Vt = x.V / x.t;
  LayerCost c;
  c.tp_bytes = x.T * x.h * e;
  Pass fwd(d, k, c.tp_bytes), bwd(d, k, c.tp_bytes);
  fwd.kernel(memory_seconds(d, 2 * e * x.T * x.hr));  // final norm
  if (tp_comms(k) && k.split.sequence_split())
    fwd.collective(CollectiveOp::AllGather, k.tp_overlap == TpOverlap::Full, 0);
  // The logits GEMMs in the activations' datatype, also with model.datatype = fp8: Megatron-Core's
  // output layer is its own ColumnParallelLinear, not a Transformer Engine module (GPTModel), and
  // DeepSeek-V3 keeps its output head out of fp8 (arXiv:2412.19437 Sec. 3.3).
  const double logits = gemm_seconds(d, x.T, Vt, x.h, 1, e, e);
  fwd.kernel(logits);
  // Vocab-parallel cross entropy (model.cross_entropy, cross_entropy.hpp).
  const CrossEntropyBytes loss = cross_entropy_bytes(k.shape.cross_entropy, e);
  fwd.kernel(memory_seconds(d, loss.forward * x.T * Vt));
  if (k.shape.pooler) fwd.kernel(gemm_seconds(d, x.T, x.h, x.h, 1, e, e));  // BERT MLM transform
  bwd.kernel(memory_seconds(d, loss.backward * x.T * Vt));
  bwd.kernel(gemm_seconds(d, x.T, x.h, Vt, 1, e, e));
  const double wgrad = gemm_seconds(d, Vt, x.h, x.T, 1, e, k.grad_accum_fusion ? 8 : e);
  bwd.kernel(wgrad);
  if (tp_comms(k))
    bwd.collective(k.split.sequence_split() ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce,
                   k.tp_overlap != TpOverlap::None, wgrad);
  bwd.kernel(memory_seconds(d, 6 * e * x.hr * x.T));  // final norm backward
  if (k.shape.pooler) bwd.kernel(2 * gemm_seconds(d, x.T, x.h, x.h, 1, e, e));
  if (!k.grad_accum_fusion) bwd.kernel(memory_seconds(d, 3 * k.grad_elem * Vt * x.h));
  c.forward = fwd.cost();
  c.backward = bwd.cost();
  return c;
}

}  // namespace

LayerCostKey skipped_blocks_key(LayerCostKey key) {
  key.recompute = Recompute::None;
  return key;
}

LayerCostKey layer_cost_key(const Workload& w, const Strategy& s) {
  LayerCostKey k;
  if (w.model.transformer) k.shape = *w.model.transformer;
  k.device = kernel_device(w);
  k.elem = w.bytes_per_element;
  k.grad_elem = w.grad_bytes_per_element;
  k.gemm_elem = w.gemm_bytes_per_element;
  k.microbatch = microbatch_size(s, w);
  k.split = activation_split(s);
  k.recompute = s.recompute;
  k.recompute_modules = s.recompute_modules;
  k.tp_overlap = s.tp_overlap;
  k.fused_attention = w.fused_attention;
  if (w.model.transformer && w.model.transformer->moe) k.expert_load = w.expert_load(s.ep);
  // The recipe and the dispatch matter only to fp8 operands: other keys stay equal across them.
  if (fp8_operands(k)) {
    k.fp8_recipe = w.fp8_recipe;
    k.fp8_dispatch = s.ep > 1 && w.dispatch_bytes() < k.elem;
  }
  k.grad_accum_fusion = s.grad_accum_fusion;
  return k;
}

TransformerCosts transformer_costs(const LayerCostKey& key) {
  TransformerCosts c{
      block_cost(key.device, key), embedding_cost(key.device, key), head_cost(key.device, key), {}, {}, {}};
  if (key.shape.moe) c.moe_block = block_cost(key.device, key, true);
  if (key.shape.sliding_window > 0) {
    c.windowed_block = block_cost(key.device, key, false, true);
    if (key.shape.moe) c.windowed_moe_block = block_cost(key.device, key, true, true);
  }
  return c;
}

const LayerCost* cost_of_layer(const TransformerCosts& costs, const Layer& l) {
  if (l.kind == LayerKind::TransformerBlock && l.windowed)
    return l.moe ? &costs.windowed_moe_block : &costs.windowed_block;
  if (l.kind == LayerKind::TransformerBlock) return l.moe ? &costs.moe_block : &costs.block;
  if (l.kind == LayerKind::Embedding) return &costs.embedding;
  if (l.kind == LayerKind::Head) return &costs.head;
  return nullptr;
}

double recomputed_forward_flops(const Workload& w, const Strategy& s, const Layer& l) {
  const Model& m = w.model;
  if (s.recompute == Recompute::Full && (!m.transformer || l.kind == LayerKind::TransformerBlock))
    return l.forward_flops;
  if (s.recompute != Recompute::Selective || l.kind != LayerKind::TransformerBlock) return 0;
  double flops = 0;
  if (recomputes(s.recompute_modules, RecomputeModules::CoreAttn) && !w.fused_attention)
    flops = 4.0 * m.transformer->seq_len * double(m.transformer->seq_len) * m.transformer->hidden;
  const RecomputeModules modules = without_core_attn(s.recompute_modules);
  if (modules != RecomputeModules::None)  // the GEMMs the other modules run again
    for (const BlockOp& op : describe_block(*m.transformer, l))
      if (op.kind == OpKind::Gemm && recomputes(modules, op.module)) flops += op.flops();
  return flops;
}

const TransformerCosts& LayerCostCache::get(const LayerCostKey& key) {
  for (const auto& [k, c] : entries_)
    if (k == key) return c;
  constexpr std::size_t kCapacity = 64;
  if (entries_.size() < kCapacity) {
    entries_.emplace_back(key, transformer_costs(key));
    return entries_.back().second;
  }
  auto& slot = entries_[next_];
  next_ = (next_ + 1) % kCapacity;
  slot = {key, transformer_costs(key)};
  return slot.second;
}

}  // namespace toposweep
