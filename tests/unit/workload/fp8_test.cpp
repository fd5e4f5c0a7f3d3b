// model.datatype = fp8 (Transformer Engine's recipe, docs/models.md "FP8 training") against
// hand-worked values: the weight GEMMs at the device's fp8 peak x fp8_gemm_efficiency with
// 1-byte operands and bf16 outputs, their operands' quantization (fp8_quantize_test.cpp has the
// recipes), everything else (the output layer's logits, attention, memory-bound kernels, TP / PP
// / DP traffic) as bf16, the GEMM inputs kept for backward at 1 byte, TE's fp8 weight copies, and
// the error for a device without an fp8 peak.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/layer_cost.hpp"
#include "toposweep/workload/memory.hpp"
#include "toposweep/workload/model_library.hpp"
#include "workload_test_helpers.hpp"

namespace toposweep {
namespace {

constexpr double kH100Bf16 = 989.4e12, kH100Fp8 = 1978.9e12;
constexpr double kH100GemmEff = 0.687, kH100Fp8GemmEff = 0.6306;

Workload gpt(const std::string& datatype, const std::string& device = "h100") {
  Workload w = make_workload(builtin_model("gpt3-1.3b"), builtin_device(device), datatype, 16);
  w.fused_attention = false;
  return w;
}

Strategy strategy(std::uint32_t dp, std::uint32_t tp, std::uint32_t pp, std::uint32_t mu, bool sp = false) {
  Strategy s;
  s.dp = dp;
  s.tp = tp;
  s.pp = pp;
  s.microbatches = mu;
  s.sequence_parallel = sp;
  return s;
}

TEST(Fp8, WeightGemmsRunAtTheFp8PeakWithOneByteOperands) {
  const Workload w8 = gpt("fp8"), w16 = gpt("bf16");
  // Everything but the weight GEMMs is bf16.
  EXPECT_DOUBLE_EQ(w8.bytes_per_element, 2);
  EXPECT_DOUBLE_EQ(w8.grad_bytes_per_element, 2);
  EXPECT_DOUBLE_EQ(w8.gemm_bytes_per_element, 1);
  EXPECT_DOUBLE_EQ(w8.peak_flops_per_s, kH100Bf16);
  EXPECT_DOUBLE_EQ(w8.gemm_peak_flops_per_s, kH100Fp8);
  const KernelDevice d8 = kernel_device(w8), d16 = kernel_device(w16);
  EXPECT_DOUBLE_EQ(d8.peak_flops, kH100Bf16);
  EXPECT_DOUBLE_EQ(d8.weight_gemm_peak_flops, kH100Fp8);
  EXPECT_DOUBLE_EQ(d8.weight_gemm_efficiency, kH100Fp8GemmEff);
  EXPECT_DOUBLE_EQ(d16.weight_gemm_peak_flops, kH100Bf16);
  EXPECT_DOUBLE_EQ(d16.weight_gemm_efficiency, kH100GemmEff);

  // A hand-worked GEMM: 8448 x 8192 outputs (8448 = 64 x 132 SMs: whole waves of 1 x 1 tiles),
  // K = 8192. fp8: 2 M N K / (1978.9 TFLOP/s x 0.6306) = 0.909 ms; its 1-byte operands and 2-byte
  // output, 0.28 GB, take 0.15 ms at 1.89 TB/s: compute bound. bf16: 2 M N K / (989.4 x 0.687).
  const double M = 8448, N = 8192, K = 8192, flops = 2 * M * N * K;
  KernelDevice fp8 = d8;
  fp8.peak_flops = d8.weight_gemm_peak_flops;
  fp8.gemm_efficiency = d8.weight_gemm_efficiency;
  EXPECT_DOUBLE_EQ(gemm_seconds(fp8, M, N, K, 1, 1, 2), flops / (kH100Fp8 * kH100Fp8GemmEff));
  EXPECT_DOUBLE_EQ(gemm_seconds(d16, M, N, K, 1, 2, 2), flops / (kH100Bf16 * kH100GemmEff));
  EXPECT_NEAR(gemm_seconds(d16, M, N, K, 1, 2, 2) / gemm_seconds(fp8, M, N, K, 1, 1, 2),
              kH100Fp8 * kH100Fp8GemmEff / (kH100Bf16 * kH100GemmEff), 1e-12);
  // Bandwidth bound (K = 64): 1-byte operands, 2-byte output.
  const double k = 64;
  EXPECT_DOUBLE_EQ(gemm_seconds(fp8, M, N, k, 1, 1, 2),
                   (1 * (M * k + k * N) + 2 * M * N) / (3.35e12 * 0.5653));
}

TEST(Fp8, IdealDeviceSplitsTheBlockIntoFp8ProjectionsAndBf16Attention) {
  // Every tile full, memory free, no floor: the block's forward is its projections' 24 b s h^2 / t
  // FLOPs at the fp8 rate plus the attention core's 4 b s^2 h / t at the bf16 rate; its backward
  // twice each; the head's logits GEMMs (2 b s h V / t each) at the bf16 rate (Megatron-Core's
  // output layer is not a Transformer Engine module).
  const Workload w = gpt("fp8");
  const Strategy s = strategy(2, 4, 1, 2);  // 4 sequences per microbatch
  const LayerCostKey key = test::idealised(layer_cost_key(w, s));
  EXPECT_DOUBLE_EQ(key.elem, 2);
  EXPECT_DOUBLE_EQ(key.gemm_elem, 1);
  const double b = 4, sq = 2048, h = 2048, V = 50257, t = 4;
  const double r8 = kH100Fp8 * kH100Fp8GemmEff, r16 = kH100Bf16 * kH100GemmEff;
  const double proj = b * 24 * sq * h * h / t, core = b * 4 * sq * sq * h / t;
  const TransformerCosts c = transformer_costs(key);
  EXPECT_NEAR(c.block.forward.compute_s, proj / r8 + core / r16, 1e-12);
  EXPECT_NEAR(c.block.backward.compute_s, 2 * (proj / r8 + core / r16), 1e-12);
  // 50257 / 4 logits columns: the forward's and the wgrad's last 1 x 1 tile of each row is a
  // quarter full (dgrad's N is h).
  const double logits = 2 * b * sq * h * V / t, quarter = std::ceil(V / t) / (V / t);
  EXPECT_NEAR(c.head.forward.compute_s, quarter * logits / r16, 1e-12);
  EXPECT_NEAR(c.head.backward.compute_s, (1 + quarter) * logits / r16, 1e-12);
}

TEST(Fp8, EverythingButTheWeightGemmsIsTheBf16Time) {
  // On the real H100: the fp8 block minus its projection GEMMs (forward; dgrad + wgrad backward)
  // and their operands' quantization (model.fp8_recipe = delayed: 4 bytes per element, 3 on the
  // rank's share of an operand gathered in fp8 and a 2-byte transpose of the gathered one; the
  // inputs of QKV and FFN in, which their norms write in fp8 themselves, 1 byte instead of 2 in
  // the norm kernel and a 2-byte transpose, none when gathered),
  // worked apart here shape by shape, is the bf16 block minus its own: attention, norms,
  // dropouts, residuals, activations identical. The embedding (memory-bound only) and the head
  // (the logits in bf16) are identical.
  const Workload w8 = gpt("fp8"), w16 = gpt("bf16");
  for (const bool sp : {false, true}) {
    const Strategy s = strategy(2, 2, 1, 4, sp);  // 2 sequences per microbatch
    const LayerCostKey k8 = layer_cost_key(w8, s), k16 = layer_cost_key(w16, s);
    const TransformerCosts c8 = transformer_costs(k8), c16 = transformer_costs(k16);
    EXPECT_EQ(c8.embedding, c16.embedding);
    EXPECT_EQ(c8.head, c16.head);
    EXPECT_DOUBLE_EQ(c8.block.tp_bytes, c16.block.tp_bytes);
    EXPECT_EQ(c8.block.forward.exposed, c16.block.forward.exposed);
    EXPECT_EQ(c8.block.backward.exposed, c16.block.backward.exposed);
    KernelDevice fp8 = k8.device;
    fp8.peak_flops = fp8.weight_gemm_peak_flops;
    fp8.gemm_efficiency = fp8.weight_gemm_efficiency;
    const KernelDevice& bf16 = k16.device;
    const double T = 2 * 2048, h = 2048, t = 2;
    // QKV, attention output, FFN in, FFN out on one TP rank: (M, N, K, column-parallel).
    const std::vector<std::vector<double>> gemms = {
        {T, 3 * h / t, h, 1}, {T, h, h / t, 0}, {T, 4 * h / t, h, 1}, {T, h, 4 * h / t, 0}};
    double fwd8 = 0, fwd16 = 0, bwd8 = 0, bwd16 = 0, fwd_quantize = 0, bwd_quantize = 0;
    for (const auto& g : gemms) {
      const double input = g[0] * g[2], grad = g[0] * g[1];
      const bool column = g[3] > 0;
      // With SP a column-parallel GEMM's input and a row-parallel GEMM's output gradient are
      // gathered in fp8: each rank quantizes its half row-wise (3 bytes), then transposes the
      // gathered tensor (2) in the backward pass.
      // The column-parallel GEMMs here are QKV and FFN in, whose norms write fp8.
      if (column) {
        if (!sp) fwd_quantize += memory_seconds(fp8, 2 * input);
      } else {
        fwd_quantize += memory_seconds(fp8, 4 * input);
      }
      bwd_quantize += memory_seconds(
          fp8, (sp && !column ? 3 * grad / t + 2 * grad : 4 * grad) + (sp && column ? 2 * input : 0));
      fwd8 += gemm_seconds(fp8, g[0], g[1], g[2], 1, 1, 2);
      fwd16 += gemm_seconds(bf16, g[0], g[1], g[2], 1, 2, 2);
      bwd8 += gemm_seconds(fp8, g[0], g[2], g[1], 1, 1, 2) + gemm_seconds(fp8, g[2], g[1], g[0], 1, 1, 8);
      bwd16 += gemm_seconds(bf16, g[0], g[2], g[1], 1, 2, 2) + gemm_seconds(bf16, g[2], g[1], g[0], 1, 2, 8);
    }
    EXPECT_LT(fwd8, 0.6 * fwd16);
    EXPECT_GT(fwd_quantize, 0.1 * fwd8);
    // The two norms write their T h (T h / t with SP) outputs at 1 byte instead of 2.
    const double n = sp ? T * h / t : T * h;
    const double norms = 2 * (memory_seconds(fp8, 3 * n) - memory_seconds(fp8, 4 * n));
    EXPECT_NEAR(c8.block.forward.compute_s - fwd8 - fwd_quantize - norms, c16.block.forward.compute_s - fwd16,
                1e-12);
    EXPECT_NEAR(c8.block.backward.compute_s - bwd8 - bwd_quantize, c16.block.backward.compute_s - bwd16,
                1e-12);
  }
}

TEST(Fp8, GemmInputsAreKeptInFp8AndTheWeightsGainAnFp8Copy) {
  // Per sample and block, Transformer Engine keeps the inputs of QKV and FFN in (s h each, on
  // every TP rank; split with SP) and of the attention output and FFN out (s h and 4 s h, split
  // over TP) at 1 byte instead of 2: the fp8 run keeps that many bytes fewer.
  const Workload w8 = gpt("fp8"), w16 = gpt("bf16");
  const Layer& block = w8.model.layers[1];
  const double s = 2048, h = 2048, t = 2;
  for (const bool sp : {false, true}) {
    const ActivationSplit split{2, sp ? 2u : 1u, 1};
    const LayerActivations a8 = layer_activations(w8, block, split),
                           a16 = layer_activations(w16, block, split);
    const double saved = sp ? (2 * s * h + 5 * s * h) / t : 2 * s * h + 5 * s * h / t;
    EXPECT_DOUBLE_EQ(a16.none - a8.none, saved);
    EXPECT_DOUBLE_EQ(a16.selective - a8.selective, saved);
    EXPECT_DOUBLE_EQ(a8.full, a16.full);  // the block's input, bf16
  }
  // The embedding and the head keep the same.
  for (const std::size_t i : {std::size_t{0}, w8.model.layers.size() - 1}) {
    const ActivationSplit split{2, 1, 1};
    EXPECT_DOUBLE_EQ(layer_activations(w8, w8.model.layers[i], split).none,
                     layer_activations(w16, w16.model.layers[i], split).none);
  }
  // Weights: bf16 (2 bytes) plus the fp8 copy (1); bf16 gradients, fp32 master and Adam moments.
  const MemoryBreakdown m8 = memory_per_gpu(w8, strategy(2, 2, 2, 4));
  const MemoryBreakdown m16 = memory_per_gpu(w16, strategy(2, 2, 2, 4));
  EXPECT_DOUBLE_EQ(m8.weights, 1.5 * m16.weights);
  EXPECT_DOUBLE_EQ(m8.gradients, m16.gradients);
  EXPECT_DOUBLE_EQ(m8.optimizer, m16.optimizer);
  EXPECT_LT(m8.activations, m16.activations);
}

TEST(Fp8, CommunicationIsTheBf16Traffic) {
  // TP (with and without SP), pipeline and data-parallel transfers: the same bytes as bf16.
  const Workload w8 = gpt("fp8"), w16 = gpt("bf16");
  for (const bool sp : {false, true}) {
    const Strategy s = strategy(2, 2, 2, 4, sp);
    const IterationPlan p8 = plan_iteration(w8, s), p16 = plan_iteration(w16, s);
    std::vector<std::pair<CommPurpose, double>> t8, t16;
    for (const Task& t : p8.graph.tasks) {
      if (t.kind != TaskKind::Compute) t8.emplace_back(t.purpose, t.bytes);
    }
    for (const Task& t : p16.graph.tasks) {
      if (t.kind != TaskKind::Compute) t16.emplace_back(t.purpose, t.bytes);
    }
    EXPECT_EQ(t8, t16);
    std::size_t tp = 0;
    for (const auto& [purpose, bytes] : t8) {
      if (purpose == CommPurpose::TensorParallel) ++tp;
    }
    EXPECT_GT(tp, 0u);
  }
  // model.grad_datatype still sets the gradients (and their reduction).
  Config c = test::workload_config(
      {"model.name=gpt3-1.3b", "model.datatype=fp8", "model.grad_datatype=fp32", "server.device=h100"});
  const Workload w = workload_from_config(c, 8);
  EXPECT_DOUBLE_EQ(w.grad_bytes_per_element, 4);
  EXPECT_DOUBLE_EQ(w.bytes_per_element, 2);
}

TEST(Fp8, DeviceWithoutAnFp8PeakIsAnError) {
  for (const char* device : {"a100", "v100"}) {
    try {
      gpt("fp8", device);
      ADD_FAILURE() << device << ": no error";
    } catch (const BadInput& e) {
      EXPECT_EQ(e.where(), "key model.datatype");
      EXPECT_NE(std::string(e.what()).find("fp8"), std::string::npos);
    }
  }
  // Every Hopper and Blackwell built-in has its fp8 GEMM fraction.
  for (const char* device : {"h100", "h200", "h800", "b200"}) {
    EXPECT_GT(builtin_device(device).fp8_gemm_efficiency, 0) << device;
  }
  EXPECT_DOUBLE_EQ(builtin_device("h200").fp8_gemm_efficiency, 0.6572);
}

TEST(Fp8, DeviceFilesGiveTheFp8GemmEfficiency) {
  const std::string head =
      R"({"name": "x", "efficiency": 0.5, "hbm_capacity": "1GiB", "hbm_bandwidth": "1TB/s",
    "gpus_per_server": 1, "intra_server_bandwidth": "1GB/s", "sms": 100, "gemm_efficiency": 0.7,
    "memory_efficiency": 0.5, )";
  const Device d = device_from_json(
      nlohmann::json::parse(head +
                            R"("peak_flops": {"bf16": 1e15, "fp8": 2e15}, "fp8_gemm_efficiency": 0.6})"),
      "d");
  EXPECT_DOUBLE_EQ(d.fp8_gemm_efficiency, 0.6);
  try {
    device_from_json(
        nlohmann::json::parse(head + R"("peak_flops": {"bf16": 1e15}, "fp8_gemm_efficiency": 0.6})"), "d");
    ADD_FAILURE() << "no error";
  } catch (const BadInput& e) {
    EXPECT_EQ(e.where(), "d.fp8_gemm_efficiency");
  }
  // Without it, an fp8 device's weight GEMMs take its gemm_efficiency of the fp8 peak.
  const Device plain =
      device_from_json(nlohmann::json::parse(head + R"("peak_flops": {"bf16": 1e15, "fp8": 2e15}})"), "d");
  const Workload w = make_workload(builtin_model("gpt3-1.3b"), plain, "fp8", 8);
  EXPECT_DOUBLE_EQ(kernel_device(w).weight_gemm_peak_flops, 2e15);
  EXPECT_DOUBLE_EQ(kernel_device(w).weight_gemm_efficiency, 0.7);
  EXPECT_DOUBLE_EQ(kernel_device(w).peak_flops, 1e15);
}

}  // namespace
}  // namespace toposweep
