// --keep frontier on one rank: the output equals the frontier part of a --keep all run, the status
// counts survive, the journal holds done ranges and frontier rows only, and an interrupted run
// resumes to the clean run's file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>

#include "toposweep/frontier/streaming.hpp"
#include "toposweep/sweep/columns.hpp"
#include "toposweep/sweep/engine.hpp"
#include "toposweep/sweep/results_file.hpp"
#include "toposweep/sweep/synthetic.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::sweep {
namespace {
namespace fs = std::filesystem;

class MpiEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    int init = 0;
    MPI_Initialized(&init);
    if (!init) MPI_Init(nullptr, nullptr);
  }
};
const auto* const kMpiEnv = ::testing::AddGlobalTestEnvironment(new MpiEnvironment);

// 20·20·20 = 8,000 points; the synthetic evaluator's values are hash-scattered, so the frontier
// of (cost, time) over them is a few dozen rows at most.
Space big_space() {
  std::string text = "[space.cube]\n";
  std::string list;
  for (int i = 1; i <= 20; ++i) {
    if (i > 1) list += ',';
    list += std::to_string(i);
  }
  text +=
      "topology.degree = " + list + "\ntopology.servers = " + list + "\ntopology.dim_count = " + list + "\n";
  Config c;
  load_ini_text(c, text, "keep.ini");
  return parse_space(c, KeyRegistry({{"topology.degree", "", ""},
                                     {"topology.servers", "", ""},
                                     {"topology.dim_count", "", ""},
                                     {"space.*", "", ""}}));
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "keepfront_" + std::to_string(::getpid()) + "_" + name;
}

SweepOptions options(const Space& space, const std::string& out, const std::string& keep) {
  SweepOptions o;
  o.out_path = out;
  o.keep = parse_keep(keep, "test");
  o.begin = 0;
  o.end = space.size();
  o.objectives = {{"cost_usd", false}, {"iteration_time_s", false}};
  o.progress_interval_s = 1e9;
  o.chunk_seconds = 1e9;  // chunk size set by max_chunk_points: 1 point, then 500 each
  o.max_chunk_points = 500;
  return o;
}

Evaluator counting(std::atomic<int>* calls) {
  return [calls](const Config& p) {
    ++*calls;
    return synthetic_point(p);
  };
}

const Logger kQuiet(LogLevel::Quiet);
const auto kNever = [] { return false; };

std::uint64_t dir_bytes(const std::string& dir) {
  std::uint64_t n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".log") n += fs::file_size(e.path());
  return n;
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

TEST(KeepFrontier, PointsAreTheKeepAllRunsFrontierRowsAndCountsSurvive) {
  const Space space = big_space();
  ASSERT_EQ(space.size(), 8000u);
  const std::string all = temp_path("all.h5"), front = temp_path("front.h5");
  std::atomic<int> calls{0};
  const auto sa =
      run_sweep(space, options(space, all, "all"), counting(&calls), MPI_COMM_SELF, kQuiet, kNever);
  const auto sf =
      run_sweep(space, options(space, front, "frontier"), counting(&calls), MPI_COMM_SELF, kQuiet, kNever);

  // Counts derived independently: evaluate every point directly.
  std::uint64_t expect[3] = {0, 0, 0};
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    try {
      ++expect[static_cast<int>(synthetic_point(space.point_config(i)).status)];
    } catch (const std::exception&) {
      ++expect[2];
    }
  }
  ASSERT_GT(expect[1], 0u);
  ASSERT_GT(expect[2], 0u);
  EXPECT_EQ(sf.evaluated, expect[0]);
  EXPECT_EQ(sf.infeasible, expect[1]);
  EXPECT_EQ(sf.failed, expect[2]);
  EXPECT_EQ(sa.evaluated, expect[0]);

  ResultsReader a(all), b(front);
  EXPECT_EQ(b.root_u64("points_evaluated"), expect[0]);
  EXPECT_EQ(b.root_u64("points_infeasible"), expect[1]);
  EXPECT_EQ(b.root_u64("points_failed"), expect[2]);
  EXPECT_EQ(b.root_string("keep"), "frontier");
  const auto f = a.frontier();
  ASSERT_FALSE(f.empty());
  EXPECT_LT(f.size(), 100u);
  EXPECT_EQ(b.frontier(), f);
  const auto all_rows = a.records();
  const auto rows = b.records();
  ASSERT_EQ(rows.size(), f.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].index, f[i]);
    const auto& want = all_rows[f[i]].result;
    EXPECT_TRUE(same_bits(rows[i].result.cost_usd, want.cost_usd));
    EXPECT_TRUE(same_bits(rows[i].result.iteration_time_s, want.iteration_time_s));
    EXPECT_EQ(rows[i].result.dp, want.dp);
  }
  EXPECT_EQ(sf.frontier_rows.size(), f.size());
  EXPECT_FALSE(fs::exists(front + ".journal"));
}

TEST(KeepFrontier, JournalHoldsRangesAndFrontierRowsOnlyAndResumesToTheCleanFile) {
  const Space space = big_space();
  const std::string clean = temp_path("clean.h5"), out = temp_path("resumed.h5");
  std::atomic<int> calls{0};
  run_sweep(space, options(space, clean, "frontier"), counting(&calls), MPI_COMM_SELF, kQuiet, kNever);

  // Interrupt after 6,000 points.
  calls = 0;
  EXPECT_THROW(run_sweep(space, options(space, out, "frontier"), counting(&calls), MPI_COMM_SELF, kQuiet,
                         [&] { return calls.load() >= 6000; }),
               Interrupted);
  const std::string dir = journal_dir_for(out);
  const auto j = read_journal_contents(dir);
  // The rows journaled are at most the points that ever joined a streaming frontier fed in index
  // order (one rank evaluates in index order), worked out here independently.
  frontier::StreamingFrontier replay(2);
  std::uint64_t joins = 0;
  for (std::uint64_t i = 0; i < 6000; ++i) {
    PointResult r;
    try {
      r = synthetic_point(space.point_config(i));
    } catch (const std::exception&) {
      continue;
    }
    if (r.status != PointStatus::Evaluated) continue;
    const double v[2] = {r.cost_usd, r.iteration_time_s};
    if (replay.offer(i, v)) ++joins;
  }
  EXPECT_LE(j.records.size(), joins);
  EXPECT_GE(j.records.size(), replay.size());  // everything still on the frontier is there
  // One range per chunk: 1 + 12 chunks of 500 cover 6,000 points (the last one cut short).
  std::uint64_t covered = 0;
  for (const auto& r : j.ranges) covered += r.end - r.begin;
  EXPECT_EQ(covered, 6000u);
  EXPECT_LE(j.ranges.size(), 14u);
  // O(frontier + chunks) bytes, far from the ~110 bytes per point of --keep all (660 kB here).
  EXPECT_LE(dir_bytes(dir), 110 * j.records.size() + 60 * j.ranges.size() + 64);
  EXPECT_LT(dir_bytes(dir), 20000u);

  calls = 0;
  auto o = options(space, out, "frontier");
  o.resume = true;
  const auto s = run_sweep(space, o, counting(&calls), MPI_COMM_SELF, kQuiet, kNever);
  EXPECT_EQ(calls.load(), 2000);
  EXPECT_EQ(s.evaluated + s.infeasible + s.failed, 8000u);
  ResultsReader a(clean), b(out);
  EXPECT_EQ(a.frontier(), b.frontier());
  const auto ra = a.records(), rb = b.records();
  ASSERT_EQ(ra.size(), rb.size());
  for (std::size_t i = 0; i < ra.size(); ++i) {
    EXPECT_EQ(ra[i].index, rb[i].index);
    EXPECT_TRUE(same_bits(ra[i].result.cost_usd, rb[i].result.cost_usd));
  }
  for (const char* k : {"points_evaluated", "points_infeasible", "points_failed"})
    EXPECT_EQ(a.root_u64(k), b.root_u64(k)) << k;
}

TEST(KeepFrontier, AFrontierJournalIsNotFinishedAsKeepAll) {
  const Space space = big_space();
  const std::string out = temp_path("mixed.h5");
  std::atomic<int> calls{0};
  EXPECT_THROW(run_sweep(space, options(space, out, "frontier"), counting(&calls), MPI_COMM_SELF, kQuiet,
                         [&] { return calls.load() >= 100; }),
               Interrupted);
  auto o = options(space, out, "all");
  o.resume = true;
  EXPECT_THROW(run_sweep(space, o, counting(&calls), MPI_COMM_SELF, kQuiet, kNever), BadInput);
  remove_journal(journal_dir_for(out));
}

TEST(Journal, DoneRangesRoundTripAndTornTailIsDropped) {
  std::vector<unsigned char> bytes;
  PointRecord p;
  p.index = 7;
  p.result.cost_usd = 3;
  append_encoded(bytes, p);
  append_encoded(bytes, DoneRange{0, 10, 7, 2, 1});
  append_encoded(bytes, DoneRange{10, 12, 2, 0, 0});
  std::vector<PointRecord> recs;
  std::vector<DoneRange> ranges;
  EXPECT_EQ(decode_journal_bytes(bytes, recs, ranges), bytes.size());
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].index, 7u);
  EXPECT_EQ(ranges, (std::vector<DoneRange>{{0, 10, 7, 2, 1}, {10, 12, 2, 0, 0}}));
  bytes.pop_back();  // torn last record
  recs.clear(), ranges.clear();
  decode_journal_bytes(bytes, recs, ranges);
  EXPECT_EQ(ranges.size(), 1u);
  // The point-only decoder skips ranges rather than stopping at them.
  std::vector<unsigned char> b2;
  append_encoded(b2, DoneRange{0, 1, 1, 0, 0});
  append_encoded(b2, p);
  recs.clear();
  EXPECT_EQ(decode_records(b2, recs), b2.size());
  EXPECT_EQ(recs.size(), 1u);
}

}  // namespace
}  // namespace toposweep::sweep
