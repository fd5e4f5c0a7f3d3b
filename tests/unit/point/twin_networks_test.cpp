// A sweep's bandwidth and latency variants of one topology, evaluated through one cache in the
// order a sweep meets them (link latency fastest): twins share ring sets, hop distances and path
// sums (collective/memo.hpp), networks with the same arcs share hop distances; every row must
// equal the row of a fresh cache, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

#include "evaluation_helpers.hpp"
#include "point_config.hpp"
#include "toposweep/point/evaluate.hpp"

namespace toposweep {
namespace {

void expect_bits(const PointResult& a, const PointResult& b) {
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.message, b.message);
  EXPECT_EQ(std::isnan(a.iteration_time_s), std::isnan(b.iteration_time_s));
  if (!std::isnan(a.iteration_time_s)) {
    EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);
    EXPECT_EQ(a.compute_time_s, b.compute_time_s);
    EXPECT_EQ(a.exposed_comm_time_s, b.exposed_comm_time_s);
    EXPECT_EQ(a.bubble_time_s, b.bubble_time_s);
  }
  EXPECT_EQ(a.cost_usd, b.cost_usd);
  EXPECT_EQ(a.dp, b.dp);
  EXPECT_EQ(a.tp, b.tp);
}

TEST(TwinNetworks, VariantsServedFromSharedStoresEqualFreshEvaluations) {
  // 3 kinds x 4 bandwidths (300 Gb/s is no power-of-two multiple of the others) x 4 latencies
  // (3 us neither) = 48 networks per strategy. Four GPUs per server (one TP group): a pipeline send's path,
  // not the server's injection bound, sets its time (so the path sums' latencies count); DP groups of a few
  // of the 32 servers, so topoopt's multiring searches sub-group ring sets.
  testing::RowEvaluator shared;
  std::size_t evaluated = 0;
  for (const char* pp : {"16", "32"})
    for (const char* kind : {"topoopt", "fattree", "switch"})
      for (const char* bw : {"100Gbps", "200Gbps", "300Gbps", "400Gbps"})
        for (const char* lat : {"0.5us", "1us", "2us", "3us"}) {
          SCOPED_TRACE(std::string(kind) + " " + bw + " " + lat + " pp " + pp);
          const Config c = testing::make_point_config({{"topology.kind", kind},
                                                       {"topology.servers", "32"},
                                                       {"topology.degree", "4"},
                                                       {"topology.link_bandwidth", bw},
                                                       {"topology.link_latency", lat},
                                                       {"server.gpus", "4"},
                                                       {"model.name", "gpt3-175b"},
                                                       {"model.batch_per_gpu", "1"},
                                                       {"strategy.tp", "4"},
                                                       {"strategy.pp", pp},
                                                       {"strategy.microbatches", "8"},
                                                       {"strategy.recompute", "true"}});
          const PointResult r = shared.evaluate(c);
          testing::RowEvaluator fresh;
          expect_bits(r, fresh.evaluate(c));
          evaluated += r.status == PointStatus::Evaluated;
        }
  EXPECT_GT(evaluated, 0u);
}

TEST(TwinNetworks, SwitchesTheModelSeesAlikeShareTheirModelsButNotTheirCosts) {
  // 4 ports of 200 Gb/s and 8 of 100 Gb/s are one 800 Gb/s link per server to the model: the
  // second network's rows come from the first's analytical models; its cost is its own.
  testing::RowEvaluator shared;
  for (const char* pp : {"16", "32"}) {
    PointResult rows[2];
    int i = 0;
    for (const auto& [degree, bw] : {std::pair{"4", "200Gbps"}, std::pair{"8", "100Gbps"}}) {
      SCOPED_TRACE(std::string(degree) + " x " + bw + " pp " + pp);
      const Config c = testing::make_point_config({{"topology.kind", "switch"},
                                                   {"topology.servers", "32"},
                                                   {"topology.degree", degree},
                                                   {"topology.link_bandwidth", bw},
                                                   {"server.gpus", "4"},
                                                   {"model.name", "gpt3-175b"},
                                                   {"model.batch_per_gpu", "1"},
                                                   {"strategy.tp", "4"},
                                                   {"strategy.pp", pp},
                                                   {"strategy.microbatches", "8"},
                                                   {"strategy.recompute", "true"}});
      rows[i] = shared.evaluate(c);
      testing::RowEvaluator fresh;
      expect_bits(rows[i], fresh.evaluate(c));
      ++i;
    }
    ASSERT_EQ(rows[0].status, PointStatus::Evaluated);
    EXPECT_EQ(rows[0].iteration_time_s, rows[1].iteration_time_s);
    EXPECT_NE(rows[0].cost_usd, rows[1].cost_usd);
  }
}

}  // namespace
}  // namespace toposweep
