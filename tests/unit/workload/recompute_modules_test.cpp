// Selective recomputation by module (strategy.recompute_modules, Megatron-Core's
// --recompute-modules) and the optimizer's bf16 moments, against sizes worked out by hand from
// the layers' shapes, not from the block table.
//
// The small dense block (hidden h = 256, a = 4 heads of 64, GeLU FFN f = 4h = 1024, sequence
// s = 128, rotary positions, no biases, bf16: 2 bytes an element) keeps per sample, by Korthikanti
// et al. 2022 Table 2 at t = 1, s h (34 + 5 a s / h) bytes:
//   norms 2 x 2sh; QKV input 2sh; Q, K 4sh; softmax output 2as^2; dropout output and mask 3as^2;
//   V 2sh; attention output input 2sh; residual masks 2 x sh; FFN input 2sh; GeLU input 2sf = 8sh;
//   FFN out input 2sf = 8sh.
// Recomputed modules drop:
//   core_attn  the s x s tensors: 5 a s^2 bytes            (today's selective recomputation)
//   layernorm  the two norms' outputs (QKV's and FFN in's inputs): 2 x 2sh = 4 s h bytes
//   mlp        the GeLU's input and FFN out's input: 2 x 2sf = 4 s f bytes
// and run again in the backward pass: core_attn 4 s^2 h FLOPs, mlp its two GEMMs 2 x 2 s h f,
// layernorm no GEMM (the two norm kernels, 2 x 2 e s h bytes of traffic each).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "toposweep/workload/enumerate.hpp"
#include "toposweep/workload/layer_cost.hpp"
#include "toposweep/workload/memory.hpp"
#include "toposweep/workload/model_library.hpp"
#include "toposweep/workload/spec.hpp"
#include "toposweep/workload/strategy_knobs.hpp"
#include "workload_test_helpers.hpp"

namespace toposweep {
namespace {

constexpr double kS = 128, kH = 256, kA = 4, kF = 1024;

Model small_gpt() {
  const nlohmann::json t = {{"layers", 2},        {"hidden", 256},           {"heads", 4},
                            {"ffn_hidden", 1024}, {"seq_len", 128},          {"vocab", 1000},
                            {"mlp", "gelu"},      {"norm", "rmsnorm"},       {"position", "rotary"},
                            {"biases", false},    {"tied_embeddings", false}};
  return model_from_json({{"name", "small"}, {"transformer", t}}, "small");
}

const Layer& block_of(const Model& m, bool moe = false) {
  for (const Layer& l : m.layers)
    if (l.kind == LayerKind::TransformerBlock && l.moe == moe) return l;
  throw std::logic_error("no such block");
}

Workload bf16(Model m) {
  return make_workload(std::move(m), builtin_device("h100"), "bf16", 1);  // unfused attention
}

Strategy selective(RecomputeModules modules) {
  Strategy s;
  s.recompute = Recompute::Selective;
  s.recompute_modules = modules;
  return s;
}

double kept(const Workload& w, const Layer& l, RecomputeModules modules) {
  return layer_activations(w, l, ActivationSplit{}, 1, modules).selective;
}

TEST(RecomputeModules, KeptBytesOfASmallBlockByModule) {
  const Workload w = bf16(small_gpt());
  const Layer& b = block_of(w.model);
  const double none = kS * kH * 34 + 5 * kA * kS * kS;  // 1,441,792 bytes
  const LayerActivations a = layer_activations(w, b, ActivationSplit{});
  EXPECT_DOUBLE_EQ(a.none, none);
  // core_attn (the default): today's selective recomputation, 34 s h.
  EXPECT_DOUBLE_EQ(a.selective, kS * kH * 34);
  EXPECT_DOUBLE_EQ(kept(w, b, RecomputeModules::CoreAttn), 1114112.0);
  // Without core_attn the s x s tensors stay.
  EXPECT_DOUBLE_EQ(kept(w, b, RecomputeModules::Layernorm), none - 4 * kS * kH);  // 1,310,720
  EXPECT_DOUBLE_EQ(kept(w, b, RecomputeModules::Layernorm), 1310720.0);
  EXPECT_DOUBLE_EQ(kept(w, b, RecomputeModules::Mlp), none - 4 * kS * kF);  // 917,504
  EXPECT_DOUBLE_EQ(kept(w, b, RecomputeModules::Mlp), 917504.0);
  const RecomputeModules all =
      RecomputeModules::CoreAttn | RecomputeModules::Layernorm | RecomputeModules::Mlp;
  EXPECT_DOUBLE_EQ(kept(w, b, all), 458752.0);  // 34 sh - 4 sh - 4 sf
  // MLA and MoE modules have nothing to drop in a dense multi-head block.
  EXPECT_DOUBLE_EQ(kept(w, b, RecomputeModules::MlaUpProj | RecomputeModules::MoeAct), none);
  // Full recomputation and none are not the list's business.
  EXPECT_DOUBLE_EQ(layer_activations(w, b, ActivationSplit{}, 1, all).none, none);
  EXPECT_DOUBLE_EQ(layer_activations(w, b, ActivationSplit{}, 1, all).full, a.full);
}

TEST(RecomputeModules, RecomputedFlopsOfASmallBlockByModule) {
  const Workload w = bf16(small_gpt());
  const Layer& b = block_of(w.model);
  EXPECT_EQ(recomputed_forward_flops(w, selective(RecomputeModules::CoreAttn), b), 4 * kS * kS * kH);
  EXPECT_EQ(recomputed_forward_flops(w, selective(RecomputeModules::CoreAttn), b), 16777216.0);
  EXPECT_EQ(recomputed_forward_flops(w, selective(RecomputeModules::Layernorm), b), 0.0);
  EXPECT_EQ(recomputed_forward_flops(w, selective(RecomputeModules::Mlp), b), 134217728.0);  // 4 s h f
  EXPECT_EQ(recomputed_forward_flops(w, selective(RecomputeModules::CoreAttn | RecomputeModules::Mlp), b),
            16777216.0 + 134217728.0);
  // Only with selective recomputation.
  Strategy none = selective(RecomputeModules::Mlp);
  none.recompute = Recompute::None;
  EXPECT_EQ(recomputed_forward_flops(w, none, b), 0.0);
}

TEST(RecomputeModules, BackwardRunsTheModulesForwardKernelsAgain) {
  const Workload w = bf16(small_gpt());
  Strategy off;
  const LayerCostKey base = layer_cost_key(w, off);
  const KernelDevice& d = base.device;
  const double T = kS, e = 2;  // a microbatch of one sequence
  const double b0 = transformer_costs(base).block.backward.compute_s;
  auto backward = [&](RecomputeModules m) {
    return transformer_costs(layer_cost_key(w, selective(m))).block.backward.compute_s;
  };
  // mlp: FFN in (T x f x h), the GeLU (read and write e T f), FFN out (T x h x f).
  const double mlp = gemm_seconds(d, T, kF, kH, 1, e, e) + memory_seconds(d, 2 * e * T * kF) +
                     gemm_seconds(d, T, kH, kF, 1, e, e);
  EXPECT_NEAR(backward(RecomputeModules::Mlp) - b0, mlp, 1e-9 * b0);
  // layernorm: the two norm kernels (read and write e T h each).
  EXPECT_NEAR(backward(RecomputeModules::Layernorm) - b0, 2 * memory_seconds(d, 2 * e * T * kH), 1e-9 * b0);
  // The forward pass is untouched.
  EXPECT_EQ(transformer_costs(layer_cost_key(w, selective(RecomputeModules::Mlp))).block.forward,
            transformer_costs(base).block.forward);
}

TEST(RecomputeModules, CoreAttnFromTheKeyIsTodaysSelectiveBitForBit) {
  const Config plain = test::workload_config({"model.name=gpt3-1.3b", "strategy.recompute=selective"});
  const Config listed = test::workload_config(
      {"model.name=gpt3-1.3b", "strategy.recompute=selective", "strategy.recompute_modules=core_attn"});
  const Workload w = workload_from_config(plain, 8);
  const Strategy a = strategy_from_config(plain, w, 8), b = strategy_from_config(listed, w, 8);
  EXPECT_EQ(a.recompute_modules, RecomputeModules::CoreAttn);
  EXPECT_EQ(a, b);
  EXPECT_EQ(memory_per_gpu(w, a).activations, memory_per_gpu(w, b).activations);
  // The strategy JSON writes the list only when it is not the default.
  EXPECT_FALSE(strategy_to_json(a).contains("recompute_modules"));
  const Config two = test::workload_config(
      {"model.name=gpt3-1.3b", "strategy.recompute=selective", "strategy.recompute_modules= mlp ,layernorm"});
  const Strategy c = strategy_from_config(two, w, 8);
  EXPECT_EQ(c.recompute_modules, RecomputeModules::Layernorm | RecomputeModules::Mlp);
  EXPECT_EQ(strategy_to_json(c)["recompute_modules"], "layernorm,mlp");
  EXPECT_THROW(test::workload_config({"strategy.recompute_modules=attention"}), BadInput);
  EXPECT_THROW(test::workload_config({"strategy.recompute_modules=moe"}), BadInput);  // not modelled
}

// The strategy search does not vary the list: every strategy it visits recomputes the space's
// modules (optimize reads them from strategy.recompute_modules), and its memory check counts them.
TEST(RecomputeModules, TheStrategySearchKeepsTheConfiguredModules) {
  const Workload w = make_workload(builtin_model("gpt3-1.3b"), builtin_device("a100"), "fp16", 64);
  StrategySpace space;
  space.set(&StrategyKnobs::recompute, {Recompute::Selective});
  StrategySpace listed = space;
  const RecomputeModules more =
      RecomputeModules::CoreAttn | RecomputeModules::Layernorm | RecomputeModules::Mlp;
  listed.set(&StrategyKnobs::recompute_modules, {more});
  std::vector<double> plain, fewer;
  for_each_strategy(w, 32, space, [&](const Strategy& s, double memory, bool) {
    EXPECT_EQ(s.recompute_modules, RecomputeModules::CoreAttn);
    plain.push_back(memory);
  });
  for_each_strategy(w, 32, listed, [&](const Strategy& s, double memory, bool) {
    EXPECT_EQ(s.recompute_modules, more);
    fewer.push_back(memory);
  });
  ASSERT_EQ(plain.size(), fewer.size());
  ASSERT_FALSE(plain.empty());
  for (std::size_t i = 0; i < plain.size(); ++i) EXPECT_LT(fewer[i], plain[i]) << i;
}

// DeepSeek-V3 (h 7168, 128 heads, MLA latents r_q 1536 / r_kv 512, head dims d_n 128 + d_r 64 /
// d_v 128, 8 of 256 experts of f = 2048, s = 4096) in bf16:
//   mla_up_proj drops Q and K (2 s H (d_n + d_r) = 201,326,592 elements) and V (s H d_v =
//     67,108,864): 268,435,456 elements, 536,870,912 bytes, and reruns the up projections:
//     2 s (r_q H (d_n + d_r) + r_kv H (d_n + d_v)) = 2 x 4096 x 54,525,952 = 446,676,598,784 FLOPs;
//   moe_act drops expert_out's input (k s f = 67,108,864 elements, 134,217,728 bytes), no GEMM;
//   model.moe_activation_datatype = fp8 keeps the experts' k s h + 2 k s f + k s f = 436,207,616
//     elements at 1 + 4/128 bytes instead of 2: 0.96875 x 436,207,616 = 422,576,128 bytes fewer.
TEST(RecomputeModules, DeepSeekV3MlaUpProjectionAndMoeActivation) {
  const Workload w = bf16(builtin_model("deepseek-v3"));
  const Layer &dense = block_of(w.model), &moe = block_of(w.model, true);
  const double none_dense = layer_activations(w, dense, ActivationSplit{}).none;
  const double none_moe = layer_activations(w, moe, ActivationSplit{}).none;
  EXPECT_DOUBLE_EQ(none_dense - kept(w, dense, RecomputeModules::MlaUpProj), 536870912.0);
  EXPECT_DOUBLE_EQ(none_moe - kept(w, moe, RecomputeModules::MlaUpProj), 536870912.0);
  EXPECT_DOUBLE_EQ(none_moe - kept(w, moe, RecomputeModules::MoeAct), 134217728.0);
  EXPECT_DOUBLE_EQ(none_dense - kept(w, dense, RecomputeModules::MoeAct), 0.0);
  EXPECT_EQ(recomputed_forward_flops(w, selective(RecomputeModules::MlaUpProj), moe), 446676598784.0);
  EXPECT_EQ(recomputed_forward_flops(w, selective(RecomputeModules::MoeAct), moe), 0.0);

  WorkloadSpec spec = workload_spec_from_config(
      test::workload_config({"model.name=deepseek-v3", "model.datatype=bf16",
                             "model.moe_activation_datatype=fp8", "model.fused_attention=false"}));
  const Workload w8 = make_workload(spec, 8);
  EXPECT_DOUBLE_EQ(none_moe - layer_activations(w8, moe, ActivationSplit{}).none, 422576128.0);
  EXPECT_DOUBLE_EQ(none_dense - layer_activations(w8, dense, ActivationSplit{}).none, 0.0);
}

// model.moe_probs_in_activation (Megatron-Core >= v0.13: the router probabilities multiply the
// experts' activation output): the unpermutation of a DeepSeek-V3 MoE layer (k = 8, s = 4,096,
// h = 7,168, bf16) keeps its k s probabilities instead of the k s h expert outputs:
// (8 x 4,096 x 7,168 - 8 x 4,096) x 2 = 469,696,512 bytes less per sample, with or without
// recomputation by module, and nothing on a dense layer or under full recomputation.
TEST(RecomputeModules, ProbabilitiesInTheActivationDropTheExpertOutputs) {
  auto workload = [](const char* on) {
    return make_workload(workload_spec_from_config(test::workload_config(
                             {"model.name=deepseek-v3", "model.datatype=bf16", "model.fused_attention=false",
                              std::string("model.moe_probs_in_activation=") + on})),
                         8);
  };
  const Workload off = workload("false"), on = workload("true");
  const Layer &dense = block_of(off.model), &moe = block_of(off.model, true);
  const LayerActivations a = layer_activations(off, moe, ActivationSplit{}, 1, RecomputeModules::MlaUpProj);
  const LayerActivations b = layer_activations(on, moe, ActivationSplit{}, 1, RecomputeModules::MlaUpProj);
  EXPECT_DOUBLE_EQ(a.none - b.none, 469696512.0);
  EXPECT_DOUBLE_EQ(a.selective - b.selective, 469696512.0);
  EXPECT_DOUBLE_EQ(a.full - b.full, 0.0);
  EXPECT_DOUBLE_EQ(layer_activations(off, dense, ActivationSplit{}).none -
                       layer_activations(on, dense, ActivationSplit{}).none,
                   0.0);
}

// Mixed-precision Adam keeps an fp32 master copy (4 bytes) and two moments: fp32 4 + 4 (12 in
// all), bf16 2 + 2 (8 in all; DeepSeek-V3 Sec. 3.3.2). Its step moves 5 g + 2 K + 4 + B bytes
// (workload.hpp) with bf16 gradients g = 2 and weights B = 2: 10 + 24 + 6 = 40, or 10 + 16 + 6 = 32.
TEST(RecomputeModules, Bf16OptimizerMoments) {
  const Workload fp32 = workload_from_config(test::workload_config({"model.datatype=bf16"}), 8);
  const Workload half =
      workload_from_config(test::workload_config({"model.datatype=bf16", "model.optimizer_moments=bf16"}), 8);
  EXPECT_EQ(fp32.optimizer_bytes_per_param(), 12.0);
  EXPECT_EQ(half.optimizer_bytes_per_param(), 8.0);
  EXPECT_EQ(fp32.optimizer_step_bytes_per_param(), 40.0);
  EXPECT_EQ(half.optimizer_step_bytes_per_param(), 32.0);
  // Momentum SGD: one moment; fp32 training has no master copy.
  const Workload momentum =
      workload_from_config(test::workload_config({"model.datatype=fp32", "model.optimizer=momentum",
                                                  "model.optimizer_moments=bf16"}),
                           8);
  EXPECT_EQ(momentum.optimizer_bytes_per_param(), 2.0);
  EXPECT_THROW(test::workload_config({"model.optimizer_moments=fp8"}), BadInput);
}

}  // namespace
}  // namespace toposweep
