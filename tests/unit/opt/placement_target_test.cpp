// optimize --target placement: METIS placement of the configured strategy against rank order.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_config.hpp"
#include "toposweep/opt/design_point.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::opt {
namespace {

// The optimizer on a configuration's specs (what the point module does for a DesignPoint).
OptimizeResult optimize_config(const Config& c, OptimizeTarget t,
                               const std::optional<SingleCollective>& single = std::nullopt) {
  return optimize_design_point(optimize_problem_from_config(c, t), t, single);
}

// Two fast (100 GB/s) 4-cliques {0,2,4,6}, {1,3,5,7} joined by slow (1 GB/s) links 0-1, 2-3, 4-5, 6-7.
std::string cliques_file() {
  const auto path = std::filesystem::temp_directory_path() /
                    ("toposweep_opt_placement_cliques_" + std::to_string(::getpid()) + ".txt");
  std::ofstream f(path);
  for (int parity = 0; parity < 2; ++parity)
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j) {
        const int a = parity + 2 * i, b = parity + 2 * j;
        f << a << " " << b << " 100GB/s\n" << b << " " << a << " 100GB/s\n";
      }
  for (int i = 0; i < 8; i += 2) f << i << " " << i + 1 << " 1GB/s\n" << i + 1 << " " << i << " 1GB/s\n";
  return path.string();
}

TEST(PlacementTarget, ComparesMetisWithRankOrder) {
  const Config c = testing::make_config({{"topology.kind", "file"},
                                         {"topology.file", cliques_file()},
                                         {"server.gpus", "1"},
                                         {"model.name", "bert-large"},
                                         {"strategy.tp", "4"},
                                         {"strategy.dp", "2"},
                                         {"simulate.network_model", "analytical"}});
  const OptimizeResult r = optimize_config(c, parse_optimize_target("placement", "test"));
  EXPECT_EQ(r.placement_method, "metis");
  EXPECT_EQ(r.placement_grouped, "tp");
  auto groups = r.placement_groups;
  std::sort(groups.begin(), groups.end());
  EXPECT_EQ(groups, (std::vector<std::vector<std::uint32_t>>{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  // Rank order's TP rings cross 1 GB/s links, METIS' stay on 100 GB/s ones (see
  // tests/unit/point/placement_test.cpp for the estimate): at least a 10x gain.
  EXPECT_GT(r.baseline_time_s, 10 * r.time_s);
  ASSERT_EQ(r.position_of_node.size(), 8u);
  for (std::uint32_t k = 0; k < 2; ++k)
    for (std::uint32_t j = 0; j < 4; ++j)
      EXPECT_EQ(r.position_of_node[4 * k + j] % 2, r.position_of_node[4 * k] % 2);
  const nlohmann::json j = optimize_result_to_json(r);
  EXPECT_EQ(j["target"], "placement");
  EXPECT_EQ(j["placement"], "metis");
  EXPECT_EQ(j["node_groups"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["gain"].get<double>(), r.baseline_time_s / r.time_s);
}

TEST(PlacementTarget, NameRoundTrips) {
  EXPECT_EQ(parse_optimize_target("placement", "t"), OptimizeTarget::Placement);
  EXPECT_STREQ(optimize_target_name(OptimizeTarget::Placement), "placement");
  EXPECT_EQ(parse_optimize_target("alternating", "t"), OptimizeTarget::Alternating);
  EXPECT_THROW(parse_optimize_target("nowhere", "t"), BadInput);
}

}  // namespace
}  // namespace toposweep::opt
