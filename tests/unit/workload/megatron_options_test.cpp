// Megatron-LM's software options as the task graph carries them, each against a value worked out
// by hand: scatter/gather pipeline sends, blocking exchanges, one gradient reduction without DP
// overlap, fp32 gradients, TP collectives on the overlap stream, the optimizer step's traffic.
#include <gtest/gtest.h>

#include <set>

#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/model_library.hpp"
#include "toposweep/workload/spec.hpp"

namespace toposweep {
namespace {

Workload gpt(double batch, const std::string& model = "gpt3-1.3b") {
  return make_workload(builtin_model(model), builtin_device("a100"), "fp16", batch);
}

Strategy strat(std::uint32_t dp, std::uint32_t tp, std::uint32_t pp, std::uint32_t mu) {
  Strategy s;
  s.dp = dp;
  s.tp = tp;
  s.pp = pp;
  s.microbatches = mu;
  return s;
}

double bytes_of(const IterationPlan& p, const std::string& label) {
  double sum = 0;
  for (const Task& t : p.graph.tasks)
    if (p.graph.labels[t.label] == label) sum += t.bytes * t.repeat;
  return sum;
}

std::size_t count_of(const IterationPlan& p, const std::string& label) {
  std::size_t n = 0;
  for (const Task& t : p.graph.tasks) n += p.graph.labels[t.label] == label;
  return n;
}

// tp 4, two stages, 4 microbatches of 2 sequences: each TP rank sends its quarter of the
// 2 x 2048 x 2048 fp16 boundary, and the receiving server all-gathers the whole boundary (one
// AllGather per microbatch and direction). With sequence parallelism the boundary is already
// split, so nothing more is gathered.
TEST(MegatronOptions, ScatterGatherSendsAQuarterAndGathersInsideTheServer) {
  const Workload w = gpt(8);
  const double boundary = 2.0 * 2048 * 2048 * 2;
  Strategy s = strat(1, 4, 2, 4);
  const IterationPlan on = plan_iteration(w, s);
  EXPECT_DOUBLE_EQ(bytes_of(on, "pp_send_forward"), 4 * boundary / 4);
  EXPECT_DOUBLE_EQ(bytes_of(on, "pp_send_backward"), 4 * boundary / 4);
  s.scatter_gather = false;
  const IterationPlan off = plan_iteration(w, s);
  EXPECT_DOUBLE_EQ(bytes_of(off, "pp_send_forward"), 4 * boundary);
  EXPECT_DOUBLE_EQ(bytes_of(off, "tp_allgather"), 0);
  EXPECT_DOUBLE_EQ(bytes_of(on, "tp_allgather"), 2 * 4 * boundary);  // both directions, 4 microbatches
  s.scatter_gather = true;
  s.sequence_parallel = true;
  const IterationPlan sp_on = plan_iteration(w, s);
  s.scatter_gather = false;
  const IterationPlan sp_off = plan_iteration(w, s);
  EXPECT_DOUBLE_EQ(bytes_of(sp_on, "pp_send_forward"), 4 * boundary / 4);
  EXPECT_DOUBLE_EQ(bytes_of(sp_off, "pp_send_forward"), 4 * boundary / 4);
  EXPECT_DOUBLE_EQ(bytes_of(sp_on, "tp_allgather"), bytes_of(sp_off, "tp_allgather"));
}

// Blocking exchanges: every pipeline send but a stage's last is waited for by the stage's next
// compute task.
TEST(MegatronOptions, BlockingSendsHoldTheStagesNextPass) {
  const Workload w = gpt(8);
  Strategy s = strat(1, 1, 4, 8);
  for (bool overlap : {true, false}) {
    s.p2p_overlap = overlap;
    const IterationPlan p = plan_iteration(w, s);
    std::set<TaskId> waited;
    for (TaskId i = 0; i < p.graph.tasks.size(); ++i)
      if (p.graph.tasks[i].kind == TaskKind::Compute)
        for (TaskId d : p.graph.deps_of(i))
          if (p.graph.tasks[d].kind == TaskKind::Transfer && p.graph.tasks[d].stage == p.graph.tasks[i].stage)
            waited.insert(d);
    const std::size_t sends = count_of(p, "pp_send_forward") + count_of(p, "pp_send_backward");
    // 3 boundaries x 8 microbatches x 2 directions; the first and last stage's final sends are
    // followed by their optimizer step only, which waits too.
    EXPECT_EQ(sends, 48u);
    EXPECT_EQ(waited.size(), overlap ? 0u : sends) << overlap;
  }
}

// Without DP overlap the gradients of all of a device's chunks go in one reduction after its
// last backward; with it, 25 MiB buckets start during the backward.
TEST(MegatronOptions, NoDpOverlapIsOneReductionAfterTheBackward) {
  const Workload w = gpt(16);
  Strategy s = strat(2, 1, 2, 4);
  s.schedule = PipelineSchedule::Interleaved;
  s.virtual_stages = 2;
  const IterationPlan overlapped = plan_iteration(w, s);
  s.dp_overlap = false;
  const IterationPlan after = plan_iteration(w, s);
  EXPECT_GT(count_of(overlapped, "dp_allreduce"), 4u);
  EXPECT_EQ(count_of(after, "dp_allreduce"), 2u);  // one per device
  EXPECT_DOUBLE_EQ(bytes_of(after, "dp_allreduce"), bytes_of(overlapped, "dp_allreduce"));
  // Each waits for its device's last backward compute.
  for (TaskId i = 0; i < after.graph.tasks.size(); ++i) {
    const Task& t = after.graph.tasks[i];
    if (after.graph.labels[t.label] != "dp_allreduce") continue;
    TaskId last_bwd = 0;
    for (TaskId j = 0; j < after.graph.tasks.size(); ++j)
      if (after.graph.tasks[j].stage == t.stage && after.graph.tasks[j].kind == TaskKind::Compute &&
          after.graph.tasks[j].phase == TaskPhase::Backward)
        last_bwd = j;
    const auto deps = after.graph.deps_of(i);
    EXPECT_NE(std::find(deps.begin(), deps.end(), last_bwd), deps.end());
  }
}

// fp32 gradients (Megatron's main_grad): 4 bytes per parameter in memory and on the wire, and an
// optimizer step of 5 x 4 + 2 x 12 + (4 + 2) = 50 bytes per local parameter at 67.73 % of HBM.
TEST(MegatronOptions, Fp32GradientsDoubleTheReductionAndSetTheStepTraffic) {
  WorkloadSpec spec;
  spec.model = "gpt3-1.3b";
  spec.global_batch = 8;
  const Workload w16 = make_workload(spec, 8);
  spec.grad_datatype = "fp32";
  const Workload w32 = make_workload(spec, 8);
  EXPECT_DOUBLE_EQ(w16.optimizer_step_bytes_per_param(), 40);
  EXPECT_DOUBLE_EQ(w32.optimizer_step_bytes_per_param(), 50);
  const Strategy s = strat(8, 1, 1, 1);
  const IterationPlan p16 = plan_iteration(w16, s), p32 = plan_iteration(w32, s);
  EXPECT_DOUBLE_EQ(bytes_of(p32, "dp_allreduce"), 2 * bytes_of(p16, "dp_allreduce"));
  EXPECT_DOUBLE_EQ(p32.memory.gradients, 2 * p16.memory.gradients);
  for (const Task& t : p32.graph.tasks) {
    if (p32.graph.labels[t.label] == "optimizer") {
      EXPECT_NEAR(t.duration_s, w32.model.parameters() * 50 / (2.039e12 * 0.6773), 1e-12);
    }
  }
}

// TP collectives under GEMMs run on the stage's overlap stream, the others on its compute
// stream; the volume is the same.
TEST(MegatronOptions, OverlappedCollectivesRunOnTheirOwnStream) {
  const Workload w = gpt(8);
  Strategy s = strat(1, 8, 1, 2);
  const IterationPlan none = plan_iteration(w, s);
  s.tp_overlap = TpOverlap::Backward;
  const IterationPlan back = plan_iteration(w, s);
  double on_overlap = 0;
  for (const Task& t : back.graph.tasks)
    if (t.purpose == CommPurpose::TensorParallel && back.graph.stream_names[t.stream] == "stage0.tp_overlap")
      on_overlap += t.bytes * t.repeat;
  // 24 layers x 2 input-gradient AllReduces + the head's, 2 microbatches of 4 x 2048 x 2048 x 2.
  const double X = 4.0 * 2048 * 2048 * 2;
  EXPECT_DOUBLE_EQ(on_overlap, 2 * (24 * 2 + 1) * X);
  EXPECT_DOUBLE_EQ(bytes_of(back, "tp_allreduce"), bytes_of(none, "tp_allreduce"));
}

}  // namespace
}  // namespace toposweep
