// same_model_inputs (sim/model_inputs.hpp): a switch at 4 ports of 200 Gb/s and at 8 ports of
// 100 Gb/s is one 800 Gb/s link per server to the model (one set of analytical models serves
// both); other speeds, latencies, families or fabrics are not.
#include "toposweep/sim/model_inputs.hpp"

#include <gtest/gtest.h>

#include "toposweep/topology/families.hpp"

namespace toposweep::sim {
namespace {

topology::SwitchSpec switch_of(std::uint32_t degree, double gbps, double latency_s = 1e-6) {
  topology::SwitchSpec s;
  s.servers = 16;
  s.degree = degree;
  s.link_bandwidth_Bps = gbps * 1e9 / 8;
  s.link_latency_s = latency_s;
  s.server.gpus = 8;
  s.server.intra_bandwidth_Bps = 300e9;
  return s;
}

TEST(ModelInputs, PortsTimesSpeedIsWhatTheModelSees) {
  const Network a = topology::build_switch(switch_of(4, 200)), b = topology::build_switch(switch_of(8, 100));
  EXPECT_NE(a.info().degree, b.info().degree);
  EXPECT_TRUE(same_model_inputs(a, b));
  EXPECT_TRUE(same_model_inputs(b, a));
  EXPECT_FALSE(same_model_inputs(a, topology::build_switch(switch_of(8, 200))));
  EXPECT_FALSE(same_model_inputs(a, topology::build_switch(switch_of(8, 100, 2e-6))));
  topology::SwitchSpec slow_fabric = switch_of(8, 100);
  slow_fabric.server.intra_bandwidth_Bps = 150e9;
  EXPECT_FALSE(same_model_inputs(a, topology::build_switch(slow_fabric)));
  topology::FatTreeSpec tree;
  tree.servers = 16;
  tree.degree = 4;
  tree.link_bandwidth_Bps = 200e9 / 8;
  tree.link_latency_s = 1e-6;
  tree.server = switch_of(4, 200).server;
  EXPECT_FALSE(same_model_inputs(a, topology::build_fattree(tree)));
}

}  // namespace
}  // namespace toposweep::sim
