// The exact strategy search split over a team (opt/search_team.hpp) in rounds: with 2, 3 and 4
// ranks (threads here, each with its own scorer; tests/mpi/optimize_mpi_test.sh runs real MPI
// ranks), every rank returns the serial search's result: the same top k, times and counts.
#include <gtest/gtest.h>

#include <barrier>
#include <thread>
#include <vector>

#include "test_config.hpp"
#include "toposweep/opt/strategy_search.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/workload/device.hpp"
#include "toposweep/workload/model_library.hpp"

namespace toposweep::opt {
namespace {

// Ranks as threads: collectives meet at a barrier.
class ThreadTeam {
 public:
  explicit ThreadTeam(std::uint32_t size) : size_(size), sync_(size), slots_(size), values_(size) {}
  class Member final : public SearchTeam {
   public:
    Member(ThreadTeam& team, std::uint32_t rank) : team_(&team), rank_(rank) {}
    std::uint32_t rank() const override { return rank_; }
    std::uint32_t size() const override { return team_->size_; }
    std::vector<SearchOutcome> all_gather(const std::vector<SearchOutcome>& mine) override {
      team_->slots_[rank_] = mine;
      team_->sync_.arrive_and_wait();
      std::vector<SearchOutcome> all;
      for (const auto& slot : team_->slots_) all.insert(all.end(), slot.begin(), slot.end());
      team_->sync_.arrive_and_wait();  // nobody writes its slot again before everyone has read
      return all;
    }
    double all_max(double value) override {
      team_->values_[rank_] = value;
      team_->sync_.arrive_and_wait();
      double out = value;
      for (double v : team_->values_) out = std::max(out, v);
      team_->sync_.arrive_and_wait();
      return out;
    }

   private:
    ThreadTeam* team_;
    std::uint32_t rank_;
  };

 private:
  std::uint32_t size_;
  std::barrier<> sync_;
  std::vector<std::vector<SearchOutcome>> slots_;
  std::vector<double> values_;
};

TEST(SearchRounds, EveryRankReturnsTheSerialResult) {
  const Config config = testing::make_config({{"topology.kind", "switch"},
                                              {"topology.servers", "4"},
                                              {"server.gpus", "4"},
                                              {"topology.link_bandwidth", "25Gbps"}});
  const Network net = network_from_config(config);
  const sim::SimOptions options = sim::sim_options_from_config(config);
  TransformerShape shape;
  shape.layers = 12, shape.hidden = 512, shape.heads = 8, shape.kv_heads = 8, shape.ffn_hidden = 2048;
  shape.seq_len = 512, shape.vocab = 4000, shape.max_positions = 512;
  const Workload w = make_workload(transformer_model("small", shape), builtin_device("a100"), "fp16", 64);
  StrategySpace space;
  space.max_microbatches = 16;
  for (BoundKind bound : {BoundKind::Compute, BoundKind::Communication}) {
    StrategyScorer serial_scorer(w, net, options);
    const auto serial = exhaustive_strategy_search(serial_scorer, w, space, 6, {}, nullptr, bound);
    ASSERT_EQ(serial.top.size(), 6u);
    ASSERT_GT(serial.pruned, 0u);
    for (std::uint32_t ranks : {2u, 3u, 4u}) {
      ThreadTeam team(ranks);
      std::vector<StrategySearchResult> results(ranks);
      std::vector<std::thread> threads;
      for (std::uint32_t r = 0; r < ranks; ++r)
        threads.emplace_back([&, r] {
          ThreadTeam::Member me(team, r);
          StrategyScorer scorer(w, net, options);
          results[r] = exhaustive_strategy_search(scorer, w, space, 6, {}, &me, bound);
        });
      for (auto& t : threads) t.join();
      for (std::uint32_t r = 0; r < ranks; ++r) {
        const std::string at = std::to_string(ranks) + " ranks, rank " + std::to_string(r);
        const auto& got = results[r];
        ASSERT_EQ(got.top.size(), serial.top.size()) << at;
        for (std::size_t i = 0; i < got.top.size(); ++i) {
          EXPECT_EQ(got.top[i].iteration_time_s, serial.top[i].iteration_time_s) << at << " top " << i;
          EXPECT_TRUE(got.top[i].strategy == serial.top[i].strategy) << at << " top " << i;
        }
        EXPECT_EQ(got.evaluated, serial.evaluated) << at;
        EXPECT_EQ(got.pruned, serial.pruned) << at;
        EXPECT_EQ(got.infeasible, serial.infeasible) << at;
        EXPECT_EQ(got.simulations, serial.simulations) << at;
        EXPECT_GE(got.simulated_by_team, got.simulations) << at;
      }
    }
  }
}

}  // namespace
}  // namespace toposweep::opt
