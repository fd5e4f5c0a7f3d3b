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

// Only the A100's two compute parameters are fitted (Korthikanti et al. 2022 Table 4); the other
// devices must say that theirs are not calibrated.
TEST(Devices, UncalibratedNumbersSaySo) {
  for (const char* name : {"h100", "v100"}) {
    const Device d = builtin_device(name);
    EXPECT_NE(d.source("gemm_efficiency").find("NOT CALIBRATED"), std::string::npos) << name;
    EXPECT_NE(d.source("memory_efficiency").find("NOT CALIBRATED"), std::string::npos) << name;
  }
  EXPECT_NE(builtin_device("a100").source("gemm_efficiency").find("Table 4"), std::string::npos);
}

}  // namespace
}  // namespace toposweep
