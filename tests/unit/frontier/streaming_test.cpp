#include "toposweep/frontier/streaming.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "toposweep/frontier/pareto.hpp"

namespace toposweep::frontier {
namespace {

std::vector<std::uint64_t> sorted(std::vector<std::uint64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Same hand-worked set as the batch test: (1,5) (2,3) (2,3) (3,3) (4,1) (5,0.5) (5,2) (0.5,9)
// (6,0.5); frontier rows 0,1,2,4,5,7 whatever the order of arrival.
TEST(StreamingFrontier, HandWorkedSetInTwoOrders) {
  const std::vector<std::pair<double, double>> pts = {{1, 5},   {2, 3}, {2, 3},   {3, 3},  {4, 1},
                                                      {5, 0.5}, {5, 2}, {0.5, 9}, {6, 0.5}};
  StreamingFrontier forward(2), backward(2);
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const double v[2] = {pts[i].first, pts[i].second};
    forward.offer(i, v);
  }
  for (std::size_t i = pts.size(); i-- > 0;) {
    const double v[2] = {pts[i].first, pts[i].second};
    backward.offer(i, v);
  }
  const std::vector<std::uint64_t> expected = {0, 1, 2, 4, 5, 7};
  EXPECT_EQ(sorted(forward.ids()), expected);
  EXPECT_EQ(sorted(backward.ids()), expected);
}

TEST(StreamingFrontier, RejectsDominatedAndNaNAndEvictsDominated) {
  StreamingFrontier f(2);
  const double a[2] = {2, 2}, worse[2] = {3, 2}, nan[2] = {NAN, 0}, better[2] = {1, 1};
  EXPECT_TRUE(f.offer(1, a));
  EXPECT_FALSE(f.offer(2, worse));
  EXPECT_FALSE(f.offer(3, nan));
  EXPECT_TRUE(f.offer(4, better));
  EXPECT_EQ(f.ids(), std::vector<std::uint64_t>{4});
}

// Random sets with many ties and duplicates (values on a small grid), 2 to 4 objectives, offered
// in random order: equals the O(N^2) brute force over the whole set.
TEST(StreamingFrontier, EqualsBruteForceOnRandomSetsWithTies) {
  std::mt19937_64 rng(8);
  for (std::size_t dims = 2; dims <= 4; ++dims)
    for (int trial = 0; trial < 30; ++trial) {
      const std::size_t n = 1 + rng() % 200;
      ObjectiveMatrix m;
      m.rows = n;
      m.dims = dims;
      for (std::size_t i = 0; i < n * dims; ++i) m.values.push_back(static_cast<double>(rng() % 6));
      std::vector<std::size_t> order(n);
      for (std::size_t i = 0; i < n; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), rng);
      StreamingFrontier f(dims);
      for (std::size_t r : order) f.offer(r, std::span<const double>(m.values.data() + r * dims, dims));
      std::vector<std::uint64_t> expected;
      for (std::size_t r : pareto_front_brute_force(m)) expected.push_back(r);
      EXPECT_EQ(sorted(f.ids()), expected) << "dims " << dims << " trial " << trial;
    }
}

}  // namespace
}  // namespace toposweep::frontier
