// Per-operator costs of a transformer's block, embedding and head (docs/models.md). Byte counts
// are HBM traffic per element: e bytes per activation element, 1 per dropout-mask element, 4 per
// fp32 value; the kernel list and the traffic of each follow Megatron-LM's GPT layers with its
// fused kernels (bias + GeLU, bias + dropout + residual add, scale-mask-softmax).
#include "toposweep/workload/layer_cost.hpp"

#include <algorithm>
#include <cmath>

namespace toposweep {

KernelDevice kernel_device(const Workload& w) {
  const Device& dev = w.device;
  KernelDevice d;
  d.peak_flops = w.peak_flops_per_s;
  d.gemm_efficiency = dev.gemm_efficiency;
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
  // A collective under `gemm_s` of GEMM time: the GEMM loses the SMs the collective's kernels
  // occupy while both run (at most until the GEMM would have finished at the reduced rate).
  void hidden(CollectiveOp op, double gemm_s) {
    count(cost_.hidden, op);
    const double share = d_.collective_sm_share;
    const double comm = intra_collective_seconds(d_.intra_server, op, bytes_, k_.tp);
    cost_.compute_s += share * std::min(comm, gemm_s / (1 - share));
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
         {std::pair{&cost_.exposed, &other.exposed}, std::pair{&cost_.hidden, &other.hidden}}) {
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
  double T, h, a, s, d, f, kv, V,
      b;          // tokens, hidden, heads, sequence, head dim, ffn, kv width, vocab, batch
  double t;       // tp
  double hr;      // elements per token the norm / dropout region holds (h / t with SP)
  double scores;  // s x s attention elements on this rank
  double qkv_n;   // QKV output columns on this rank
  double mlp1_n;  // first FFN output columns on this rank
};

Dims dims_of(const LayerCostKey& k) {
  const TransformerShape& sh = k.shape;
  Dims x{};
  x.b = k.microbatch;
  x.s = sh.seq_len;
  x.T = x.b * x.s;
  x.h = sh.hidden;
  x.a = sh.heads;
  x.d = x.h / x.a;
  x.f = sh.ffn_hidden > 0 ? sh.ffn_hidden : 4 * x.h;
  x.kv = x.d * (sh.kv_heads > 0 ? sh.kv_heads : sh.heads);
  x.V = sh.vocab;
  x.t = k.tp;
  x.hr = k.sequence_parallel ? x.h / x.t : x.h;
  x.scores = x.b * (x.a / x.t) * x.s * x.s;
  x.qkv_n = (x.h + 2 * x.kv) / x.t;
  x.mlp1_n = (sh.gated_mlp ? 2 : 1) * x.f / x.t;
  return x;
}

bool tp_comms(const LayerCostKey& k) {
  return k.tp > 1;
}

// The block's forward kernels on `pass` (collectives included), as Megatron-LM runs them.
void block_forward(const KernelDevice& d, const LayerCostKey& k, const Dims& x, Pass& pass) {
  const double e = k.elem;
  const bool sp = k.sequence_parallel;
  const bool full = k.tp_overlap == TpOverlap::Full;
  const double qkv = gemm_seconds(d, x.T, x.qkv_n, x.h, 1, e, e);
  const double proj = gemm_seconds(d, x.T, x.h, x.h / x.t, 1, e, e);
  const double mlp1 = gemm_seconds(d, x.T, x.mlp1_n, x.h, 1, e, e);
  const double mlp2 = gemm_seconds(d, x.T, x.h, x.f / x.t, 1, e, e);
  pass.kernel(2 * memory_seconds(d, 2 * e * x.T * x.hr));  // two norms: read, write
  pass.kernel(qkv + proj + mlp1 + mlp2);
  if (tp_comms(k)) {
    if (sp) {  // AllGather before QKV and the first FFN GEMM, ReduceScatter after proj and the second
      pass.collective(CollectiveOp::AllGather, full, qkv);
      pass.collective(CollectiveOp::ReduceScatter, full, proj);
      pass.collective(CollectiveOp::AllGather, full, mlp1);
      pass.collective(CollectiveOp::ReduceScatter, full, mlp2);
    } else {  // AllReduce after proj and the second FFN GEMM
      pass.collective(CollectiveOp::AllReduce, full, proj);
      pass.collective(CollectiveOp::AllReduce, full, mlp2);
    }
  }
  if (k.fused_attention) {
    // Causal flash attention: QK^T and x V over half the score matrix.
    pass.kernel(2.0 * x.b * (x.a / x.t) * x.s * x.s * x.d / (d.peak_flops * d.flash_forward));
  } else {
    pass.kernel(gemm_seconds(d, x.s, x.s, x.d, x.b * x.a / x.t, e, e));  // QK^T
    pass.kernel(gemm_seconds(d, x.s, x.d, x.s, x.b * x.a / x.t, e, e));  // scores x V
    pass.kernel(memory_seconds(d, 2 * e * x.scores));                    // scale-mask-softmax
    pass.kernel(memory_seconds(d, (2 * e + 1) * x.scores));              // dropout (+ mask)
    pass.kernel(memory_seconds(d, 2 * e * x.T * x.h / x.t));             // context permute
  }
  pass.kernel(2 * memory_seconds(d, (3 * e + 1) * x.T * x.hr));  // bias + dropout + residual, twice
  pass.kernel(memory_seconds(d, (k.shape.gated_mlp ? 3 : 2) * e * x.T * x.f / x.t));  // bias + GeLU / SwiGLU
}

// What selective recomputation runs again: the attention core.
double attention_core_forward(const KernelDevice& d, const LayerCostKey& k, const Dims& x) {
  const double e = k.elem;
  return gemm_seconds(d, x.s, x.s, x.d, x.b * x.a / x.t, e, e) +
         gemm_seconds(d, x.s, x.d, x.s, x.b * x.a / x.t, e, e) + memory_seconds(d, 2 * e * x.scores) +
         memory_seconds(d, (2 * e + 1) * x.scores);
}

double block_params_local(const LayerCostKey& k, const Dims& x) {
  const TransformerShape& sh = k.shape;
  const double weights = 2 * x.h * x.h + 2 * x.h * x.kv + (sh.gated_mlp ? 3 : 2) * x.h * x.f;
  const double sharded = weights + (sh.biases ? x.h + 2 * x.kv + x.f * (sh.gated_mlp ? 2 : 1) : 0);
  const double replicated = (sh.biases ? 4 * x.h : 2 * x.h) + (sh.biases ? 2 * x.h : 0);
  return sharded / x.t + replicated;
}

void block_backward(const KernelDevice& d, const LayerCostKey& k, const Dims& x, Pass& pass) {
  const double e = k.elem;
  const bool sp = k.sequence_parallel;
  const TpOverlap ov = k.tp_overlap;
  const double wgrad_out = k.grad_accum_fusion ? 8 : e;  // fp32 accumulate (read + write) or a fresh gradient
  pass.kernel(4 * memory_seconds(d, 3 * e * x.T * x.hr));        // two norm backwards, two residual adds
  pass.kernel(2 * memory_seconds(d, (3 * e + 1) * x.T * x.hr));  // dropout + add backward, twice
  pass.kernel(memory_seconds(d, (k.shape.gated_mlp ? 5 : 4) * e * x.T * x.f / x.t));  // activation backward
  if (k.shape.biases) pass.kernel(memory_seconds(d, e * x.T * x.qkv_n));              // QKV bias gradient
  // Input-gradient (dgrad) and weight-gradient (wgrad) GEMMs: QKV, proj, FFN1, FFN2.
  const double in_n[4] = {x.h, x.h / x.t, x.h, x.f / x.t};  // dgrad output columns
  const double out_n[4] = {x.qkv_n, x.h, x.mlp1_n, x.h};    // forward output columns
  for (int i = 0; i < 4; ++i) {
    const double dgrad = gemm_seconds(d, x.T, in_n[i], out_n[i], 1, e, e);
    const double wgrad = gemm_seconds(d, in_n[i], out_n[i], x.T, 1, e, wgrad_out);
    pass.kernel(dgrad + wgrad);
    if (!tp_comms(k)) continue;
    const bool column = i == 0 || i == 2;  // QKV and FFN1 split their outputs over TP ranks
    if (column) {
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
  if (!k.grad_accum_fusion)  // add this microbatch's gradients: read both, write the sum
    pass.kernel(memory_seconds(d, 3 * k.grad_elem * block_params_local(k, x)));
  if (k.fused_attention) {
    pass.kernel(2.5 * 2.0 * x.b * (x.a / x.t) * x.s * x.s * x.d / (d.peak_flops * d.flash_backward));
  } else {
    pass.kernel(gemm_seconds(d, x.s, x.s, x.d, x.b * x.a / x.t, e, e));
    pass.kernel(3 * gemm_seconds(d, x.s, x.d, x.s, x.b * x.a / x.t, e, e));
    pass.kernel(memory_seconds(d, (2 * e + 1) * x.scores));   // dropout backward
    pass.kernel(memory_seconds(d, 3 * e * x.scores));         // softmax backward
    pass.kernel(memory_seconds(d, 2 * e * x.T * x.h / x.t));  // context permute
  }
}

LayerCost block_cost(const KernelDevice& d, const LayerCostKey& k) {
  const Dims x = dims_of(k);
  LayerCost c;
  c.tp_bytes = x.T * x.h * k.elem;
  Pass fwd(d, k, c.tp_bytes), bwd(d, k, c.tp_bytes);
  block_forward(d, k, x, fwd);
  block_backward(d, k, x, bwd);
  if (k.recompute == Recompute::Full)
    bwd.add(fwd.cost());
  else if (k.recompute == Recompute::Selective && !k.fused_attention)
    bwd.kernel(attention_core_forward(d, k, x));
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
  fwd.kernel(memory_seconds(d, 3 * e * x.T * x.hr));        // + position embedding
  fwd.kernel(memory_seconds(d, (2 * e + 1) * x.T * x.hr));  // dropout
  if (tp_comms(k)) fwd.exposed(k.sequence_parallel ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce);
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
  if (tp_comms(k) && k.sequence_parallel)
    fwd.collective(CollectiveOp::AllGather, k.tp_overlap == TpOverlap::Full, 0);
  const double logits = gemm_seconds(d, x.T, Vt, x.h, 1, e, e);
  fwd.kernel(logits);
  // Vocab-parallel cross entropy: logits to fp32, max, exp-sum, loss and the saved softmax.
  fwd.kernel(memory_seconds(d, 38 * x.T * Vt));
  if (k.shape.pooler) fwd.kernel(gemm_seconds(d, x.T, x.h, x.h, 1, e, e));  // BERT MLM transform
  bwd.kernel(memory_seconds(d, 22 * x.T * Vt));                             // cross-entropy backward
  bwd.kernel(gemm_seconds(d, x.T, x.h, Vt, 1, e, e));
  const double wgrad = gemm_seconds(d, Vt, x.h, x.T, 1, e, k.grad_accum_fusion ? 8 : e);
  bwd.kernel(wgrad);
  if (tp_comms(k))
    bwd.collective(k.sequence_parallel ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce,
                   k.tp_overlap != TpOverlap::None, wgrad);
  bwd.kernel(memory_seconds(d, 6 * e * x.hr * x.T));  // final norm backward
  if (k.shape.pooler) bwd.kernel(2 * gemm_seconds(d, x.T, x.h, x.h, 1, e, e));
  if (!k.grad_accum_fusion) bwd.kernel(memory_seconds(d, 3 * k.grad_elem * Vt * x.h));
  c.forward = fwd.cost();
  c.backward = bwd.cost();
  return c;
}

}  // namespace

LayerCostKey layer_cost_key(const Workload& w, const Strategy& s) {
  LayerCostKey k;
  if (w.model.transformer) k.shape = *w.model.transformer;
  k.device = kernel_device(w);
  k.elem = w.bytes_per_element;
  k.grad_elem = w.grad_bytes_per_element;
  k.microbatch = microbatch_size(s, w);
  k.tp = s.tp;
  k.sequence_parallel = s.sequence_parallel && s.tp > 1;
  k.recompute = s.recompute;
  k.tp_overlap = s.tp_overlap;
  k.fused_attention = w.fused_attention;
  k.grad_accum_fusion = s.grad_accum_fusion;
  return k;
}

TransformerCosts transformer_costs(const LayerCostKey& key) {
  return {block_cost(key.device, key), embedding_cost(key.device, key), head_cost(key.device, key)};
}

const LayerCost* cost_of_layer(const TransformerCosts& costs, const Layer& l) {
  if (l.kind == LayerKind::TransformerBlock) return &costs.block;
  if (l.kind == LayerKind::Embedding) return &costs.embedding;
  if (l.kind == LayerKind::Head) return &costs.head;
  return nullptr;
}

double recomputed_forward_flops(const Workload& w, const Strategy& s, const Layer& l) {
  const Model& m = w.model;
  if (s.recompute == Recompute::Full && (!m.transformer || l.kind == LayerKind::TransformerBlock))
    return l.forward_flops;
  if (s.recompute == Recompute::Selective && l.kind == LayerKind::TransformerBlock && !w.fused_attention)
    return 4.0 * m.transformer->seq_len * double(m.transformer->seq_len) * m.transformer->hidden;
  return 0;
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
