// strategy.ep_dispatcher = deepep: the expert-parallel All-to-Alls send each token once per
// destination node. Mixtral 8x7B (8 experts, top 2) with its EP group of 8 over two servers of 4:
// a token's two experts both lie on the other server with probability C(4, 2) / C(8, 2) = 6/28, so
// it sends 2 x (1 - 6/28) = 22/14 copies over the network where NCCL's All-to-All sends
// 2 x 4/8 = 1: the fraction 11/14, derived here by hand (util/alltoall_dedup.hpp). On a slow
// network every All-to-All is network-bound, so its busy time scales by 11/14.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "sim_test_helpers.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/workload/iteration.hpp"

namespace toposweep::sim {
namespace {

Config mixtral(const std::string& dispatcher, const std::string& groups = "",
               const std::string& group_topk = "") {
  return test::sim_config({{"model.moe_router_groups", groups},
                           {"model.moe_router_group_topk", group_topk},
                           {"topology.kind", "switch"},
                           {"topology.servers", "2"},
                           {"server.gpus", "4"},
                           {"server.device", "h100"},
                           {"topology.link_bandwidth", "10Gbps"},
                           {"topology.link_latency", "0s"},
                           {"model.name", "mixtral-8x7b"},
                           {"model.datatype", "bf16"},
                           {"model.seq_len", "1024"},
                           {"model.global_batch", "16"},
                           {"strategy.dp", "8"},
                           {"strategy.ep", "8"},
                           {"strategy.zero", "1"},
                           {"strategy.recompute", "full"},
                           {"strategy.microbatches", "2"},
                           {"strategy.ep_dispatcher", dispatcher},
                           {"simulate.network_model", "analytical"}});
}

TEST(EpDispatcher, DeepEpSendsEachTokenOncePerNode) {
  const test::SimRun plain = test::simulate_config(mixtral("alltoall"));
  const test::SimRun deepep = test::simulate_config(mixtral("deepep"));
  // The expert-parallel All-to-Alls, and only they, carry the routing.
  std::size_t marked = 0;
  for (const Task& t : deepep.plan.graph.tasks) {
    const bool ep = t.purpose == CommPurpose::ExpertParallel && t.op == CollectiveOp::AllToAll;
    EXPECT_EQ(t.dedup.active(), ep);
    if (ep) {
      EXPECT_EQ(t.dedup.top_k, 2);
      EXPECT_EQ(t.dedup.experts, 8);
      ++marked;
    }
  }
  EXPECT_GT(marked, 0u);
  for (const Task& t : plain.plan.graph.tasks) EXPECT_FALSE(t.dedup.active());
  const auto ep = static_cast<std::size_t>(CommPurpose::ExpertParallel);
  const double busy = plain.result.job().comm_busy_s[ep];
  ASSERT_GT(busy, 0);
  EXPECT_NEAR(deepep.result.job().comm_busy_s[ep], busy * 11.0 / 14.0, 1e-9 * busy);
  EXPECT_EQ(deepep.result.job().comm_bytes[ep], plain.result.job().comm_bytes[ep]);  // per-rank buffers
  EXPECT_LT(deepep.result.job().iteration_time_s, plain.result.job().iteration_time_s);
  // The event engine agrees with the fast path.
  const Network net = network_from_config(mixtral("deepep"));
  EXPECT_EQ(test::engine_result(net, deepep.plan.graph, sim_options_from_config(mixtral("deepep")))
                .job()
                .iteration_time_s,
            deepep.result.job().iteration_time_s);
}

// Group-limited routing set by the keys, with the groups on the two servers: with one group per
// token (model.moe_router_group_topk = 1) both of a token's experts lie on one server, the other one
// with probability 1/2, so it sends 1/2 copy over the network where NCCL's All-to-All sends 1: the
// fraction 1/2, by hand. With both groups allowed the limit is no limit (11/14, as above); with 4
// groups over 2 servers the groups are not the nodes and the limit is left out (11/14 too).
TEST(EpDispatcher, GroupLimitedRoutingFromTheKeys) {
  const auto ep = static_cast<std::size_t>(CommPurpose::ExpertParallel);
  const double busy = test::simulate_config(mixtral("alltoall")).result.job().comm_busy_s[ep];
  ASSERT_GT(busy, 0);
  const auto deepep_busy = [&](const std::string& groups, const std::string& topk) {
    return test::simulate_config(mixtral("deepep", groups, topk)).result.job().comm_busy_s[ep];
  };
  EXPECT_NEAR(deepep_busy("2", "1"), busy / 2, 1e-9 * busy);
  EXPECT_NEAR(deepep_busy("2", "2"), busy * 11.0 / 14.0, 1e-9 * busy);
  EXPECT_NEAR(deepep_busy("4", "1"), busy * 11.0 / 14.0, 1e-9 * busy);
  // NCCL's All-to-All sends k copies whatever the routing.
  EXPECT_EQ(test::simulate_config(mixtral("alltoall", "2", "1")).result.job().comm_busy_s[ep], busy);
}

}  // namespace
}  // namespace toposweep::sim
