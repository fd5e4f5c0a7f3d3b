// The engine on one rank (MPI_COMM_SELF), with synthetic evaluators whose values, failures and
// infeasible points are known in advance.
#include "toposweep/sweep/engine.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "toposweep/sweep/columns.hpp"
#include "toposweep/sweep/results_file.hpp"
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
  void TearDown() override {
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) MPI_Finalize();
  }
};
const auto* const kMpiEnv = ::testing::AddGlobalTestEnvironment(new MpiEnvironment);

KeyRegistry registry() {
  return KeyRegistry({{"topology.degree", "", ""},
                      {"topology.servers", "", ""},
                      {"topology.kind", "", ""},
                      {"sweep.*", "", ""},
                      {"space.*", "", ""}});
}

// 4·5·3 + 7 = 67 points. The evaluator: cost = degree·servers (+kind offset), time = 1000/cost;
// index 13 mod 17 -> infeasible; index 5 mod 11 -> throws; degree 9 -> BadInput.
const char* kSpace = R"(
[space.grid]
topology.degree = 2, 4, 6, 9
topology.servers = 8, 16, 32, 64, 128
topology.kind = ring, torus, expander
[space.line]
topology.servers = 1,2,3,4,5,6,7
)";

Space make_space(const std::string& extra = "") {
  Config c;
  load_ini_text(c, std::string(kSpace) + extra, "engine.ini");
  return parse_space(c, registry());
}

PointResult known_value(const Config& p) {
  const double servers = static_cast<double>(p.get_int("topology.servers"));
  const double degree = p.has("topology.degree") ? static_cast<double>(p.get_int("topology.degree")) : 1.0;
  if (degree == 9) throw BadInput("degree 9 is inconsistent", p.where("topology.degree"));
  PointResult r;
  r.status = PointStatus::Evaluated;
  r.cost_usd = degree * servers;
  r.iteration_time_s = 1000.0 / (degree * servers) +
                       (p.has("topology.kind") && p.get_string("topology.kind") == "ring" ? 0 : 1);
  r.dp = static_cast<std::uint32_t>(servers);
  return r;
}

Evaluator evaluator_for(const Space& space, std::atomic<int>* calls = nullptr) {
  // Index-dependent failures need the index: recover it from the config by encoding.
  return [&space, calls](const Config& p) {
    if (calls) ++*calls;
    // Find the point by scanning (67 points): fine for a test.
    for (std::uint64_t i = 0; i < space.size(); ++i)
      if (space.point_config(i).to_ini(false) == p.to_ini(false)) {
        if (i % 17 == 13) {
          PointResult r;
          r.status = PointStatus::Infeasible;
          r.message = "does not fit";
          r.cost_usd = 1;
          return r;
        }
        if (i % 11 == 5) throw std::runtime_error("exploded at " + std::to_string(i));
        break;
      }
    return known_value(p);
  };
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "engine_" + std::to_string(::getpid()) + "_" + name;
}

SweepOptions options_for(const Space& space, const std::string& out) {
  SweepOptions o;
  o.out_path = out;
  o.begin = 0;
  o.end = space.size();
  o.objectives = {{"cost_usd", false}, {"iteration_time_s", false}};
  o.config_text = "[space.grid]\n";
  o.progress_interval_s = 1e9;
  o.chunk_seconds = 1e-4;  // many small chunks: exercises the scheduling loop
  return o;
}

const Logger kQuiet(LogLevel::Quiet);
const auto kNever = [] { return false; };

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

void expect_same_records(const std::vector<PointRecord>& a, const std::vector<PointRecord>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].index, b[i].index);
    EXPECT_EQ(a[i].result.status, b[i].result.status);
    EXPECT_EQ(a[i].result.message, b[i].result.message);
    EXPECT_TRUE(same_bits(a[i].result.cost_usd, b[i].result.cost_usd));
    EXPECT_TRUE(same_bits(a[i].result.iteration_time_s, b[i].result.iteration_time_s));
    EXPECT_EQ(a[i].result.dp, b[i].result.dp);
  }
}

TEST(Engine, FileHoldsEveryPointWithKnownValuesFailuresAndFrontier) {
  const Space space = make_space();
  ASSERT_EQ(space.size(), 67u);
  const std::string out = temp_path("full.h5");
  const auto summary =
      run_sweep(space, options_for(space, out), evaluator_for(space), MPI_COMM_SELF, kQuiet, kNever);
  EXPECT_FALSE(fs::exists(out + ".journal"));
  EXPECT_FALSE(fs::exists(out + ".partial"));
  ResultsReader reader(out);
  EXPECT_EQ(reader.root_u64("space_size"), 67u);
  const auto rows = reader.records();
  ASSERT_EQ(rows.size(), 67u);
  std::uint64_t infeasible = 0, failed = 0;
  for (std::uint64_t i = 0; i < 67; ++i) {
    const auto& r = rows[i];
    ASSERT_EQ(r.index, i);
    const Config p = space.point_config(i);
    const bool degree9 = p.has("topology.degree") && p.get_string("topology.degree") == "9";
    if (i % 17 == 13) {
      EXPECT_EQ(r.result.status, PointStatus::Infeasible);
      EXPECT_EQ(r.result.message, "does not fit");
      EXPECT_TRUE(std::isnan(r.result.iteration_time_s));
      ++infeasible;
    } else if (i % 11 == 5) {
      EXPECT_EQ(r.result.status, PointStatus::Failed);
      EXPECT_EQ(r.result.message, "exploded at " + std::to_string(i));
      ++failed;
    } else if (degree9) {
      EXPECT_EQ(r.result.status, PointStatus::Failed);
      EXPECT_NE(r.result.message.find("bad input: degree 9 is inconsistent"), std::string::npos);
      EXPECT_NE(r.result.message.find("sub-space grid"), std::string::npos);  // names where it was set
      ++failed;
    } else {
      EXPECT_EQ(r.result.status, PointStatus::Evaluated);
      EXPECT_EQ(r.result.cost_usd, known_value(p).cost_usd);
      EXPECT_EQ(r.result.iteration_time_s, known_value(p).iteration_time_s);
    }
  }
  EXPECT_EQ(summary.infeasible, infeasible);
  EXPECT_EQ(summary.failed, failed);
  EXPECT_EQ(summary.evaluated + infeasible + failed, 67u);
  EXPECT_EQ(reader.root_u64("points_failed"), failed);

  // /frontier equals the brute-force frontier of the status-0 rows.
  std::vector<std::size_t> ok;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].result.status == PointStatus::Evaluated) ok.push_back(i);
  frontier::ObjectiveMatrix m;
  m.dims = 2;
  m.rows = ok.size();
  for (auto i : ok) {
    m.values.push_back(rows[i].result.cost_usd);
    m.values.push_back(rows[i].result.iteration_time_s);
  }
  std::vector<std::uint64_t> expected;
  for (auto r : frontier::pareto_front_brute_force(m)) expected.push_back(rows[ok[r]].index);
  EXPECT_EQ(reader.frontier(), expected);
  EXPECT_FALSE(expected.empty());
  EXPECT_EQ(reader.frontier_objectives(), "cost_usd,iteration_time_s");
  EXPECT_EQ(summary.frontier_rows.size(), expected.size());

  // The file describes its own space: same fingerprint, same decoding of every index.
  const Space stored = reader.space();
  EXPECT_EQ(stored.fingerprint(), space.fingerprint());
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    EXPECT_EQ(stored.decode(i), space.decode(i));
    EXPECT_EQ(stored.point_config(i).to_ini(false), space.point_config(i).to_ini(false));
  }
}

TEST(Engine, InterruptedThenResumedEqualsUninterrupted) {
  const Space space = make_space();
  const std::string clean = temp_path("clean.h5"), resumed = temp_path("resumed.h5");
  run_sweep(space, options_for(space, clean), evaluator_for(space), MPI_COMM_SELF, kQuiet, kNever);
  // Stop after 10, then after 30 more evaluations; then finish.
  int runs = 0;
  for (int stop_after : {10, 30}) {
    std::atomic<int> calls{0};
    auto o = options_for(space, resumed);
    o.resume = runs > 0;
    EXPECT_THROW(run_sweep(space, o, evaluator_for(space, &calls), MPI_COMM_SELF, kQuiet,
                           [&] { return calls.load() >= stop_after; }),
                 Interrupted);
    EXPECT_EQ(calls.load(), stop_after);
    EXPECT_TRUE(fs::exists(resumed + ".journal"));
    EXPECT_FALSE(fs::exists(resumed));
    ++runs;
  }
  std::atomic<int> calls{0};
  auto o = options_for(space, resumed);
  o.resume = true;
  const auto s = run_sweep(space, o, evaluator_for(space, &calls), MPI_COMM_SELF, kQuiet, kNever);
  EXPECT_EQ(calls.load(), 67 - 40);  // only the points not yet journaled
  EXPECT_EQ(s.done_this_run, 27u);
  ResultsReader a(clean), b(resumed);
  expect_same_records(a.records(), b.records());
  EXPECT_EQ(a.frontier(), b.frontier());

  // --resume once more (a requeued job that had finished): nothing is evaluated, same answer.
  std::atomic<int> again{0};
  const auto s2 = run_sweep(space, o, evaluator_for(space, &again), MPI_COMM_SELF, kQuiet, kNever);
  EXPECT_EQ(again.load(), 0);
  EXPECT_EQ(s2.evaluated, s.evaluated);
  EXPECT_EQ(s2.failed, s.failed);
  EXPECT_EQ(s2.frontier_rows.size(), s.frontier_rows.size());
}

TEST(Engine, RefusesJournalWithoutResumeOrOfAnotherSpaceAndTouchesNothing) {
  const Space space = make_space();
  const std::string out = temp_path("refuse.h5");
  {
    std::ofstream f(out);
    f << "precious";
  }
  std::atomic<int> calls{0};
  EXPECT_THROW(run_sweep(space, options_for(space, out), evaluator_for(space, &calls), MPI_COMM_SELF, kQuiet,
                         [&] { return calls.load() >= 3; }),
               Interrupted);
  EXPECT_THROW(run_sweep(space, options_for(space, out), evaluator_for(space), MPI_COMM_SELF, kQuiet, kNever),
               BadInput);
  const Space other = make_space("topology.kind = x\n");
  auto o = options_for(other, out);
  o.resume = true;
  EXPECT_THROW(run_sweep(other, o, evaluator_for(other), MPI_COMM_SELF, kQuiet, kNever), BadInput);
  std::ifstream f(out);
  std::string content;
  f >> content;
  EXPECT_EQ(content, "precious");
  auto missing_dir = options_for(space, temp_path("no/such/dir/out.h5"));
  EXPECT_THROW(run_sweep(space, missing_dir, evaluator_for(space), MPI_COMM_SELF, kQuiet, kNever), BadInput);
  // Resuming the right space finishes and replaces the file.
  o = options_for(space, out);
  o.resume = true;
  run_sweep(space, o, evaluator_for(space), MPI_COMM_SELF, kQuiet, kNever);
  EXPECT_EQ(ResultsReader(out).rows(), 67u);
}

// Makes a journal's header say its records have the result fields `fields` (a version-2 header).
void rewrite_header_fields(const std::string& dir, const std::string& fields) {
  std::ifstream in(dir + "/header");
  std::string text, line;
  while (std::getline(in, line))
    if (!line.starts_with("fields "))
      text += (line.starts_with("toposweep-journal-") ? std::string("toposweep-journal-v2") : line) + "\n";
  std::ofstream(dir + "/header", std::ios::trunc) << text << "fields " << fields << "\n";
}

TEST(Engine, AJournalOfTodaysFieldsNamesThemInAVersion2HeaderAndOneOfOtherFieldsIsRefused) {
  const Space space = make_space();
  const std::string clean = temp_path("layout_clean.h5"), out = temp_path("layout.h5");
  run_sweep(space, options_for(space, clean), evaluator_for(space), MPI_COMM_SELF, kQuiet, kNever);
  auto interrupt = [&] {
    std::atomic<int> calls{0};
    EXPECT_THROW(run_sweep(space, options_for(space, out), evaluator_for(space, &calls), MPI_COMM_SELF,
                           kQuiet, [&] { return calls.load() >= 5; }),
                 Interrupted);
  };
  auto o = options_for(space, out);
  o.resume = true;
  // Today's fields (cp joined the version-1 layout's) make a version-2 header naming them, which
  // the toposweeps before it refuse instead of misreading.
  interrupt();
  {
    std::ifstream in(out + ".journal/header");
    const std::string header((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(header,
              "toposweep-journal-v2\nfingerprint " + std::to_string(space.fingerprint()) +
                  "\nspace_size 67\nbegin 0\nend 67\nfields "
                  "iteration_time_s:f64,compute_time_s:f64,exposed_comm_time_s:f64,bubble_time_s:f64,"
                  "cost_usd:f64,memory_per_gpu_bytes:f64,samples_per_s:f64,network_bisection_Bps:f64,"
                  "dp:u32,tp:u32,pp:u32,cp:u32,ep:u32,etp:u32,microbatches:u32,optimizer_rounds:u32\n");
  }
  run_sweep(space, o, evaluator_for(space), MPI_COMM_SELF, kQuiet, kNever);
  expect_same_records(ResultsReader(clean).records(), ResultsReader(out).records());
  std::filesystem::remove(out);
  // Records of another layout would be misread: refused, the journal left as it was.
  interrupt();
  rewrite_header_fields(out + ".journal", "iteration_time_s:f64,cost_usd:f64");
  try {
    run_sweep(space, o, evaluator_for(space), MPI_COMM_SELF, kQuiet, kNever);
    ADD_FAILURE() << "resumed a journal of other result fields";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "holds records of other result fields (iteration_time_s:f64,cost_usd:f64)"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.where(), "--resume");
  }
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(read_journal_header(out + ".journal")->fields, "iteration_time_s:f64,cost_usd:f64");
  remove_journal(out + ".journal");
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

std::string failure_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const RuntimeFailure& e) {
    return e.what();
  }
  return "(no RuntimeFailure)";
}

// A rank's exception inside the evaluation loop (here: the injected fault, then a journal part
// that cannot be written) ends the sweep with RuntimeFailure naming the rank, writes no output,
// and leaves a journal holding exactly the points evaluated before it, so that --resume evaluates
// only the rest and produces the uninterrupted run's records. (The multi-rank exit is in tests/mpi.)
TEST(Engine, AFailingRankLeavesAJournalThatResumesToTheUninterruptedResult) {
  const Space space = make_space();
  const std::string clean = temp_path("fail_clean.h5"), out = temp_path("fail.h5");
  const std::string dir = out + ".journal";
  run_sweep(space, options_for(space, clean), evaluator_for(space), MPI_COMM_SELF, kQuiet, kNever);

  std::atomic<int> calls{0};
  std::string what;
  {
    const ScopedEnv fault("TOPOSWEEP_TEST_FAIL", "0:3");
    what = failure_of([&] {
      run_sweep(space, options_for(space, out), evaluator_for(space, &calls), MPI_COMM_SELF, kQuiet, kNever);
    });
  }
  EXPECT_EQ(what.rfind("rank 0 of 1 failed: injected fault (TOPOSWEEP_TEST_FAIL) in chunk 3;", 0), 0u)
      << what;
  EXPECT_NE(what.find("--resume"), std::string::npos) << what;
  EXPECT_FALSE(fs::exists(out));
  // Chunks 1 and 2 and the first point of chunk 3 were evaluated; all of them were journaled.
  EXPECT_GE(calls.load(), 3);
  EXPECT_EQ(read_journal(dir).size(), static_cast<std::size_t>(calls.load()));

  // The next run's part for rank 0 cannot be written: that run fails at its first commit and
  // adds nothing to the journal.
  auto o = options_for(space, out);
  o.resume = true;
  const std::size_t before = read_journal(dir).size();
  fs::create_symlink("/dev/full", dir + "/run-0001-rank-00000.log");
  what = failure_of([&] { run_sweep(space, o, evaluator_for(space), MPI_COMM_SELF, kQuiet, kNever); });
  EXPECT_EQ(what.rfind("rank 0 of 1 failed: cannot write the journal file", 0), 0u) << what;
  EXPECT_NE(what.find(std::strerror(ENOSPC)), std::string::npos) << what;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(read_journal(dir).size(), before);

  fs::remove(dir + "/run-0001-rank-00000.log");
  std::atomic<int> rest{0};
  const auto s = run_sweep(space, o, evaluator_for(space, &rest), MPI_COMM_SELF, kQuiet, kNever);
  EXPECT_EQ(static_cast<std::size_t>(rest.load()), 67 - before);
  EXPECT_EQ(s.done_this_run, 67 - before);
  ResultsReader a(clean), b(out);
  expect_same_records(a.records(), b.records());
  EXPECT_EQ(a.frontier(), b.frontier());
  EXPECT_FALSE(fs::exists(dir));
}

TEST(Engine, AMalformedFaultHookIsBadInputBeforeAnythingIsWritten) {
  const Space space = make_space();
  const std::string out = temp_path("badhook.h5");
  for (const char* v : {"1", "x:2", "0:0", "-1:2", "0:2x"}) {
    const ScopedEnv fault("TOPOSWEEP_TEST_FAIL", v);
    EXPECT_THROW(
        run_sweep(space, options_for(space, out), evaluator_for(space), MPI_COMM_SELF, kQuiet, kNever),
        BadInput)
        << v;
    EXPECT_FALSE(fs::exists(out + ".journal")) << v;
  }
}

TEST(Engine, SlicesMergeIntoTheSingleJobFile) {
  const Space space = make_space();
  const std::string whole = temp_path("whole.h5");
  run_sweep(space, options_for(space, whole), evaluator_for(space), MPI_COMM_SELF, kQuiet, kNever);
  std::vector<std::string> parts;
  const std::uint64_t cuts[] = {0, 20, 21, 67};  // uneven, one slice of a single point
  for (int k = 2; k >= 0; --k) {                 // any order
    auto o = options_for(space, temp_path("slice" + std::to_string(k) + ".h5"));
    o.begin = cuts[k];
    o.end = cuts[k + 1];
    o.slice = std::to_string(k) + "/3";
    run_sweep(space, o, evaluator_for(space), MPI_COMM_SELF, kQuiet, kNever);
    EXPECT_EQ(ResultsReader(o.out_path).rows(), cuts[k + 1] - cuts[k]);
    parts.push_back(o.out_path);
  }
  const std::string merged = temp_path("merged.h5");
  merge_slices(space, parts, options_for(space, merged));
  ResultsReader a(whole), b(merged);
  expect_same_records(a.records(), b.records());
  EXPECT_EQ(a.frontier(), b.frontier());
  // Missing or duplicated slices are refused.
  EXPECT_THROW(merge_slices(space, {parts[0], parts[1]}, options_for(space, temp_path("bad.h5"))), BadInput);
  EXPECT_THROW(
      merge_slices(space, {parts[0], parts[1], parts[2], parts[2]}, options_for(space, temp_path("bad.h5"))),
      BadInput);
  EXPECT_FALSE(fs::exists(temp_path("bad.h5")));
}

TEST(Engine, KeepFrontierStoresOnlyFrontierRows) {
  const Space space = make_space();
  const std::string all = temp_path("keepall.h5"), front = temp_path("keepfront.h5");
  run_sweep(space, options_for(space, all), evaluator_for(space), MPI_COMM_SELF, kQuiet, kNever);
  auto o = options_for(space, front);
  o.keep = Keep::Frontier;
  run_sweep(space, o, evaluator_for(space), MPI_COMM_SELF, kQuiet, kNever);
  ResultsReader a(all), b(front);
  const auto f = a.frontier();
  EXPECT_EQ(b.frontier(), f);
  const auto rows = b.records();
  ASSERT_EQ(rows.size(), f.size());
  for (std::size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].index, f[i]);
}

// A design the axes make impossible is infeasible with its reason; other bad input is a failure.
TEST(Engine, InvalidDesignIsInfeasibleAndOtherBadInputFails) {
  const Space space = make_space();
  const Evaluator impossible_when_degree_reaches_servers = [](const Config& p) {
    if (p.has("topology.degree") && p.get_int("topology.degree") >= p.get_int("topology.servers"))
      throw InvalidDesign("degree must be below the servers", p.where("topology.degree"));
    return known_value(p);
  };
  std::uint64_t infeasible = 0, failed = 0;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    Config p;
    space.apply_point(i, p);
    const PointRecord r = evaluate_point(space, i, impossible_when_degree_reaches_servers);
    const bool has_degree = p.has("topology.degree");
    const std::int64_t degree = has_degree ? p.get_int("topology.degree") : 0;
    if (has_degree && degree >= p.get_int("topology.servers")) {
      // Only degree 9 with 8 servers (three kinds) in this space.
      EXPECT_EQ(r.result.status, PointStatus::Infeasible) << i;
      EXPECT_NE(r.result.message.find("degree must be below the servers"), std::string::npos)
          << r.result.message;
      EXPECT_TRUE(std::isnan(r.result.iteration_time_s));
      ++infeasible;
    } else if (degree == 9) {
      EXPECT_EQ(r.result.status, PointStatus::Failed) << i;
      EXPECT_EQ(r.result.message.rfind("bad input: ", 0), 0u) << r.result.message;
      ++failed;
    } else {
      EXPECT_EQ(r.result.status, PointStatus::Evaluated) << i;
    }
  }
  EXPECT_EQ(infeasible, 3u);
  EXPECT_EQ(failed, 4u * 3u);  // degree 9 with 16..128 servers, three kinds
}

TEST(Engine, FrontierOfAnAxisFieldUsesSIValues) {
  const Space space = make_space();
  std::vector<PointRecord> rows;
  for (std::uint64_t i = 0; i < space.size(); ++i)
    rows.push_back(evaluate_point(space, i, Evaluator(known_value)));
  // Minimising topology.servers alone: the sub-space "line" has servers = 1 at index 60.
  const auto f = frontier_indices(space, rows, {{"topology.servers", false}});
  EXPECT_EQ(f, (std::vector<std::uint64_t>{60}));
  EXPECT_THROW(field_column(space, rows, "no_such_field"), BadInput);
}

}  // namespace
}  // namespace toposweep::sweep
