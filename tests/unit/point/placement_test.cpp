// optimize.placement in a full evaluation (what simulate prints): METIS placement against rank order on a
// topology where the answer is known.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "evaluation_helpers.hpp"
#include "point_config.hpp"
#include "toposweep/point/evaluate.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep {
namespace {

using Groups = std::vector<std::vector<std::uint32_t>>;

// Two fast (100 GB/s) 4-cliques {0,2,4,6} and {1,3,5,7}, interleaved in rank order, joined by
// slow (1 GB/s) links 0-1, 2-3, 4-5, 6-7; single-GPU servers.
std::string write_interleaved_cliques() {
  const auto path = std::filesystem::temp_directory_path() /
                    ("toposweep_placement_cliques_" + std::to_string(::getpid()) + ".txt");
  std::ofstream f(path);
  f << "# interleaved cliques\n";
  for (int parity = 0; parity < 2; ++parity)
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j) {
        const int a = parity + 2 * i, b = parity + 2 * j;
        f << a << " " << b << " 100GB/s\n" << b << " " << a << " 100GB/s\n";
      }
  for (int i = 0; i < 8; i += 2) f << i << " " << i + 1 << " 1GB/s\n" << i + 1 << " " << i << " 1GB/s\n";
  return path.string();
}

// BERT-large, TP 4 x DP 2 on the topology file, with the given placement.
Config cliques_config(const std::string& file, const char* placement) {
  return testing::make_point_config({{"topology.kind", "file"},
                                     {"topology.file", file.c_str()},
                                     {"server.gpus", "1"},
                                     {"model.name", "bert-large"},
                                     {"strategy.tp", "4"},
                                     {"strategy.dp", "2"},
                                     {"simulate.network_model", "analytical"},
                                     {"optimize.placement", placement}});
}

Evaluation run(const std::string& file, const char* placement) {
  return testing::full_evaluation(cliques_config(file, placement));
}

TEST(Placement, MetisPutsTensorGroupsInsideTheCliquesAndIsFaster) {
  const std::string file = write_interleaved_cliques();
  const Evaluation rank = run(file, "rank_order");
  const Evaluation metis = run(file, "metis");
  EXPECT_EQ(rank.placement_method, "rank_order");
  EXPECT_EQ(metis.placement_requested, "metis");
  ASSERT_EQ(metis.placement_method, "metis");
  Groups groups = metis.placement_groups;
  std::sort(groups.begin(), groups.end());
  EXPECT_EQ(groups, (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  // TP group k (ranks 4k..4k+3) on one clique; rank order puts rank r on server r.
  for (std::uint32_t r = 0; r < 8; ++r) {
    EXPECT_EQ(rank.placement.node_of_gpu[r], r);
    EXPECT_EQ(metis.placement.node_of_gpu[r] % 2, metis.placement.node_of_gpu[r / 4 * 4] % 2);
  }
  ASSERT_TRUE(rank.simulated && metis.simulated);
  // Placement moves communication only.
  EXPECT_NEAR(metis.row.compute_time_s, rank.row.compute_time_s, 1e-9 * rank.row.compute_time_s);
  // Hand estimate: any ring over rank order's {0,1,2,3} crosses between the cliques at least
  // twice, so its TP AllReduces (4 per layer per microbatch, the bulk of bert-large's traffic)
  // run at 1 GB/s instead of 100 GB/s; METIS pays instead for the once-per-iteration DP gradient
  // AllReduce of 2 ranks over a 1 GB/s link. Rank order's communication must therefore exceed
  // METIS's by far more than 10x, and the iteration time by at least 10x (compute is 0.11 s).
  EXPECT_LT(metis.row.iteration_time_s, rank.row.iteration_time_s);
  EXPECT_GT(rank.row.exposed_comm_time_s, 10 * metis.row.exposed_comm_time_s);
  EXPECT_GT(rank.row.iteration_time_s, 10 * metis.row.iteration_time_s);
}

// Sweep rows follow optimize.placement too: the row equals the full evaluation's.
TEST(Placement, PointEvaluatorHonoursMetisPlacement) {
  const std::string file = write_interleaved_cliques();
  const Evaluation metis = run(file, "metis");
  const Evaluation rank = run(file, "rank_order");
  testing::RowEvaluator evaluator;
  EXPECT_DOUBLE_EQ(evaluator.evaluate(cliques_config(file, "metis")).iteration_time_s,
                   metis.row.iteration_time_s);
  EXPECT_DOUBLE_EQ(evaluator.evaluate(cliques_config(file, "rank_order")).iteration_time_s,
                   rank.row.iteration_time_s);
}

TEST(Placement, PureDataParallelismKeepsRankOrder) {
  const std::string file = write_interleaved_cliques();
  const Evaluation p =
      testing::full_evaluation(testing::make_point_config({{"topology.kind", "file"},
                                                           {"topology.file", file.c_str()},
                                                           {"server.gpus", "1"},
                                                           {"model.name", "bert-large"},
                                                           {"optimize.placement", "metis"}}));
  EXPECT_EQ(p.placement_method, "rank_order");
  for (std::uint32_t r = 0; r < 8; ++r) EXPECT_EQ(p.placement.node_of_gpu[r], r);
}

TEST(Placement, UnknownPlacementIsBadInput) {
  const std::string file = write_interleaved_cliques();
  EXPECT_THROW(run(file, "random"), BadInput);
}

}  // namespace
}  // namespace toposweep
