// Quantizing the fp8 GEMMs' operands (fp8_quantize.hpp, model.fp8_recipe) against hand-worked
// byte counts: the three recipes, an operand gathered in fp8, the recipes' difference in a whole
// block, the router and the output layer left in bf16, and an fp8 MoE dispatch that quantizes the
// experts' input before it is copied top_k times.
#include "toposweep/workload/fp8_quantize.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/layer_cost.hpp"
#include "toposweep/workload/model_library.hpp"
#include "toposweep/workload/spec.hpp"
#include "workload_test_helpers.hpp"

namespace toposweep {
namespace {

TEST(Fp8Quantize, BytesPerElementByRecipe) {
  const double E = 1 << 20;
  // Delayed: read 2, write the row-wise and the column-wise copy (1 each).
  EXPECT_DOUBLE_EQ(fp8_quantize_bytes(E, 1, Fp8Recipe::Delayed), 4 * E);
  // Tensorwise: an amax kernel reads the tensor first (2 more).
  EXPECT_DOUBLE_EQ(fp8_quantize_bytes(E, 1, Fp8Recipe::Tensorwise), 6 * E);
  // Blockwise: one pass, an fp32 scale per 128 values of each copy.
  EXPECT_DOUBLE_EQ(fp8_quantize_bytes(E, 1, Fp8Recipe::Blockwise), (4 + 2 * 4.0 / 128) * E);
  // Gathered over 4 ranks: each quantizes its quarter row-wise only.
  EXPECT_DOUBLE_EQ(fp8_quantize_bytes(E, 4, Fp8Recipe::Delayed), 3 * E / 4);
  EXPECT_DOUBLE_EQ(fp8_quantize_bytes(E, 4, Fp8Recipe::Tensorwise), 5 * E / 4);
  EXPECT_DOUBLE_EQ(fp8_quantize_bytes(E, 4, Fp8Recipe::Blockwise), (3 + 4.0 / 128) * E / 4);
  EXPECT_DOUBLE_EQ(fp8_transpose_bytes(E), 2 * E);
  // An operand whose writer took the amax (a norm fused into the GEMM's module): current scaling
  // reads it once, as delayed scaling does; the other recipes are unchanged.
  EXPECT_DOUBLE_EQ(fp8_quantize_bytes(E, 1, Fp8Recipe::Tensorwise, true), 4 * E);
  EXPECT_DOUBLE_EQ(fp8_quantize_bytes(E, 4, Fp8Recipe::Tensorwise, true), 3 * E / 4);
  EXPECT_DOUBLE_EQ(fp8_quantize_bytes(E, 1, Fp8Recipe::Delayed, true), 4 * E);
  EXPECT_DOUBLE_EQ(fp8_quantize_bytes(E, 1, Fp8Recipe::Blockwise, true), (4 + 2 * 4.0 / 128) * E);
}

TEST(Fp8Quantize, RecipeKeyIsReadAndErrorsNameIt) {
  EXPECT_EQ(workload_spec_from_config(test::workload_config({})).fp8_recipe, Fp8Recipe::Delayed);
  for (const auto& [name, r] :
       std::vector<std::pair<std::string, Fp8Recipe>>{{"delayed", Fp8Recipe::Delayed},
                                                      {"tensorwise", Fp8Recipe::Tensorwise},
                                                      {"blockwise", Fp8Recipe::Blockwise}})
    EXPECT_EQ(workload_spec_from_config(test::workload_config({"model.fp8_recipe=" + name})).fp8_recipe, r);
  EXPECT_THROW(test::workload_config({"model.fp8_recipe=mxfp8"}), BadInput);
}

// GPT-3 1.3B (h 2048, s 2048) on one H100 without a kernel floor, so every kernel's time is its
// bytes over the memory bandwidth: the block's forward quantizes the inputs of QKV (s h), the
// attention output (s h), FFN in (s h) and FFN out (4 s h), 7 s h elements; its backward the
// output gradients of the same GEMMs (3 s h + s h + 4 s h + s h = 9 s h). Tensorwise moves 2
// bytes per element more than delayed, blockwise 2 x 4 / 128; except on the inputs of QKV and FFN
// in (2 s h), the norms' outputs inside Transformer Engine's LayerNormLinear. There the norm
// kernel takes the amax for tensorwise (a 4-byte cast after the norm's 2-byte write: 6), and with
// delayed scaling writes fp8 itself (1 byte) and a transpose makes the column-wise copy (2): 3.
// Blockwise casts them as any other (4 + 2 x 4 / 128 after a 2-byte write). So on those
// elements tensorwise moves 3 bytes more than delayed, blockwise 3 + 2 x 4 / 128.
TEST(Fp8Quantize, RecipesDifferByTheirBytesInAWholeBlock) {
  const double s = 2048, h = 2048;
  auto block = [&](Fp8Recipe recipe, const std::string& datatype) {
    Workload w = make_workload(builtin_model("gpt3-1.3b"), builtin_device("h100"), datatype, 1);
    w.fp8_recipe = recipe;
    LayerCostKey k = layer_cost_key(w, Strategy{});
    k.device.kernel_floor_s = 0;
    return std::pair{transformer_costs(k).block, k.device.memory_Bps};
  };
  const auto [delayed, Bps] = block(Fp8Recipe::Delayed, "fp8");
  const LayerCost tensorwise = block(Fp8Recipe::Tensorwise, "fp8").first;
  const LayerCost blockwise = block(Fp8Recipe::Blockwise, "fp8").first;
  const double fwd = 7 * s * h, bwd = 9 * s * h, norm_fed = 2 * s * h;
  EXPECT_NEAR(tensorwise.forward.compute_s - delayed.forward.compute_s,
              (2 * (fwd - norm_fed) + 3 * norm_fed) / Bps, 1e-15);
  EXPECT_NEAR(tensorwise.backward.compute_s - delayed.backward.compute_s, 2 * bwd / Bps, 1e-15);
  EXPECT_NEAR(blockwise.forward.compute_s - delayed.forward.compute_s,
              (2 * 4.0 / 128 * fwd + 3 * norm_fed) / Bps, 1e-15);
  EXPECT_NEAR(blockwise.backward.compute_s - delayed.backward.compute_s, 2 * 4.0 / 128 * bwd / Bps, 1e-15);
  // The recipe means nothing without fp8 operands.
  EXPECT_EQ(block(Fp8Recipe::Tensorwise, "bf16").first, block(Fp8Recipe::Delayed, "bf16").first);
}

// Mixtral 8x7B (h 4096, top-2) on 2 expert-parallel ranks, one sequence of 4096 tokens: each rank's
// experts receive k s h = 2 x 4096 x 4096 input elements. With a bf16 dispatch they quantize them
// (4 bytes each, delayed); with an fp8 dispatch the tokens are quantized row-wise before the
// dispatch (3 bytes on s h elements) and the received copies are transposed for the weight
// gradient (2 bytes each, backward). The router and the output layer run in bf16 either way.
TEST(Fp8Quantize, Fp8DispatchQuantizesTheExpertsInputBeforeItIsCopied) {
  const double s = 4096, h = 4096, k = 2;
  auto costs = [&](const std::string& dispatch) {
    std::vector<std::string> sets = {"model.name=mixtral-8x7b", "model.datatype=fp8", "server.device=h100",
                                     "model.seq_len=4096", "model.global_batch=2"};
    if (!dispatch.empty()) sets.push_back("model.moe_dispatch_datatype=" + dispatch);
    const Workload w = make_workload(workload_spec_from_config(test::workload_config(sets)), 2);
    Strategy st;
    st.dp = 2;
    st.ep = 2;
    LayerCostKey key = layer_cost_key(w, st);
    key.device.kernel_floor_s = 0;
    return std::pair{key, transformer_costs(key)};
  };
  const auto [k16, c16] = costs("");
  const auto [k8, c8] = costs("fp8");
  EXPECT_FALSE(k16.fp8_dispatch);
  EXPECT_TRUE(k8.fp8_dispatch);
  const double Bps = k8.device.memory_Bps, received = k * s * h;
  EXPECT_NEAR(c16.moe_block.forward.compute_s - c8.moe_block.forward.compute_s,
              (4 * received - 3 * s * h) / Bps, 1e-15);
  EXPECT_NEAR(c8.moe_block.backward.compute_s - c16.moe_block.backward.compute_s, 2 * received / Bps, 1e-15);
  // The dense blocks and the head do not dispatch.
  EXPECT_EQ(c8.block, c16.block);
  EXPECT_EQ(c8.head, c16.head);
  // Without expert parallelism nothing is dispatched.
  Strategy one;
  const Workload w = make_workload(workload_spec_from_config(test::workload_config(
                                       {"model.name=mixtral-8x7b", "model.datatype=fp8", "server.device=h100",
                                        "model.moe_dispatch_datatype=fp8"})),
                                   1);
  EXPECT_FALSE(layer_cost_key(w, one).fp8_dispatch);
}

// The MoE router is a torch GEMM in Megatron-Core, not a Transformer Engine module: with fp8 it
// keeps its bf16 operands and is not quantized. Mixtral 8x7B's MoE block on one H100 (one sequence
// of 4096 tokens), with the fp8 run's GEMM rates set to the bf16 ones and no kernel floor: every
// TE GEMM is compute-bound at either operand size, so the fp8 block's forward is the bf16 one plus
// the quantization of the TE GEMMs' inputs, 4 bytes each (delayed): the attention output's (s h),
// expert_in's (k s h) and expert_out's (k s f); QKV's input (s h) the attention norm writes in
// fp8 itself (1 byte instead of 2) and a transpose copies (2): 1 byte net. The router's input
// (s h), memory-bound, would make it 2 s h / Bps faster at 1 byte.
TEST(Fp8Quantize, TheRouterStaysInBf16) {
  const double s = 4096, h = 4096, k = 2, f = 14336;
  auto key = [](const std::string& datatype) {
    LayerCostKey key = layer_cost_key(
        make_workload(builtin_model("mixtral-8x7b"), builtin_device("h100"), datatype, 1), Strategy{});
    key.device.kernel_floor_s = 0;
    return key;
  };
  const LayerCostKey k16 = key("bf16");
  LayerCostKey k8 = key("fp8");
  k8.device.weight_gemm_peak_flops = k16.device.weight_gemm_peak_flops;
  k8.device.weight_gemm_efficiency = k16.device.weight_gemm_efficiency;
  k8.device.expert_gemm_efficiency = k16.device.expert_gemm_efficiency;
  const double quantize = (1 * s * h + 4 * (s * h + k * s * h + k * s * f)) / k8.device.memory_Bps;
  EXPECT_NEAR(transformer_costs(k8).moe_block.forward.compute_s,
              transformer_costs(k16).moe_block.forward.compute_s + quantize, 1e-12);
}

}  // namespace
}  // namespace toposweep

namespace toposweep {
namespace {

// The GEMMs whose input a norm inside their Transformer Engine module writes (Megatron-Core's
// TELayerNormColumnParallelLinear): a dense block's QKV and FFN in; in a MoE block only QKV (its
// pre-MLP norm is a separate TENorm); in multi-head latent attention the up projections (their
// latent norms), not the down projections (the input norm is a separate TENorm).
std::vector<std::string> norm_fed(const Model& m, bool moe) {
  std::vector<std::string> out;
  for (const Layer& l : m.layers)
    if (l.kind == LayerKind::TransformerBlock && l.moe == moe) {
      for (const BlockOp& op : describe_block(*m.transformer, l))
        if (op.norm_fused_input) out.emplace_back(op.name);
      break;
    }
  return out;
}

TEST(Fp8Quantize, NormFedGemmInputsAreThoseOfTheLayerNormLinearModules) {
  EXPECT_EQ(norm_fed(builtin_model("llama3-8b"), false), (std::vector<std::string>{"qkv", "ffn_in"}));
  EXPECT_EQ(norm_fed(builtin_model("mixtral-8x7b"), true), (std::vector<std::string>{"qkv"}));
  EXPECT_EQ(norm_fed(builtin_model("deepseek-v3"), true), (std::vector<std::string>{"q_up", "kv_up"}));
  EXPECT_EQ(norm_fed(builtin_model("deepseek-v3"), false),
            (std::vector<std::string>{"q_up", "kv_up", "ffn_in"}));
}

}  // namespace
}  // namespace toposweep
