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
