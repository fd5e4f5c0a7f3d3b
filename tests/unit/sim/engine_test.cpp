// The task-graph engine on hand-built graphs with a fixed-rate stand-in network model, so the
// expected times follow from arithmetic alone.
#include "toposweep/sim/engine.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

namespace toposweep::sim {
namespace {

// Communication takes bytes x repeat / rate, known at start.
class FixedRateModel final : public NetworkModel {
 public:
  explicit FixedRateModel(double rate) : rate_(rate) {}
  std::optional<double> begin(const CommTask& c, double, std::uint64_t) override {
    return c.task().bytes * c.task().repeat / rate_;
  }
  double next_event_time() override { return std::numeric_limits<double>::infinity(); }
  void advance_to(double, std::vector<std::uint64_t>&) override {}
  std::string name() const override { return "fixed"; }

 private:
  double rate_;
};

Task compute(std::uint32_t stream, double seconds, std::uint32_t stage = 0) {
  Task t;
  t.kind = TaskKind::Compute;
  t.stream = stream;
  t.duration_s = seconds;
  t.stage = stage;
  return t;
}

Task allreduce(std::uint32_t stream, double bytes, std::uint32_t group_set, std::uint32_t stage = 0) {
  Task t;
  t.kind = TaskKind::Collective;
  t.op = CollectiveOp::AllReduce;
  t.purpose = CommPurpose::DataParallel;
  t.stream = stream;
  t.bytes = bytes;
  t.group_set = group_set;
  t.stage = stage;
  return t;
}

EngineResult run_one(const TaskGraph& g, double rate = 1.0) {
  FixedRateModel model(rate);
  const Job job{"j", &g, rank_order_placement(std::max(1u, g.gpus), 1)};
  return run_engine(std::span<const Job>(&job, 1), model);
}

TEST(Engine, ComputeOnlyIterationIsFlopSumOverThroughput) {
  // Five layers on one stream at 312 TFLOP/s x 0.5 efficiency.
  const double throughput = 156e12;
  const double flops[] = {3e12, 7.5e12, 1e11, 4.2e12, 9e12};
  TaskGraph g;
  g.gpus = 1;
  g.add_stream("compute");
  double total = 0;
  for (double f : flops) {
    Task t = compute(0, f / throughput);
    t.flops = f;
    g.add(t);
    total += f;
  }
  const EngineResult r = run_one(g);
  EXPECT_NEAR(r.makespan_s, total / throughput, 1e-15);
  EXPECT_NEAR(r.jobs[0].compute_time_s, total / throughput, 1e-15);
  EXPECT_DOUBLE_EQ(r.jobs[0].exposed_comm_time_s, 0.0);
  EXPECT_NEAR(r.jobs[0].bubble_time_s, 0.0, 1e-15);
}

TEST(Engine, StreamsRunInOrderAndInParallel) {
  // Stream 0: A (2 s), C (1 s). Stream 1: B (3 s) waits for A. C starts at 2 (after A), B at 2.
  TaskGraph g;
  g.gpus = 1;
  g.add_stream("s0");
  g.add_stream("s1");
  const TaskId a = g.add(compute(0, 2.0));
  const TaskId deps[] = {a};
  const TaskId b = g.add(compute(1, 3.0), deps);
  const TaskId c = g.add(compute(0, 1.0));
  const EngineResult r = run_one(g);
  EXPECT_DOUBLE_EQ(r.spans[0][b].start_s, 2.0);
  EXPECT_DOUBLE_EQ(r.spans[0][c].start_s, 2.0);
  EXPECT_DOUBLE_EQ(r.spans[0][c].end_s, 3.0);
  EXPECT_DOUBLE_EQ(r.makespan_s, 5.0);
  EXPECT_DOUBLE_EQ(r.jobs[0].compute_time_s, 5.0);  // union [0,2] + [2,5]
}

TEST(Engine, RepeatMultipliesComputeAndCommunication) {
  TaskGraph g;
  g.gpus = 2;
  g.add_stream("compute");
  g.add_group_set(GroupSet{{{0, 1}}});
  Task c = compute(0, 0.5);
  c.repeat = 4;
  g.add(c);
  Task a = allreduce(0, 3.0, 0);
  a.repeat = 3;
  g.add(a);
  const EngineResult r = run_one(g, 2.0);  // comm: 3 B x 3 / 2 B/s = 4.5 s
  EXPECT_DOUBLE_EQ(r.makespan_s, 2.0 + 4.5);
  EXPECT_DOUBLE_EQ(r.jobs[0].compute_time_s, 2.0);
  EXPECT_DOUBLE_EQ(r.jobs[0].exposed_comm_time_s, 4.5);
  const auto dp = static_cast<std::size_t>(CommPurpose::DataParallel);
  EXPECT_DOUBLE_EQ(r.jobs[0].comm_busy_s[dp], 4.5);
  EXPECT_DOUBLE_EQ(r.jobs[0].comm_bytes[dp], 9.0);
}

// Backward compute c[i] on stream 0; bucket i's AllReduce (a[i] seconds at rate 1) on
// stream 1 waits for c[i]. Returns the engine's iteration time.
double bucketed(const std::vector<double>& c, const std::vector<double>& a) {
  TaskGraph g;
  g.gpus = 2;
  g.add_stream("compute");
  g.add_stream("dp");
  g.add_group_set(GroupSet{{{0, 1}}});
  for (std::size_t i = 0; i < c.size(); ++i) {
    const TaskId b = g.add(compute(0, c[i]));
    const TaskId deps[] = {b};
    g.add(allreduce(1, a[i], 0), deps);
  }
  return run_one(g).makespan_s;
}

TEST(Engine, BucketedOverlapHandWorked) {
  // c = 1,1,1; a = 2,2,2: buckets run 1-3, 3-5, 5-7.
  EXPECT_DOUBLE_EQ(bucketed({1, 1, 1}, {2, 2, 2}), 7.0);
  // c = 3,3; a = 1,1: 3-4, 6-7.
  EXPECT_DOUBLE_EQ(bucketed({3, 3}, {1, 1}), 7.0);
}

TEST(Engine, BucketedOverlapBetweenMaxAndSumAndMatchesRecurrence) {
  std::mt19937_64 rng(20260523);
  std::uniform_real_distribution<double> u(0.01, 2.0);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t k = 1 + rng() % 12;
    std::vector<double> c(k), a(k);
    double sc = 0, sa = 0, done_c = 0, done_a = 0;
    for (std::size_t i = 0; i < k; ++i) {
      c[i] = u(rng);
      a[i] = u(rng);
      sc += c[i];
      sa += a[i];
      // Bucket i starts once its gradients exist and the previous bucket is done.
      done_c += c[i];
      done_a = std::max(done_a, done_c) + a[i];
    }
    const double t = bucketed(c, a);
    EXPECT_GE(t, std::max(sc, sa) * (1 - 1e-12));
    EXPECT_LE(t, (sc + sa) * (1 + 1e-12));
    EXPECT_NEAR(t, done_a, 1e-12 * done_a);
  }
}

// A hand-scheduled pipeline: q stages, mu microbatches, forward f and backward b per
// microbatch per stage, communication free. gpipe: all forwards then all backwards;
// otherwise 1F1B (warm-up of q-1-p forwards on stage p, then alternate, then drain).
TaskGraph pipeline(std::uint32_t q, std::uint32_t mu, double f, double b, bool gpipe) {
  TaskGraph g;
  g.gpus = q;
  for (std::uint32_t p = 0; p < q; ++p) g.add_stream("stage" + std::to_string(p));
  const TaskId none = std::numeric_limits<TaskId>::max();
  std::vector<std::vector<TaskId>> fwd(q, std::vector<TaskId>(mu, none)), bwd = fwd;
  // Per-stage order of (is_backward, microbatch).
  std::vector<std::vector<std::pair<bool, std::uint32_t>>> order(q);
  for (std::uint32_t p = 0; p < q; ++p) {
    if (gpipe) {
      for (std::uint32_t m = 0; m < mu; ++m) order[p].push_back({false, m});
      for (std::uint32_t m = 0; m < mu; ++m) order[p].push_back({true, m});
    } else {
      const std::uint32_t warm = std::min(q - 1 - p, mu);
      std::uint32_t nf = 0, nb = 0;
      for (; nf < warm; ++nf) order[p].push_back({false, nf});
      while (nf < mu) {
        order[p].push_back({false, nf++});
        order[p].push_back({true, nb++});
      }
      while (nb < mu) order[p].push_back({true, nb++});
    }
  }
  // Add tasks in an order that respects both the stream order and the dependencies: keep
  // sweeping the stages, adding each stage's next task once its cross-stage input exists.
  std::vector<std::size_t> next(q, 0);
  std::size_t added = 0, total = 2ull * q * mu;
  while (added < total) {
    for (std::uint32_t p = 0; p < q; ++p) {
      if (next[p] == order[p].size()) continue;
      const auto [is_b, m] = order[p][next[p]];
      std::vector<TaskId> deps;
      if (!is_b && p > 0) {
        if (fwd[p - 1][m] == none) continue;
        deps.push_back(fwd[p - 1][m]);
      }
      if (is_b && p + 1 < q) {
        if (bwd[p + 1][m] == none) continue;
        deps.push_back(bwd[p + 1][m]);
      }
      if (is_b && p + 1 == q) deps.push_back(fwd[p][m]);
      Task t = compute(p, is_b ? b : f, p);
      t.microbatch = m;
      t.phase = is_b ? TaskPhase::Backward : TaskPhase::Forward;
      (is_b ? bwd : fwd)[p][m] = g.add(t, deps);
      ++next[p];
      ++added;
    }
  }
  return g;
}

TEST(Engine, PipelineBubbleMatchesClosedForm) {
  for (bool gpipe : {true, false}) {
    for (std::uint32_t q : {2u, 4u, 8u}) {
      for (std::uint32_t mu : {1u, 4u, 16u}) {
        const double f = 1e-3, b = 2e-3;
        const EngineResult r = run_one(pipeline(q, mu, f, b, gpipe));
        const JobTimes& j = r.jobs[0];
        SCOPED_TRACE(std::string(gpipe ? "gpipe" : "1f1b") + " q=" + std::to_string(q) +
                     " mu=" + std::to_string(mu));
        EXPECT_NEAR(j.iteration_time_s, (mu + q - 1) * (f + b), 1e-12);
        EXPECT_NEAR(j.compute_time_s, mu * (f + b), 1e-12);
        EXPECT_NEAR(j.bubble_time_s / j.iteration_time_s, double(q - 1) / (mu + q - 1), 1e-9);
      }
    }
  }
}

TEST(Engine, JobsShareTheEngineButNotTheirTimes) {
  TaskGraph g1, g2;
  g1.gpus = g2.gpus = 1;
  g1.add_stream("s");
  g2.add_stream("s");
  g1.add(compute(0, 2.0));
  g2.add(compute(0, 1.0));
  g2.add(compute(0, 4.0));
  FixedRateModel model(1.0);
  const Job jobs[] = {{"a", &g1, rank_order_placement(1, 1)}, {"b", &g2, rank_order_placement(1, 1)}};
  const EngineResult r = run_engine(jobs, model);
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_DOUBLE_EQ(r.jobs[0].iteration_time_s, 2.0);
  EXPECT_DOUBLE_EQ(r.jobs[1].iteration_time_s, 5.0);
  EXPECT_DOUBLE_EQ(r.makespan_s, 5.0);
}

TEST(Engine, UnionLength) {
  std::vector<TaskSpan> s{{0, 1}, {0.5, 2}, {3, 4}, {3.5, 3.75}};
  EXPECT_DOUBLE_EQ(union_length(s), 3.0);
}

}  // namespace
}  // namespace toposweep::sim
