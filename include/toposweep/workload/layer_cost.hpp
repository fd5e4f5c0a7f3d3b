#pragma once
// Time of a transformer's layers per microbatch on one GPU, operator by operator (docs/models.md,
// "Per-operator compute"): each GEMM at the device's sustained GEMM rate times its wave
// quantization over the SMs, or its operand bytes at the memory-kernel bandwidth, whichever is
// slower; each memory-bound kernel (norms, softmax, dropout, activations, residual adds, cross
// entropy) its bytes at that bandwidth; shapes follow tensor and sequence parallelism. The
// tensor-parallel collectives are not timed here (the network model times them): each pass
// reports how many it issues, which of them run under a GEMM, and the compute-stream time lost
// to the SMs those overlapped collectives occupy.
//
// A transformer's blocks are identical, so one block, the embedding and the head are computed
// once per (model, device, strategy shape) and kept in a LayerCostCache.
#include <cstdint>
#include <utility>
#include <vector>

#include "toposweep/util/collective_op.hpp"
#include "toposweep/util/link_class.hpp"
#include "toposweep/workload/block.hpp"
#include "toposweep/workload/model.hpp"
#include "toposweep/workload/strategy.hpp"
#include "toposweep/workload/workload.hpp"

namespace toposweep {

// What the per-operator model reads from a device and a datatype.
struct KernelDevice {
  double peak_flops = 0;  // for the training datatype
  double gemm_efficiency = 0;
  double memory_Bps = 0;  // hbm bandwidth x memory_efficiency
  double kernel_floor_s = 0;
  std::uint32_t sms = 1;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> tiles;
  double flash_forward = 0, flash_backward = 0;  // fractions of peak
  LinkClass intra_server;                        // to estimate overlapped collectives
  double collective_sm_share = 0;                // collective_sms / sms
  // The weight GEMMs' peak and sustained fraction (model.datatype = fp8: the fp8 ones; else
  // peak_flops and gemm_efficiency).
  double weight_gemm_peak_flops = 0, weight_gemm_efficiency = 0;
  // The MoE expert GEMMs' fraction of weight_gemm_peak_flops (Device::grouped_gemm_efficiency).
  double expert_gemm_efficiency = 0;
  bool operator==(const KernelDevice&) const = default;
};
KernelDevice kernel_device(const Workload& w);

// Useful fraction of SM time of a batch of M x N GEMM outputs for the best of the device's CTA
// tiles: partial tiles and a partly filled last wave of `sms` tiles do no useful work.
double wave_efficiency(double M, double N, double batch, std::uint32_t sms,
                       const std::vector<std::pair<std::uint32_t, std::uint32_t>>& tiles);
// A batch of (M x K) x (K x N) GEMMs with `elem` bytes per operand element and `out_bytes` per
// output element: max(FLOPs at peak x gemm_efficiency x waves, bytes at memory_Bps, floor).
double gemm_seconds(const KernelDevice& d, double M, double N, double K, double batch, double elem,
                    double out_bytes);
// A memory-bound kernel moving `bytes`.
double memory_seconds(const KernelDevice& d, double bytes);
// A ring collective among `ranks` GPUs of one server (nccl-tests per-rank buffer convention),
// on the device's intra-server link class: NCCL's latency model plus the bus bytes at the
// achievable bandwidth.
double intra_collective_seconds(const LinkClass& link, CollectiveOp op, double bytes, std::uint32_t ranks);

// Tensor-parallel collectives one pass issues, each of LayerCost::tp_bytes per rank.
struct TpCollectives {
  std::uint32_t allreduce = 0, reducescatter = 0, allgather = 0;
  std::uint32_t total() const { return allreduce + reducescatter + allgather; }
  bool operator==(const TpCollectives&) const = default;
};

struct PassCost {
  double compute_s = 0;   // compute stream: kernels, plus the SM share overlapped collectives take
  TpCollectives exposed;  // on the compute stream, between kernels
  TpCollectives hidden;   // under a GEMM (strategy.tp_overlap)
  // The routed experts' token collectives over the expert tensor-parallel ranks (Megatron-Core's
  // token dispatcher gathers the dispatched tokens and reduce-scatters the experts' outputs), each
  // of LayerCost::expert_tp_bytes, on the compute stream.
  TpCollectives expert;
  bool operator==(const PassCost&) const = default;
};

struct LayerCost {
  PassCost forward;
  PassCost backward;    // recomputation included
  double tp_bytes = 0;  // per-rank buffer of each TP collective: microbatch x s x h x bytes
  // Per-rank buffer of each expert collective (PassCost::expert): the tokens the etp ranks' experts
  // take, k x microbatch x s x etp / tp (x Workload::expert_load, the busiest rank's) x h x bytes.
  double expert_tp_bytes = 0;
  bool operator==(const LayerCost&) const = default;
};

struct TransformerCosts {
  LayerCost block, embedding, head;
  LayerCost moe_block;  // a Mixture-of-Experts block (Layer::moe), when the shape has experts
  // The same with sliding-window attention (Layer::windowed), when the shape has a window.
  LayerCost windowed_block, windowed_moe_block;
};

// The per-operator costs of layer `l` (block, embedding or head), or null for other layers.
const LayerCost* cost_of_layer(const TransformerCosts& costs, const Layer& l);
// FLOPs per sample a layer's backward recomputes: its whole forward with full recomputation
// (transformer blocks only, for transformers); with selective recomputation the attention core
// (4 s^2 h) when strategy.recompute_modules has core_attn, unless attention is fused (then
// nothing is kept to recompute), plus the GEMMs the list's other modules run again; else 0.
double recomputed_forward_flops(const Workload& w, const Strategy& s, const Layer& l);

// Everything the costs depend on.
struct LayerCostKey {
  TransformerShape shape;
  KernelDevice device;
  double elem = 2, grad_elem = 2;  // bytes per activation / gradient element
  double gemm_elem = 2;            // bytes per weight-GEMM operand element (fp8: 1)
  double microbatch = 1;
  ActivationSplit split;  // tp and sequence parallelism (activation_split)
  Recompute recompute = Recompute::None;
  RecomputeModules recompute_modules = RecomputeModules::CoreAttn;  // with selective recomputation
  TpOverlap tp_overlap = TpOverlap::None;
  bool fused_attention = false;
  bool grad_accum_fusion = true;
  // The busiest EP rank's expert rows over the mean (Workload::expert_load: model.moe_imbalance with
  // ep > 1, capped or padded by the capacity factor; 1 otherwise).
  double expert_load = 1;
  Fp8Recipe fp8_recipe = Fp8Recipe::Delayed;  // model.fp8_recipe (fp8 GEMM operands only)
  // model.moe_dispatch_datatype = fp8 with ep > 1: the experts' first GEMM receives its input in
  // fp8, quantized before the dispatch.
  bool fp8_dispatch = false;
  bool operator==(const LayerCostKey&) const = default;
};
LayerCostKey layer_cost_key(const Workload& w, const Strategy& s);
// The key of the blocks block recomputation skips (strategy.recompute_layers, block_recompute.hpp):
// `key` without recomputation.
LayerCostKey skipped_blocks_key(LayerCostKey key);

TransformerCosts transformer_costs(const LayerCostKey& key);

// Costs by key; a sweep or an optimizer keeps one and hands it to plan_iteration so that
// strategies of the same shape share them.
class LayerCostCache {
 public:
  const TransformerCosts& get(const LayerCostKey& key);
  std::size_t size() const { return entries_.size(); }

 private:
  std::vector<std::pair<LayerCostKey, TransformerCosts>> entries_;
  std::size_t next_ = 0;  // ring replacement once full
};

}  // namespace toposweep
