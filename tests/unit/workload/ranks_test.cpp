// The N-axis rank grid: rank <-> coordinates, the groups along each axis, and the 3-D groups
// hand-worked from Megatron's order rank = t + tp*(d + dp*p).
#include "toposweep/workload/ranks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/model_library.hpp"

namespace toposweep {
namespace {

using Groups = std::vector<std::vector<std::uint32_t>>;

// Shapes over every axis, cp and ep included (no strategy sets them yet; the grid must not care).
std::vector<AxisGrid> shapes() {
  return {AxisGrid{},
          AxisGrid{{Axis::Tp, 2}, {Axis::Dp, 2}, {Axis::Pp, 2}},
          AxisGrid{{Axis::Tp, 4}, {Axis::Dp, 3}, {Axis::Pp, 2}},
          AxisGrid{{Axis::Dp, 5}},
          AxisGrid{{Axis::Tp, 2}, {Axis::Cp, 3}, {Axis::Ep, 2}, {Axis::Dp, 2}, {Axis::Pp, 3}},
          AxisGrid{{Axis::Cp, 4}, {Axis::Pp, 2}}};
}

TEST(AxisGrid, TableIsInMegatronCoreOrder) {
  std::vector<std::string_view> names;
  for (const AxisInfo& a : kAxes) names.push_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string_view>{"tp", "cp", "ep", "dp", "pp"}));
  EXPECT_EQ(axis_name(Axis::Dp), "dp");
}

TEST(AxisGrid, RankAndCoordsRoundTripOverEveryRank) {
  for (const AxisGrid& g : shapes()) {
    std::uint32_t product = 1;
    for (const AxisInfo& a : kAxes) product *= g.size(a.axis);
    ASSERT_EQ(g.gpus(), product);
    for (std::uint32_t r = 0; r < g.gpus(); ++r) {
      const AxisCoords c = g.coords(r);
      for (const AxisInfo& a : kAxes) EXPECT_LT(c[a.axis], g.size(a.axis));
      EXPECT_EQ(g.rank(c), r);
    }
  }
}

TEST(AxisGrid, MatchesTheThreeAxisFormula) {
  // rank = t + tp*(d + dp*p), the order the plans were built in before the grid.
  const std::uint32_t tp = 4, dp = 3, pp = 2;
  const AxisGrid g{{Axis::Tp, tp}, {Axis::Dp, dp}, {Axis::Pp, pp}};
  for (std::uint32_t p = 0; p < pp; ++p)
    for (std::uint32_t d = 0; d < dp; ++d)
      for (std::uint32_t t = 0; t < tp; ++t) {
        EXPECT_EQ(g.rank({{Axis::Tp, t}, {Axis::Dp, d}, {Axis::Pp, p}}), t + tp * (d + dp * p));
        EXPECT_EQ(g.coords(t + tp * (d + dp * p)),
                  g.coords(g.rank({{Axis::Pp, p}, {Axis::Tp, t}, {Axis::Dp, d}})));
      }
  // Five axes: t + tp*(c + cp*(e + ep*(d + dp*p))).
  const AxisGrid five{{Axis::Tp, 2}, {Axis::Cp, 3}, {Axis::Ep, 2}, {Axis::Dp, 2}, {Axis::Pp, 3}};
  EXPECT_EQ(five.rank({{Axis::Tp, 1}, {Axis::Cp, 2}, {Axis::Ep, 1}, {Axis::Dp, 1}, {Axis::Pp, 2}}),
            1 + 2 * (2 + 3 * (1 + 2 * (1 + 2 * 2))));
  EXPECT_EQ(five.stride(Axis::Tp), 1u);
  EXPECT_EQ(five.stride(Axis::Dp), 12u);
  EXPECT_EQ(five.stride(Axis::Pp), 24u);
}

TEST(AxisGrid, GroupsOfEachAxisPartitionTheRanks) {
  for (const AxisGrid& g : shapes())
    for (const AxisInfo& a : kAxes) {
      const GroupSet gs = g.groups(a.axis);
      EXPECT_EQ(gs.axis, a.axis);
      ASSERT_EQ(gs.groups.size(), g.gpus() / g.size(a.axis));
      std::vector<std::uint32_t> seen;
      for (const auto& group : gs.groups) {
        ASSERT_EQ(group.size(), g.size(a.axis));
        for (std::uint32_t i = 0; i < group.size(); ++i) {
          // Members differ only on `a`, at index i.
          AxisCoords expect = g.coords(group[0]);
          expect[a.axis] = i;
          EXPECT_EQ(g.coords(group[i]), expect);
        }
        seen.insert(seen.end(), group.begin(), group.end());
      }
      std::sort(seen.begin(), seen.end());
      for (std::uint32_t r = 0; r < g.gpus(); ++r) EXPECT_EQ(seen.at(r), r);
      // Pinning one other axis keeps exactly the groups at that index.
      for (const AxisInfo& other : kAxes) {
        if (other.axis == a.axis) continue;
        std::size_t total = 0;
        for (std::uint32_t i = 0; i < g.size(other.axis); ++i) {
          const GroupSet pinned = g.groups(a.axis, {{other.axis, i}});
          total += pinned.groups.size();
          for (const auto& group : pinned.groups)
            for (std::uint32_t r : group) EXPECT_EQ(g.coords(r)[other.axis], i);
        }
        EXPECT_EQ(total, gs.groups.size());
      }
    }
}

TEST(AxisGrid, ThreeAxisGroupsHandWorked) {
  // dp 2, tp 2, pp 2: ranks 0-3 are stage 0, 4-7 stage 1.
  const AxisGrid g{{Axis::Tp, 2}, {Axis::Dp, 2}, {Axis::Pp, 2}};
  EXPECT_EQ(g.groups(Axis::Tp, {{Axis::Pp, 0}}).groups, (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(g.groups(Axis::Tp, {{Axis::Pp, 1}}).groups, (Groups{{4, 5}, {6, 7}}));
  EXPECT_EQ(g.groups(Axis::Dp, {{Axis::Pp, 0}}).groups, (Groups{{0, 2}, {1, 3}}));
  EXPECT_EQ(g.groups(Axis::Dp, {{Axis::Pp, 1}}).groups, (Groups{{4, 6}, {5, 7}}));
  EXPECT_EQ(g.groups(Axis::Pp).groups, (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(g.pairs(Axis::Pp, 0, 1).groups, (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(g.pairs(Axis::Pp, 1, 0).groups, (Groups{{4, 0}, {5, 1}, {6, 2}, {7, 3}}));
  // tp 2, dp 3, pp 3: stage 1 is ranks 6-11; the sends from stage 2 back to stage 1.
  const AxisGrid h{{Axis::Tp, 2}, {Axis::Dp, 3}, {Axis::Pp, 3}};
  EXPECT_EQ(h.groups(Axis::Tp, {{Axis::Pp, 1}}).groups, (Groups{{6, 7}, {8, 9}, {10, 11}}));
  EXPECT_EQ(h.groups(Axis::Dp, {{Axis::Pp, 1}}).groups, (Groups{{6, 8, 10}, {7, 9, 11}}));
  EXPECT_EQ(h.pairs(Axis::Pp, 2, 1).groups, (Groups{{12, 6}, {13, 7}, {14, 8}, {15, 9}, {16, 10}, {17, 11}}));
  EXPECT_EQ(h.groups(Axis::Tp, {{Axis::Pp, 2}, {Axis::Dp, 1}}).groups, (Groups{{14, 15}}));
}

TEST(AxisGrid, PerLayerModelParallelGroups) {
  EXPECT_EQ(model_parallel_groups(2, 6).groups, (Groups{{0, 1}, {2, 3}, {4, 5}}));
  EXPECT_EQ(shard_replica_groups(2, 6).groups, (Groups{{0, 2, 4}, {1, 3, 5}}));
  EXPECT_EQ(model_parallel_groups(4, 4).groups, (Groups{{0, 1, 2, 3}}));
  EXPECT_EQ(shard_replica_groups(1, 3).groups, (Groups{{0, 1, 2}}));
}

TEST(AxisGrid, CommunicationTasksCarryTheirAxis) {
  // Each purpose's group sets come from the grid along its axis: TP collectives along tp, DP
  // along dp, pipeline sends and the tied-embedding sync along pp (its purpose says data
  // parallel: the axis is the finer fact).
  const Workload w = make_workload(builtin_model("gpt3-1.3b"), builtin_device("a100"), "fp16", 8);
  Strategy s;
  s.dp = s.tp = s.pp = 2;
  s.microbatches = 2;
  const auto plan = plan_iteration(w, s);
  int seen[3] = {0, 0, 0};
  for (const auto& t : plan.graph.tasks) {
    if (t.kind == TaskKind::Compute) continue;
    const std::optional<Axis> axis = plan.graph.group_sets.at(t.group_set).axis;
    if (plan.graph.labels[t.label] == "embedding_sync") {
      // Counted as data-parallel time, but it runs between the first and last stage.
      EXPECT_EQ(axis, Axis::Pp);
    } else if (t.purpose == CommPurpose::TensorParallel) {
      EXPECT_EQ(axis, Axis::Tp);
      ++seen[0];
    } else if (t.purpose == CommPurpose::DataParallel) {
      EXPECT_EQ(axis, Axis::Dp);
      ++seen[1];
    } else {
      EXPECT_EQ(axis, Axis::Pp) << plan.graph.labels[t.label];
      ++seen[2];
    }
  }
  EXPECT_GT(seen[0], 0);
  EXPECT_GT(seen[1], 0);
  EXPECT_GT(seen[2], 0);
}

}  // namespace
}  // namespace toposweep
