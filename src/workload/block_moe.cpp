// The block's Mixture-of-Experts layer in place of the MLP, as Megatron-Core's MoELayer runs it
// (router, token permutation, dispatch, grouped expert GEMMs, combine, unpermutation; shared
// experts beside the routed ones). Per sample of s tokens with E experts, top-k routing, expert
// width f and n shared experts:
//   router      s x h x E GEMM, its weight (h x E) replicated over TP ranks;
//   permute     each token copied k times, grouped by expert (memory-bound, k s h elements);
//   expert_gather  the dispatched tokens all-gathered over the expert tensor-parallel ranks
//               (k s h elements, Megatron-Core's token dispatcher after its All-to-All; with
//               etp = 1 nothing: whole experts need only the rank's own tokens);
//   expert_in   E grouped GEMMs of (k s / E) x h x (2 f with SwiGLU), column-parallel over the
//               expert tensor-parallel ranks (ParallelAxis::Expert: etp, tp unless folded);
//   activation  on k s x f (reads both halves with SwiGLU, as the dense MLP's);
//   expert_out  E grouped GEMMs of (k s / E) x f x h, row-parallel;
//   expert_scatter  their outputs reduce-scattered back over the etp ranks before the combine;
//   shared      one MLP of width n f every token goes through (TP-split like the dense MLP);
//   unpermute   the k expert outputs of each token weighted by its router probabilities and summed.
// With the experts evenly loaded every expert gets k s / E tokens (the FLOPs are then those of the
// active parameters: 2 s (h E + k 3 h f + n 3 h f) for SwiGLU). Kept for backward: the router's
// input (s h, the MLP's input as for the dense MLP), the permuted tokens (k s h, expert_in's
// input), the activation's input (2 k s f) and expert_out's (k s f), the expert outputs (k s h,
// for the probabilities' gradient), the shared MLP's as a dense MLP's.
#include "toposweep/workload/block.hpp"

namespace toposweep {

void describe_moe(const TransformerShape& t, std::vector<BlockOp>& ops) {
  const MoeShape& m = *t.moe;
  const double s = t.seq_len, h = t.hidden, E = m.experts, k = m.top_k, f = m.expert_ffn_hidden;
  const double halves = t.gated_mlp ? 2 : 1;                            // SwiGLU: gate and up
  const Traffic act_fwd = t.gated_mlp ? Traffic{3, 0} : Traffic{2, 0};  // as block_mlp.cpp
  const Traffic act_bwd = t.gated_mlp ? Traffic{5, 0} : Traffic{4, 0};

  BlockOp router{.name = "router", .kind = OpKind::Gemm, .role = OpRole::Router};
  router.M = s;
  router.N = E;
  router.K = h;
  router.axis = ParallelAxis::Sequence;
  router.kept_replicated = s * h;                    // its input, the MLP's input
  router.kept_module = RecomputeModules::Layernorm;  // the MLP norm's output
  router.params_replicated = h * E;
  ops.push_back(router);

  BlockOp permute{.name = "permute", .kind = OpKind::MemoryBound, .role = OpRole::Permute};
  permute.M = k * s;
  permute.N = h;
  permute.axis = ParallelAxis::Sequence;
  permute.forward = {2, 0};   // read a token, write its copy
  permute.backward = {2, 0};  // the copies' gradients summed back
  ops.push_back(permute);

  describe_sublayer_enter("moe_enter", t, ops);
  // The TP collectives at the layer's ends gather the tokens into the tensor-parallel region and
  // reduce them out of it for the shared experts (Megatron-Core's SharedExpertMLP gathers its
  // input over TP); without them the layer's ends gather nothing: the router and the dispatch run
  // on the rank's own (sequence-split) tokens, and the routed experts gather theirs after the
  // dispatch (expert_gather).
  const ParallelAxis ends = m.shared_experts > 0 ? ParallelAxis::Tensor : ParallelAxis::None;
  ops.back().axis = ends;

  if (m.shared_experts > 0) {
    const double fs = m.shared_experts * f;
    BlockOp in{.name = "shared_in", .kind = OpKind::Gemm, .role = OpRole::Projection};
    in.M = s;
    in.N = halves * fs;
    in.K = h;
    in.axis = ParallelAxis::Tensor;
    in.column = true;
    in.params_sharded = h * in.N;
    ops.push_back(in);

    BlockOp act{.name = "shared_activation", .kind = OpKind::MemoryBound, .role = OpRole::Activation};
    act.M = s;
    act.N = fs;
    act.axis = ParallelAxis::Tensor;
    act.forward = act_fwd;
    act.backward = act_bwd;
    act.kept_sharded = halves * s * fs;
    ops.push_back(act);

    BlockOp out{.name = "shared_out", .kind = OpKind::Gemm, .role = OpRole::Projection};
    out.M = s;
    out.N = h;
    out.K = fs;
    out.axis = ParallelAxis::Tensor;
    out.kept_sharded = s * fs;
    out.params_sharded = fs * h;
    ops.push_back(out);
  }

  BlockOp gather{.name = "expert_gather", .kind = OpKind::Collective, .role = OpRole::TpEnter};
  gather.M = k * s;
  gather.N = h;
  gather.axis = ParallelAxis::Expert;
  ops.push_back(gather);

  BlockOp in{.name = "expert_in", .kind = OpKind::Gemm, .role = OpRole::ExpertGemm};
  in.M = k * s / E;  // tokens per expert, evenly loaded
  in.N = halves * f;
  in.K = h;
  in.batch = E;
  in.axis = ParallelAxis::Expert;
  in.column = true;
  in.kept_replicated = k * s * h;  // the permuted tokens
  in.params_expert = E * h * in.N;
  ops.push_back(in);

  BlockOp act{.name = "expert_activation", .kind = OpKind::MemoryBound, .role = OpRole::ExpertActivation};
  act.M = k * s;
  act.N = f;
  act.axis = ParallelAxis::Expert;
  act.forward = act_fwd;
  act.backward = act_bwd;
  act.kept_sharded = halves * k * s * f;
  // Megatron-Core's moe_act recompute module (DeepSeek-V3, arXiv:2412.19437 Sec. 3.3.2: the
  // SwiGLU's input is cached and its output recomputed in the backward pass): the activation
  // runs again, expert_out's kept input (the activation's output) is dropped.
  act.module = RecomputeModules::MoeAct;
  ops.push_back(act);

  BlockOp out{.name = "expert_out", .kind = OpKind::Gemm, .role = OpRole::ExpertGemm};
  out.M = k * s / E;
  out.N = h;
  out.K = f;
  out.batch = E;
  out.axis = ParallelAxis::Expert;
  out.kept_sharded = k * s * f;
  out.kept_module = RecomputeModules::MoeAct;
  out.params_expert = E * f * h;
  ops.push_back(out);

  BlockOp scatter{.name = "expert_scatter", .kind = OpKind::Collective, .role = OpRole::TpExit};
  scatter.M = k * s;
  scatter.N = h;
  scatter.axis = ParallelAxis::Expert;
  ops.push_back(scatter);

  describe_sublayer_exit("moe_exit", "mlp_residual", t, ops);
  ops[ops.size() - 2].axis = ends;  // the exit, before the residual

  // Before the residual: the combine.
  BlockOp unpermute{.name = "unpermute", .kind = OpKind::MemoryBound, .role = OpRole::Unpermute};
  unpermute.M = k * s;
  unpermute.N = h;
  unpermute.axis = ParallelAxis::Sequence;
  unpermute.forward = {2, 0};             // read each copy, accumulate into its token
  unpermute.backward = {2, 0};            // each copy's gradient (and its probability's)
  unpermute.kept_replicated = k * s * h;  // the expert outputs
  ops.insert(ops.end() - 1, unpermute);
}

double dispatch_elements(const TransformerShape& t, ActivationSplit split) {
  return double(t.moe->top_k) * t.seq_len * t.hidden / (double(split.cp) * split.sequence);
}

}  // namespace toposweep
