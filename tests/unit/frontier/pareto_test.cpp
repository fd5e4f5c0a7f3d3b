#include "toposweep/frontier/pareto.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "toposweep/util/error.hpp"

namespace toposweep::frontier {
namespace {

ObjectiveMatrix matrix(std::size_t dims, std::vector<double> v) {
  ObjectiveMatrix m;
  m.dims = dims;
  m.rows = v.size() / dims;
  m.values = std::move(v);
  return m;
}

using Rows = std::vector<std::size_t>;

TEST(ParseObjectives, SensesAndErrors) {
  auto o = parse_objectives("cost_usd, max:samples_per_s,min:iteration_time_s", "key sweep.objectives");
  ASSERT_EQ(o.size(), 3u);
  EXPECT_EQ(o[0].field, "cost_usd");
  EXPECT_FALSE(o[0].maximize);
  EXPECT_EQ(o[1].field, "samples_per_s");
  EXPECT_TRUE(o[1].maximize);
  EXPECT_FALSE(o[2].maximize);
  EXPECT_EQ(spell_objectives(o), "cost_usd,max:samples_per_s,iteration_time_s");
  EXPECT_THROW(parse_objectives("", "x"), BadInput);
  EXPECT_THROW(parse_objectives("a,a", "x"), BadInput);
  EXPECT_THROW(parse_objectives("best:a", "x"), BadInput);
  EXPECT_THROW(parse_objectives("max:", "x"), BadInput);
}

// Hand-worked: (1,5) (2,3) (2,3) (3,3) (4,1) (5,0.5) (5,2) (0.5, 9) (6, 0.5)
// Frontier: (0.5,9) (1,5) both (2,3) (4,1) (5,0.5). (3,3) is beaten by (2,3); (5,2) by (4,1);
// (6,0.5) by (5,0.5).
TEST(Pareto2D, HandWorkedWithTiesAndDuplicates) {
  auto m = matrix(2, {1, 5, 2, 3, 2, 3, 3, 3, 4, 1, 5, 0.5, 5, 2, 0.5, 9, 6, 0.5});
  const Rows expected = {0, 1, 2, 4, 5, 7};
  EXPECT_EQ(pareto_front_2d(m), expected);
  EXPECT_EQ(pareto_front_sort_filter(m), expected);
  EXPECT_EQ(pareto_front_brute_force(m), expected);
}

TEST(Pareto2D, NaNRowsDoNotTakePart) {
  auto m = matrix(2, {NAN, 0, 1, 1, 0, NAN, 2, 2});
  EXPECT_EQ(pareto_front(m), (Rows{1}));
}

TEST(Pareto, MaximisedObjectiveIsNegated) {
  // Minimise cost, maximise throughput: (cost 1, thr 1), (cost 2, thr 3), (cost 2, thr 2), (3, 3).
  std::vector<Objective> obj = {{"cost", false}, {"thr", true}};
  auto m = oriented_values({{1, 2, 2, 3}, {1, 3, 2, 3}}, obj);
  EXPECT_EQ(pareto_front(m), (Rows{0, 1}));
}

TEST(Pareto, OneObjectiveKeepsAllMinima) {
  auto m = matrix(1, {3, 1, 2, 1, 5});
  EXPECT_EQ(pareto_front(m), (Rows{1, 3}));
}

TEST(Pareto, AllIdenticalRowsStayTogether) {
  auto m = matrix(3, {1, 2, 3, 1, 2, 3, 1, 2, 3});
  EXPECT_EQ(pareto_front(m), (Rows{0, 1, 2}));
}

TEST(Pareto, ThreeObjectivesHandWorked) {
  // (1,1,9) (9,1,1) (1,9,1) are mutually non-dominated; (2,2,9) is beaten by (1,1,9);
  // (1,1,9) duplicate stays; (5,5,5) is non-dominated.
  auto m = matrix(3, {1, 1, 9, 9, 1, 1, 1, 9, 1, 2, 2, 9, 1, 1, 9, 5, 5, 5});
  EXPECT_EQ(pareto_front(m), (Rows{0, 1, 2, 4, 5}));
}

// Random sets on a small integer grid force many ties and duplicates; compare to brute force.
TEST(Pareto, MatchesBruteForceOnRandomSetsWithTies) {
  std::mt19937_64 rng(20261122);
  for (std::size_t dims = 1; dims <= 4; ++dims) {
    for (int trial = 0; trial < 60; ++trial) {
      std::uniform_int_distribution<int> grid(0, trial % 2 == 0 ? 4 : 50);
      std::uniform_int_distribution<std::size_t> count(0, 300);
      const std::size_t n = count(rng);
      std::vector<double> v(n * dims);
      for (auto& x : v) x = grid(rng);
      // A few NaNs too.
      if (n > 3) v[(n / 2) * dims] = NAN;
      auto m = matrix(dims, v);
      const auto expected = pareto_front_brute_force(m);
      EXPECT_EQ(pareto_front(m), expected) << "dims " << dims << " trial " << trial;
      EXPECT_EQ(pareto_front_sort_filter(m), expected);
      if (dims == 2) {
        EXPECT_EQ(pareto_front_2d(m), expected);
      }
    }
  }
}

TEST(Pareto, BruteForceItselfOnAnAntichainKeepsEverything) {
  // Points on x + y = 10 are mutually non-dominated: a check that the reference is not trivially
  // dropping rows.
  std::vector<double> v;
  for (int i = 0; i <= 10; ++i) {
    v.push_back(i);
    v.push_back(10 - i);
  }
  auto m = matrix(2, v);
  EXPECT_EQ(pareto_front_brute_force(m).size(), 11u);
  EXPECT_EQ(pareto_front_2d(m).size(), 11u);
}

}  // namespace
}  // namespace toposweep::frontier
