// A design point's server fabric comes from its device unless the server.intra_* keys say
// otherwise, and one DGX is a valid cluster.
#include <gtest/gtest.h>

#include "point_config.hpp"
#include "toposweep/point/design_point.hpp"
#include "toposweep/point/evaluate.hpp"
#include "toposweep/topology/build.hpp"

namespace toposweep {
namespace {

using testing::make_point_config;

const topology::ServerSpec& server_of(const DesignPoint& p) {
  return std::get<topology::SwitchSpec>(p.topology.family).server;
}

TEST(DeviceLinks, TheDevicesFabricIsTheDefault) {
  // H100: NVLink4, 450 GB/s per GPU and direction, 370 GB/s nccl-tests bus bandwidth.
  const DesignPoint h = design_point_from_config(make_point_config({{"server.device", "h100"}}));
  EXPECT_DOUBLE_EQ(server_of(h).intra_bandwidth_Bps, 450e9);
  EXPECT_DOUBLE_EQ(server_of(h).intra_efficiency, 370.0 / 450);
  // A key wins over the device.
  const DesignPoint k = design_point_from_config(make_point_config(
      {{"server.device", "h100"}, {"server.intra_bandwidth", "100GB/s"}, {"server.intra_latency", "0s"}}));
  EXPECT_DOUBLE_EQ(server_of(k).intra_bandwidth_Bps, 100e9);
  EXPECT_DOUBLE_EQ(server_of(k).intra_latency_s, 0);
  EXPECT_DOUBLE_EQ(server_of(k).intra_efficiency, 370.0 / 450);
}

// Korthikanti et al. 2022's 22B model on one DGX A100 (tp 8, 4 sequences, full recompute): the
// network carries nothing, and the step takes 1.42 s measured.
TEST(DeviceLinks, OneDgxTrainsThe22BModel) {
  const Config c = make_point_config({{"topology.kind", "switch"},
                                      {"topology.servers", "1"},
                                      {"server.gpus", "8"},
                                      {"model.name", TOPOSWEEP_SOURCE_DIR "/inputs/models/megatron-22b.json"},
                                      {"model.global_batch", "4"},
                                      {"strategy.tp", "8"},
                                      {"strategy.microbatch_size", "4"},
                                      {"strategy.recompute", "full"},
                                      {"strategy.tp_overlap", "backward"},
                                      {"model.grad_datatype", "fp32"}});
  PointCache cache;
  const PointResult r = evaluate_config(c, cache, Detail::Row).row;
  ASSERT_EQ(r.status, PointStatus::Evaluated);
  EXPECT_NEAR(r.iteration_time_s, 1.42, 0.03 * 1.42);
  EXPECT_EQ(r.tp, 8u);
}

}  // namespace
}  // namespace toposweep
