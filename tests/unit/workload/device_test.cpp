#include "toposweep/workload/device.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "toposweep/util/error.hpp"

namespace toposweep {
namespace {

TEST(Devices, FilesInInputsMatchTheBuiltins) {
  for (const auto& name : builtin_device_names()) {
    const Device file =
        load_device_file(std::string(TOPOSWEEP_SOURCE_DIR) + "/inputs/devices/" + name + ".json");
    EXPECT_EQ(device_to_json(file), device_to_json(builtin_device(name))) << name;
  }
}

TEST(Devices, DatasheetPeaks) {
  EXPECT_DOUBLE_EQ(builtin_device("a100").peak("bf16", "t"), 312e12);
  EXPECT_DOUBLE_EQ(builtin_device("h100").peak("fp16", "t"), 989.4e12);
  EXPECT_DOUBLE_EQ(builtin_device("v100").hbm_bytes, 32.0 * 1024 * 1024 * 1024);  // the 32GB part: 32 GiB
  EXPECT_THROW(builtin_device("v100").peak("bf16", "t"), BadInput);
  EXPECT_DOUBLE_EQ(datatype_bytes("bf16", "t"), 2);
  EXPECT_THROW(datatype_bytes("fp12", "t"), BadInput);
}

TEST(Devices, ErrorsNameTheField) {
  auto where = [](const char* text) -> std::string {
    try {
      device_from_json(nlohmann::json::parse(text), "d.json");
    } catch (const BadInput& e) {
      return e.where();
    }
    return "no error";
  };
  const std::string ok_tail =
      R"("efficiency": 0.5, "gpus_per_server": 4, "intra_server_bandwidth": "100GB/s")";
  EXPECT_EQ(
      where(
          (R"({"name": "x", "peak_flops": {"fp16": 1e12}, "hbm_capacity": "16", "hbm_bandwidth": "1TB/s", )" +
           ok_tail + "}")
              .c_str()),
      "d.json.hbm_capacity");
  EXPECT_EQ(
      where(
          (R"({"name": "x", "peak_flops": {"fp17": 1e12}, "hbm_capacity": "16GB", "hbm_bandwidth": "1TB/s", )" +
           ok_tail + "}")
              .c_str()),
      "d.json.peak_flops.fp17");
  EXPECT_EQ(
      where(
          (R"({"name": "x", "peak_flops": {"fp16": 1e12}, "hbm_capacity": "16GB", "hbm_bandwidth": "1TB/s", "colour": 1, )" +
           ok_tail + "}")
              .c_str()),
      "d.json.colour");
  EXPECT_EQ(
      where(
          (R"({"name": "x", "peak_flops": {"fp16": 1e12}, "hbm_capacity": "16GB", "hbm_bandwidth": "1TB/s", )" +
           ok_tail + "}")
              .c_str()),
      "no error");
}

}  // namespace
}  // namespace toposweep

namespace toposweep {
namespace {

const char* kMinimal =
    R"({"name": "x", "peak_flops": {"fp16": 1e12}, "efficiency": 0.5, "hbm_capacity": "16GiB",
        "hbm_bandwidth": "1TB/s", "gpus_per_server": 4, )";

std::string error_where(const std::string& tail) {
  try {
    device_from_json(nlohmann::json::parse(std::string(kMinimal) + tail), "d.json");
  } catch (const BadInput& e) {
    return e.where();
  }
  return "no error";
}

TEST(Devices, LinkClassAndPerOperatorFields) {
  const Device d = device_from_json(
      nlohmann::json::parse(std::string(kMinimal) +
                            R"("intra_server": {"bandwidth": "100GB/s", "efficiency": 0.8, "latency": "5us",
                                "step_latency": "2us", "collective_sms": 16},
                               "sms": 64, "gemm_efficiency": 0.7, "memory_efficiency": 0.6,
                               "memory_reserve": "2GiB", "gemm_tiles": [[128, 64]],
                               "flash_attention_efficiency": {"forward": 0.5, "backward": 0.4}})"),
      "d.json");
  EXPECT_EQ(d.intra_server, (LinkClass{100e9, 0.8, 5e-6, 2e-6}));
  EXPECT_EQ(d.collective_sms, 16u);
  EXPECT_TRUE(d.per_operator());
  EXPECT_DOUBLE_EQ(d.memory_reserve_bytes, 2.0 * (1 << 30));
  EXPECT_EQ(d.gemm_tiles, (std::vector<std::pair<std::uint32_t, std::uint32_t>>{{128, 64}}));
  // The legacy field is the link's line rate; such a device has no per-operator model.
  const Device old = device_from_json(
      nlohmann::json::parse(std::string(kMinimal) + R"("intra_server_bandwidth": "100GB/s"})"), "d.json");
  EXPECT_EQ(old.intra_server, (LinkClass{100e9, 1, 0, 0}));
  EXPECT_FALSE(old.per_operator());
  EXPECT_EQ(error_where(R"("intra_server": {"bandwidth": "100GB/s", "efficiency": 1.2}})"),
            "d.json.intra_server.efficiency");
  EXPECT_EQ(error_where(R"("intra_server_bandwidth": "1GB/s", "sms": 64})"), "d.json.gemm_efficiency");
  EXPECT_EQ(error_where(R"("intra_server_bandwidth": "1GB/s", "memory_reserve": "20GiB"})"),
            "d.json.memory_reserve");
  EXPECT_EQ(error_where(R"("intra_server_bandwidth": "1GB/s", "intra_server": {"bandwidth": "1GB/s"}})"),
            "d.json.intra_server");
}

// The A100's two compute parameters are fitted on Korthikanti et al. 2022 Table 4, the H100's and
// H200's on the measured Hopper operator tables; the other devices must say that theirs are not
// calibrated.
TEST(Devices, UncalibratedNumbersSaySo) {
  const Device v = builtin_device("v100");
  EXPECT_NE(v.source("gemm_efficiency").find("NOT CALIBRATED"), std::string::npos);
  EXPECT_NE(v.source("memory_efficiency").find("NOT CALIBRATED"), std::string::npos);
  EXPECT_NE(builtin_device("a100").source("gemm_efficiency").find("Table 4"), std::string::npos);
  for (const char* name : {"h100", "h200"}) {
    const Device d = builtin_device(name);
    for (const char* field :
         {"gemm_efficiency", "gemm_tiles", "memory_efficiency", "flash_attention_efficiency",
          "fp8_gemm_efficiency", "grouped_gemm_efficiency"}) {
      EXPECT_NE(d.source(field).find("fitted"), std::string::npos) << name << " " << field;
      EXPECT_NE(d.source(field).find("fit_hopper.py"), std::string::npos) << name << " " << field;
    }
  }
  // The B200 is datasheet figures and transfers: every number's source but NCCL's latencies says
  // UNCALIBRATED (fused_attention_default is the software stack, not a number).
  for (const char* name : {"b200", "gb200"}) {
    const Device b = builtin_device(name);
    ASSERT_TRUE(b.sources);
    for (const auto& [field, text] : *b.sources) {
      if (field != "intra_server.latency" && field != "intra_server.step_latency" &&
          field != "fused_attention_default") {
        EXPECT_NE(text.find("UNCALIBRATED"), std::string::npos) << name << " " << field;
      }
    }
  }
}

// Every number of the new devices against the figure its source cites.
TEST(Devices, HopperAndBlackwellMatchTheirSources) {
  constexpr double GiB = 1024.0 * 1024 * 1024;
  const Device h100 = builtin_device("h100"), h200 = builtin_device("h200");
  const Device h800 = builtin_device("h800"), b200 = builtin_device("b200");
  // H800: H100 compute and memory, NVLink 400 GB/s bidirectional = 200 GB/s per direction.
  EXPECT_DOUBLE_EQ(h800.intra_server.bandwidth_Bps, 200e9);
  EXPECT_NE(h800.source("intra_server.bandwidth").find("400 GB/s bidirectional"), std::string::npos);
  EXPECT_DOUBLE_EQ(h800.peak("bf16", "t"), h100.peak("bf16", "t"));
  EXPECT_DOUBLE_EQ(h800.peak("fp64", "t"), 1e12);
  EXPECT_DOUBLE_EQ(h800.gemm_efficiency, h100.gemm_efficiency);
  EXPECT_DOUBLE_EQ(h800.hbm_Bps, h100.hbm_Bps);
  // H200: 141 GB HBM3e at 4.8 TB/s, the H100's SMs and peaks.
  EXPECT_DOUBLE_EQ(h200.hbm_bytes, 141 * GiB);
  EXPECT_DOUBLE_EQ(h200.hbm_Bps, 4.8e12);
  EXPECT_NE(h200.source("hbm_bandwidth").find("4.8 TB/s"), std::string::npos);
  EXPECT_NE(h200.source("hbm_capacity").find("141 GB"), std::string::npos);
  EXPECT_EQ(h200.sms, 132u);
  EXPECT_DOUBLE_EQ(h200.peak("bf16", "t"), 989.4e12);
  // H100: NVLink4 450 GB/s per direction, HBM3 3.35 TB/s.
  EXPECT_DOUBLE_EQ(h100.intra_server.bandwidth_Bps, 450e9);
  EXPECT_DOUBLE_EQ(h100.hbm_Bps, 3.35e12);
  // B200: HGX B200 datasheet, dense.
  EXPECT_DOUBLE_EQ(b200.peak("bf16", "t"), 2.25e15);
  EXPECT_DOUBLE_EQ(b200.peak("fp8", "t"), 4.5e15);
  EXPECT_DOUBLE_EQ(b200.hbm_Bps, 8e12);
  EXPECT_DOUBLE_EQ(b200.intra_server.bandwidth_Bps, 900e9);
  EXPECT_EQ(b200.sms, 148u);
  // GB200 NVL72: the rack's datasheet totals over its 72 GPUs (dense = half the sparse figures):
  // FP8 720 / 72 / 2 = 5 PFLOP/s, BF16 360 / 72 / 2 = 2.5, 13.4 TB / 72 = 186 GB, 576 TB/s / 72 = 8 TB/s,
  // one NVLink domain of 72 GPUs at 1.8 TB/s bidirectional each (130 TB/s).
  const Device gb200 = builtin_device("gb200");
  EXPECT_DOUBLE_EQ(gb200.peak("fp8", "t"), 720e15 / 72 / 2);
  EXPECT_DOUBLE_EQ(gb200.peak("bf16", "t"), 360e15 / 72 / 2);
  EXPECT_NEAR(gb200.hbm_bytes, 13.4e12 / 72, 0.2e9);
  EXPECT_DOUBLE_EQ(gb200.hbm_Bps, 576e12 / 72);
  EXPECT_EQ(gb200.gpus_per_server, 72u);
  EXPECT_DOUBLE_EQ(gb200.intra_server.bandwidth_Bps, 1.8e12 / 2);
  EXPECT_EQ(gb200.sms, b200.sms);
  // Fused attention by default on Hopper and later only.
  for (const char* name : {"h100", "h200", "h800", "b200", "gb200"})
    EXPECT_TRUE(builtin_device(name).fused_attention_default) << name;
  for (const char* name : {"a100", "v100"})
    EXPECT_FALSE(builtin_device(name).fused_attention_default) << name;
  // Every field has a source.
  for (const char* name : {"h100", "h200", "h800", "b200"}) {
    const Device d = builtin_device(name);
    for (const char* field : {"peak_flops",
                              "hbm_capacity",
                              "hbm_bandwidth",
                              "memory_reserve",
                              "intra_server.bandwidth",
                              "intra_server.efficiency",
                              "intra_server.latency",
                              "intra_server.step_latency",
                              "collective_sms",
                              "sms",
                              "gemm_efficiency",
                              "gemm_tiles",
                              "memory_efficiency",
                              "kernel_floor",
                              "flash_attention_efficiency",
                              "fused_attention_default",
                              "efficiency",
                              "gpus_per_server",
                              "fp8_gemm_efficiency",
                              "grouped_gemm_efficiency"})
      EXPECT_FALSE(d.source(field).empty()) << name << " " << field;
  }
}

TEST(Devices, FusedAttentionDefaultIsABoolean) {
  const std::string minimal = R"({"name": "x", "peak_flops": {"bf16": 1e12}, "efficiency": 0.5,
    "hbm_capacity": "1GiB", "hbm_bandwidth": "1TB/s", "gpus_per_server": 1,
    "intra_server_bandwidth": "1GB/s", "fused_attention_default": )";
  EXPECT_TRUE(device_from_json(nlohmann::json::parse(minimal + "true}"), "d").fused_attention_default);
  EXPECT_FALSE(device_from_json(nlohmann::json::parse(minimal + "false}"), "d").fused_attention_default);
  EXPECT_THROW(device_from_json(nlohmann::json::parse(minimal + "1}"), "d"), BadInput);
}

}  // namespace
}  // namespace toposweep
