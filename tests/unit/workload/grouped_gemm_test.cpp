// The MoE layer's expert GEMMs at the device's grouped GEMM efficiency (fitted on the measured
// expert FFNs of docs/validation/reference/hopper/, scripts/validation/fit_hopper.py), by hand:
// the forward expert GEMMs of one Mixtral-8x7B block on one H100, and which efficiency applies
// with fp8 and on a device without a grouped measurement.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/device.hpp"
#include "toposweep/workload/layer_cost.hpp"
#include "toposweep/workload/model_library.hpp"

namespace toposweep {
namespace {

LayerCostKey one_gpu_key(const std::string& model, const std::string& device, const std::string& datatype) {
  Workload w = make_workload(builtin_model(model), builtin_device(device), datatype, 1);
  w.fused_attention = true;
  Strategy s;  // one GPU: dp = tp = pp = ep = 1, one microbatch of one sequence
  return layer_cost_key(w, s);
}

// One sequence of 4096 tokens, top-2 of 8 experts: 1024 tokens per expert. The forward expert
// GEMMs on one rank: expert_in 8 x (1024 x 4096) x (4096 x 2 x 14336) (SwiGLU's gate and up) and
// expert_out 8 x (1024 x 14336) x (14336 x 4096), 2 x 1024 x 8 x 4096 x 14336 x (2 + 1) =
// 2,886,218,022,912 FLOPs. No wave quantisation on the H100 (1 x 1 tiles) but the partly filled
// last wave of 132 SMs: 234,881,024 outputs in 1,779,402 waves and 33,554,432 in 254,201. At
// efficiency e they take FLOPs / (989.4 TFLOP/s x e x waves), compute-bound down to e = 1
// (expert_in's 2.42 GB of operands take 1.27 ms at the H100's 1.894 TB/s, its FLOPs 1.95 ms at
// peak). So going from e = 1 to the H100's grouped efficiency 0.6585 adds
// (1 / 0.6585 - 1) x 2.9171 ms = 1.5128 ms to the block's forward compute and nothing else moves.
TEST(GroupedGemm, MixtralExpertGemmsRunAtTheGroupedEfficiency) {
  const LayerCostKey k = one_gpu_key("mixtral-8x7b", "h100", "bf16");
  EXPECT_DOUBLE_EQ(k.device.expert_gemm_efficiency, 0.6585);
  EXPECT_DOUBLE_EQ(k.device.weight_gemm_efficiency, 0.687);  // the dense GEMMs keep theirs
  LayerCostKey at_peak = k;
  at_peak.device.expert_gemm_efficiency = 1;
  const double peak = 989.4e12;
  const double in_flops = 2.0 * 1024 * 28672 * 4096 * 8, out_flops = 2.0 * 1024 * 4096 * 14336 * 8;
  EXPECT_DOUBLE_EQ(in_flops + out_flops, 2886218022912.0);
  const double in_waves = 234881024.0 / (1779402.0 * 132), out_waves = 33554432.0 / (254201.0 * 132);
  const double at_one = in_flops / (peak * in_waves) + out_flops / (peak * out_waves);
  EXPECT_NEAR(at_one, 2.9171429e-3, 1e-9);
  const double expected = at_one * (1 / 0.6585 - 1);
  EXPECT_NEAR(expected, 1.5128387e-3, 1e-9);
  const double delta = transformer_costs(k).moe_block.forward.compute_s -
                       transformer_costs(at_peak).moe_block.forward.compute_s;
  EXPECT_NEAR(delta, expected, 1e-12);
  // The dense blocks, the embedding and the head do not change.
  EXPECT_EQ(transformer_costs(k).block, transformer_costs(at_peak).block);
}

// fp8 (Transformer Engine): the expert GEMMs at the fp8 fraction x the measured grouped / dense
// ratio, 0.6306 x 0.6585 / 0.687; the A100 has no grouped measurement: its gemm_efficiency.
TEST(GroupedGemm, Fp8AndUnmeasuredDevices) {
  EXPECT_DOUBLE_EQ(one_gpu_key("mixtral-8x7b", "h100", "fp8").device.expert_gemm_efficiency,
                   0.6306 * 0.6585 / 0.687);
  EXPECT_DOUBLE_EQ(one_gpu_key("mixtral-8x7b", "h200", "bf16").device.expert_gemm_efficiency, 0.6396);
  EXPECT_DOUBLE_EQ(one_gpu_key("mixtral-8x7b", "a100", "bf16").device.expert_gemm_efficiency, 0.767);
}

// A KernelDevice built by hand without the field (expert_gemm_efficiency 0) runs the expert GEMMs
// at the weight GEMMs' efficiency, not at an infinite time.
TEST(GroupedGemm, AnUnsetExpertEfficiencyIsTheWeightGemms) {
  LayerCostKey k = one_gpu_key("mixtral-8x7b", "h100", "bf16");
  LayerCostKey unset = k, dense = k;
  unset.device.expert_gemm_efficiency = 0;
  dense.device.expert_gemm_efficiency = dense.device.weight_gemm_efficiency;
  const double t = transformer_costs(unset).moe_block.forward.compute_s;
  EXPECT_TRUE(std::isfinite(t));
  EXPECT_EQ(t, transformer_costs(dense).moe_block.forward.compute_s);
  EXPECT_LT(t, transformer_costs(k).moe_block.forward.compute_s);  // 0.687 is faster than 0.6585
}

TEST(GroupedGemm, DeviceFilesNeedThePerOperatorModel) {
  const std::string head = R"({"name": "x", "peak_flops": {"bf16": 1e12}, "efficiency": 0.5,
    "hbm_capacity": "1GiB", "hbm_bandwidth": "1TB/s", "gpus_per_server": 1, "intra_server_bandwidth": "1GB/s", )";
  const Device d = device_from_json(
      nlohmann::json::parse(head + R"("sms": 8, "gemm_efficiency": 0.7, "memory_efficiency": 0.6,
        "grouped_gemm_efficiency": 0.65})"),
      "d");
  EXPECT_DOUBLE_EQ(d.grouped_gemm_efficiency, 0.65);
  EXPECT_EQ(device_to_json(d)["grouped_gemm_efficiency"], 0.65);
  try {
    device_from_json(nlohmann::json::parse(head + R"("grouped_gemm_efficiency": 0.65})"), "d");
    ADD_FAILURE() << "no error";
  } catch (const BadInput& e) {
    EXPECT_EQ(e.where(), "d.grouped_gemm_efficiency");
  }
  EXPECT_THROW(device_from_json(nlohmann::json::parse(head + R"("sms": 8, "gemm_efficiency": 0.7,
    "memory_efficiency": 0.6, "grouped_gemm_efficiency": 1.5})"),
                                "d"),
               BadInput);
}

}  // namespace
}  // namespace toposweep
