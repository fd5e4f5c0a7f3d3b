// One frontier per model: a hand-worked two-model space in which every point of the "large" model
// is dominated by a point of the "small" one, so a pooled frontier would hide "large" entirely.
#include "toposweep/sweep/frontier_groups.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <random>

#include "toposweep/sweep/columns.hpp"
#include "toposweep/sweep/engine.hpp"
#include "toposweep/sweep/results_file.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::sweep {
namespace {

class MpiEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    int init = 0;
    MPI_Initialized(&init);
    if (!init) MPI_Init(nullptr, nullptr);
  }
};
const auto* const kMpiEnv = ::testing::AddGlobalTestEnvironment(new MpiEnvironment);

KeyRegistry registry() {
  return KeyRegistry(
      {{"model.name", "", ""}, {"topology.degree", "", ""}, {"sweep.*", "", ""}, {"space.*", "", ""}});
}

// Sub-spaces in name order: base_only (indices 0, 1: degree 5, 6, the base model "small"), then
// both (indices 2..9: model.name is its first axis, so 2..5 are small d1..d4, 6..9 large d1..d4).
const char* kTwoModels = R"(
[model]
name = small
[space.both]
model.name = small, large
topology.degree = 1, 2, 3, 4
[space.base_only]
topology.degree = 5, 6
)";

Space space_of(const std::string& text) {
  Config c;
  load_ini_text(c, text, "models.ini");
  return parse_space(c, registry());
}

// small: cost d, time 10/d, except d2 at time 20 (dominated by d1 = (1, 10)).
// large: cost d + 10, time 100/d, except d3 at time 200 (dominated by d1 = (11, 100)).
// Every large point (cost >= 11, time >= 25) is dominated by small d6 = (6, 1.67).
PointResult two_models(const Config& p) {
  const double d = static_cast<double>(p.get_int("topology.degree"));
  const bool large = p.get_string("model.name") == "large";
  PointResult r;
  r.status = PointStatus::Evaluated;
  r.cost_usd = large ? d + 10 : d;
  r.iteration_time_s = large ? (d == 3 ? 200 : 100 / d) : (d == 2 ? 20 : 10 / d);
  return r;
}

// Worked out by hand from the values above.
const std::vector<std::uint64_t> kSmallFront = {0, 1, 2, 4, 5};  // small d5, d6, d1, d3, d4
const std::vector<std::uint64_t> kPerModel = {0, 1, 2, 4, 5, 6, 7, 9};
const std::vector<std::uint64_t> kPooled = kSmallFront;

const std::vector<frontier::Objective> kCostTime = {{"cost_usd", false}, {"iteration_time_s", false}};

std::vector<PointRecord> evaluate_all(const Space& space) {
  std::vector<PointRecord> rows;
  for (std::uint64_t i = 0; i < space.size(); ++i) rows.push_back(evaluate_point(space, i, two_models));
  return rows;
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "groups_" + std::to_string(::getpid()) + "_" + name;
}

SweepOptions options(const Space& space, const std::string& out, const std::string& keep,
                     const std::string& frontier_by) {
  SweepOptions o;
  o.out_path = out;
  o.keep = parse_keep(keep, "test");
  o.begin = 0;
  o.end = space.size();
  o.objectives = kCostTime;
  o.frontier_by = frontier_by;
  o.progress_interval_s = 1e9;
  o.chunk_seconds = 1e9;  // chunks of max_chunk_points: several per run
  o.max_chunk_points = 3;
  return o;
}

const Logger kQuiet(LogLevel::Quiet);
const auto kNever = [] { return false; };

TEST(PointGroups, APointTakesItsAxisValueElseTheBaseModel) {
  const Space space = space_of(kTwoModels);
  ASSERT_EQ(space.size(), 10u);
  const PointGroups g(space, "model.name");
  EXPECT_FALSE(g.pooled());
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g.label(0), "large");  // labels in order
  EXPECT_EQ(g.label(1), "small");
  // base_only does not sweep model.name: its points are the base's "small", the same group as
  // the points of `both` that name "small" explicitly.
  for (std::uint64_t i : {0, 1, 2, 3, 4, 5}) EXPECT_EQ(g.label(g.of(i)), "small") << i;
  for (std::uint64_t i : {6, 7, 8, 9}) EXPECT_EQ(g.label(g.of(i)), "large") << i;
  const PointGroups pooled(space, "none");
  EXPECT_TRUE(pooled.pooled());
  EXPECT_EQ(pooled.size(), 1u);
  EXPECT_EQ(pooled.key(), "none");
  for (std::uint64_t i = 0; i < space.size(); ++i) EXPECT_EQ(pooled.of(i), 0u);
}

TEST(PointGroups, OneModelIsOneGroup) {
  // The axis names only the base's model; and a space that never mentions model.name.
  const PointGroups same(
      space_of("[model]\nname = small\n[space.a]\nmodel.name = small\ntopology.degree = 1, 2\n"
               "[space.b]\ntopology.degree = 3\n"),
      "model.name");
  EXPECT_EQ(same.size(), 1u);
  const Space none = space_of("[space.a]\ntopology.degree = 1, 2\n");
  const PointGroups unset(none, "model.name");
  EXPECT_EQ(unset.size(), 1u);
  EXPECT_EQ(unset.label(0), "");
  // Every sub-space sweeps model.name: the base model is no group.
  const PointGroups swept(
      space_of("[model]\nname = small\n[space.a]\nmodel.name = x, y\ntopology.degree = 1\n"), "model.name");
  ASSERT_EQ(swept.size(), 2u);
  EXPECT_EQ(swept.label(0), "x");
  EXPECT_EQ(swept.label(1), "y");
}

TEST(FrontierBy, ParsesModelNameAndNoneOnly) {
  EXPECT_EQ(parse_frontier_by("model.name", "k"), "model.name");
  EXPECT_EQ(parse_frontier_by(" none ", "k"), "none");
  EXPECT_THROW(parse_frontier_by("topology.kind", "k"), BadInput);
  EXPECT_THROW(parse_frontier_by("", "k"), BadInput);
}

TEST(GroupedFrontier, KeepsTheModelAPooledFrontierHides) {
  const Space space = space_of(kTwoModels);
  const auto rows = evaluate_all(space);
  EXPECT_EQ(grouped_frontier_indices(space, rows, kCostTime, PointGroups(space, "model.name")), kPerModel);
  EXPECT_EQ(grouped_frontier_indices(space, rows, kCostTime, PointGroups(space, "none")), kPooled);
  EXPECT_EQ(frontier_indices(space, rows, kCostTime), kPooled);
}

TEST(GroupedFrontier, WithOneModelItIsThePooledFrontier) {
  // Random values with ties on a space without model.name: identical to frontier_indices.
  const Space space = space_of(
      "[space.a]\ntopology.degree = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16\n"
      "[space.b]\ntopology.degree = 1,2,3,4,5,6,7,8\n");
  std::mt19937_64 rng(20261123);
  std::uniform_int_distribution<int> small(1, 6);
  std::vector<PointRecord> rows(space.size());
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    rows[i].index = i;
    rows[i].result.status = i % 7 == 3 ? PointStatus::Infeasible : PointStatus::Evaluated;
    rows[i].result.cost_usd = small(rng);
    rows[i].result.iteration_time_s = small(rng);
  }
  const auto pooled = frontier_indices(space, rows, kCostTime);
  ASSERT_GE(pooled.size(), 2u);
  EXPECT_EQ(grouped_frontier_indices(space, rows, kCostTime, PointGroups(space, "model.name")), pooled);
}

TEST(GroupedFrontier, SweepWritesThePerModelFrontierWithEveryKeepMode) {
  const Space space = space_of(kTwoModels);
  for (const char* keep : {"all", "frontier"}) {
    for (const char* by : {"model.name", "none"}) {
      SCOPED_TRACE(std::string(keep) + " " + by);
      const std::string out = temp_path(std::string(keep) + "_" + by + ".h5");
      const auto s =
          run_sweep(space, options(space, out, keep, by), two_models, MPI_COMM_SELF, kQuiet, kNever);
      const auto& want = std::string(by) == "none" ? kPooled : kPerModel;
      ResultsReader r(out);
      EXPECT_EQ(r.frontier(), want);
      EXPECT_EQ(r.frontier_group_by(), by);
      std::vector<std::uint64_t> printed;
      for (const auto& row : s.frontier_rows) printed.push_back(row.index);
      EXPECT_EQ(printed, want);
      if (std::string(keep) == "frontier") {
        std::vector<std::uint64_t> stored;
        for (const auto& row : r.records()) stored.push_back(row.index);
        EXPECT_EQ(stored, want);
      } else {
        EXPECT_EQ(r.rows(), space.size());
      }
    }
  }
}

TEST(GroupedFrontier, MergeKeepsModelsApartAndRefusesAPooledFrontierSlice) {
  const Space space = space_of(kTwoModels);
  // Two --keep frontier slices, [0, 5) and [5, 10), per model.
  std::vector<std::string> slices;
  for (int k = 0; k < 2; ++k) {
    auto o = options(space, temp_path("slice" + std::to_string(k) + ".h5"), "frontier", "model.name");
    o.begin = k == 0 ? 0 : 5;
    o.end = k == 0 ? 5 : 10;
    o.slice = std::to_string(k) + "/2";
    run_sweep(space, o, two_models, MPI_COMM_SELF, kQuiet, kNever);
    slices.push_back(o.out_path);
  }
  auto merged = options(space, temp_path("merged.h5"), "frontier", "model.name");
  merge_slices(space, slices, merged);
  EXPECT_EQ(ResultsReader(merged.out_path).frontier(), kPerModel);
  // Per-model slices hold the pooled frontier too.
  auto pooled = options(space, temp_path("merged_pooled.h5"), "frontier", "none");
  merge_slices(space, slices, pooled);
  EXPECT_EQ(ResultsReader(pooled.out_path).frontier(), kPooled);
  EXPECT_EQ(ResultsReader(pooled.out_path).frontier_group_by(), "none");
  // A pooled frontier slice lost large's points: it cannot give a per-model merge.
  auto o = options(space, temp_path("pooled_slice.h5"), "frontier", "none");
  o.begin = 5;
  o.slice = "1/2";
  run_sweep(space, o, two_models, MPI_COMM_SELF, kQuiet, kNever);
  EXPECT_THROW(merge_slices(space, {slices[0], o.out_path}, merged), BadInput);
}

}  // namespace
}  // namespace toposweep::sweep
