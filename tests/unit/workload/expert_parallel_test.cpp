// Expert parallelism (strategy.ep, Megatron-Core's rule: ep divides dp x cp and the experts)
// against hand-derived values: the expert states' memory at ep 1 and 2, the dispatch/combine
// All-to-All's bytes, count and groups (against a brute force over the rank formula), the
// grouped expert GEMMs' shapes, the enumerator over optimize.ep, and bad input.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/enumerate.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/layer_cost.hpp"
#include "toposweep/workload/memory.hpp"
#include "toposweep/workload/model_library.hpp"
#include "toposweep/workload/ranks.hpp"
#include "toposweep/workload/spec.hpp"
#include "toposweep/workload/traffic.hpp"
#include "workload_test_helpers.hpp"

namespace toposweep {
namespace {

Workload mixtral(double global_batch) {
  Workload w = make_workload(builtin_model("mixtral-8x7b"), builtin_device("h100"), "bf16", global_batch);
  w.fused_attention = true;
  return w;
}

Strategy strategy(std::uint32_t dp, std::uint32_t tp, std::uint32_t pp, std::uint32_t ep, std::uint32_t mu) {
  Strategy s;
  s.dp = dp;
  s.tp = tp;
  s.pp = pp;
  s.ep = ep;
  s.microbatches = mu;
  s.sequence_parallel = tp > 1;
  return s;
}

// Mixtral 8x7B on 32 GPUs, tp 2, pp 2 (16 blocks a stage), dp 8. A block's routed experts:
// 8 x 3 x 4096 x 14336 = 1,409,286,144 parameters, over tp = 2 ranks: 704,643,072 each, so a
// stage's 16 blocks hold 11,274,289,152 expert parameters per rank at ep 1 and half at ep 2.
// Without ZeRO the experts' weights, gradients and optimizer state (bytes_per_element,
// grad_bytes_per_element and K = optimizer_bytes_per_param each) halve exactly and nothing else moves;
// with ZeRO-1 the optimizer state shards over dp / ep = 8 / ep expert replicas, so it stays as
// it was (half the experts, twice the share).
TEST(ExpertParallel, ExpertStatesHalveAtEp2AndNothingElseMoves) {
  const Workload w = mixtral(64);
  const double stage_experts = 16 * 1409286144.0 / 2;
  for (const std::uint8_t zero : {std::uint8_t{0}, std::uint8_t{1}}) {
    SCOPED_TRACE(int(zero));
    Strategy a = strategy(8, 2, 2, 1, 8), b = strategy(8, 2, 2, 2, 8);
    a.zero = b.zero = zero;
    const auto stages = partition_stages(w.model, 2);
    for (std::uint32_t p = 0; p < 2; ++p) {
      const MemoryBreakdown m1 = stage_memory(w, a, stages, p), m2 = stage_memory(w, b, stages, p);
      EXPECT_DOUBLE_EQ(m1.weights - m2.weights, stage_experts / 2 * w.bytes_per_element);
      EXPECT_DOUBLE_EQ(m1.gradients - m2.gradients, stage_experts / 2 * w.grad_bytes_per_element);
      const double K = w.optimizer_bytes_per_param();
      EXPECT_DOUBLE_EQ(m1.optimizer - m2.optimizer, zero == 0 ? stage_experts / 2 * K : 0.0);
      EXPECT_DOUBLE_EQ(m1.activations, m2.activations);
    }
  }
}

// Per MoE block and microbatch (b = 64 / 8 / 8 = 1 sequence): dispatch and combine forward, their
// gradients backward, each an All-to-All of each rank's tokens (s / tp with sequence parallelism)
// once per routed expert: 2 x 4096 / 2 x 4096 elements x 2 bytes = 33,554,432 bytes per rank.
TEST(ExpertParallel, DispatchAndCombineAreTwoAllToAllsEachWay) {
  const Workload w = mixtral(64);
  const std::uint32_t tp = 2, pp = 2, dp = 8, ep = 4, mu = 8;
  const double per_op = 1.0 * 2 * 4096 / tp * 4096 * 2;
  EXPECT_DOUBLE_EQ(per_op, 33554432.0);
  for (const Recompute r : {Recompute::None, Recompute::Full}) {
    Strategy st = strategy(dp, tp, pp, ep, mu);
    st.recompute = r;
    const IterationPlan plan = plan_iteration(w, st);
    double count = 0;
    for (const Task& t : plan.graph.tasks) {
      if (t.purpose != CommPurpose::ExpertParallel) continue;
      EXPECT_EQ(t.op, CollectiveOp::AllToAll);
      EXPECT_DOUBLE_EQ(t.bytes, per_op);
      count += t.repeat;
      // The EP groups of stage t.stage: ranks with the same tp index whose dp index d share
      // d / ep; rank = t + tp (d + dp p) (cp = 1), so {t + tp (e + ep j) + tp dp p : e < ep}.
      const auto& groups = plan.graph.group_sets[t.group_set].groups;
      std::set<std::vector<std::uint32_t>> expected;
      for (std::uint32_t tt = 0; tt < tp; ++tt)
        for (std::uint32_t j = 0; j < dp / ep; ++j) {
          std::vector<std::uint32_t> g;
          for (std::uint32_t e = 0; e < ep; ++e) g.push_back(tt + tp * (e + ep * j) + tp * dp * t.stage);
          expected.insert(g);
        }
      EXPECT_EQ(std::set<std::vector<std::uint32_t>>(groups.begin(), groups.end()), expected);
    }
    // 32 MoE blocks over 2 stages: per stage and microbatch 16 blocks x (2 + 2, or 2 + 4 with
    // full recomputation); summed over both stages.
    const double per_block = r == Recompute::Full ? 6 : 4;
    EXPECT_DOUBLE_EQ(count, 2 * mu * 16 * per_block);
  }
  for (const Task& t : plan_iteration(w, strategy(dp, tp, pp, 1, mu)).graph.tasks)
    EXPECT_NE(t.purpose, CommPurpose::ExpertParallel);
}

// The topology optimizers see the All-to-Alls as model-parallel demand between the servers of
// each EP group (derive_traffic, what the alternating optimizer and the finder read). Mixtral on
// 4 servers of 4 GPUs, dp 16, ep 8, one sequence a rank: EP groups {0..7} and {8..15} span
// servers {0, 1} and {2, 3}. Per block, 4 All-to-Alls of 1 x 4096 tokens x top-2 x 4096 x 2 bytes
// = 67,108,864 bytes per rank, 1/8 of it to each member; 32 blocks. Server 0 -> server 1: 4 x 4
// GPU pairs, so 16 x 67,108,864 / 8 x 4 x 32 = 17,179,869,184 bytes (2^34); nothing between the groups'
// servers, and the dense gradients stay all-reduce demand.
TEST(ExpertParallel, AllToAllsAreModelParallelDemandBetweenTheGroupsServers) {
  const Workload w = mixtral(16);
  const IterationPlan plan = plan_iteration(w, strategy(16, 1, 1, 8, 1));
  const TrafficDemand d = derive_traffic(plan.graph, rank_order_placement(16, 4), 4);
  std::map<std::pair<std::uint32_t, std::uint32_t>, double> mp;
  for (const NodeDemand& x : d.mp) mp[{x.src, x.dst}] += x.bytes;
  const double pair = 16 * 67108864.0 / 8 * 4 * 32;
  EXPECT_DOUBLE_EQ(pair, 17179869184.0);
  const std::map<std::pair<std::uint32_t, std::uint32_t>, double> expected = {
      {{0, 1}, pair}, {{1, 0}, pair}, {{2, 3}, pair}, {{3, 2}, pair}};
  EXPECT_EQ(mp, expected);
  EXPECT_FALSE(d.allreduce.empty());
  // ep = 1: no model-parallel demand at all.
  EXPECT_TRUE(
      derive_traffic(plan_iteration(w, strategy(16, 1, 1, 1, 1)).graph, rank_order_placement(16, 4), 4)
          .mp.empty());
}

// The expert grid against a brute force over Megatron-Core's rank formula with cp: the dp x cp
// ranks of a (tp index, stage) in the order c + cp d, cut into consecutive blocks of ep.
TEST(ExpertParallel, ExpertGridGroupsMatchABruteForce) {
  Strategy s = strategy(4, 2, 3, 4, 1);
  s.cp = 2;
  const AxisGrid grid = axis_grid(s);
  for (std::uint32_t p = 0; p < 3; ++p) {
    std::set<std::vector<std::uint32_t>> ep, replicas;
    for (std::uint32_t t = 0; t < 2; ++t) {
      std::vector<std::uint32_t> line;  // order c + cp d
      for (std::uint32_t d = 0; d < 4; ++d)
        for (std::uint32_t c = 0; c < 2; ++c)
          line.push_back(grid.rank({{Axis::Tp, t}, {Axis::Cp, c}, {Axis::Dp, d}, {Axis::Pp, p}}));
      for (std::uint32_t j = 0; j < 8; j += 4) ep.insert({line.begin() + j, line.begin() + j + 4});
      for (std::uint32_t e = 0; e < 4; ++e) replicas.insert({line[e], line[e + 4]});
    }
    const AxisGrid eg = expert_grid(s);
    const GroupSet g = eg.groups(Axis::Ep, {{Axis::Pp, p}}), r = eg.groups(Axis::Dp, {{Axis::Pp, p}});
    EXPECT_EQ(std::set<std::vector<std::uint32_t>>(g.groups.begin(), g.groups.end()), ep);
    EXPECT_EQ(std::set<std::vector<std::uint32_t>>(r.groups.begin(), r.groups.end()), replicas);
  }
}

// On an idealised device the grouped expert GEMMs of ep 2 (4 experts, each with twice the
// tokens) take the time of ep 1's (8 experts): the same FLOPs.
TEST(ExpertParallel, GroupedExpertGemmsKeepTheirFlopsOverEp) {
  const Workload w = mixtral(64);
  const LayerCostKey k1 = test::idealised(layer_cost_key(w, strategy(8, 2, 2, 1, 8))),
                     k2 = test::idealised(layer_cost_key(w, strategy(8, 2, 2, 2, 8)));
  EXPECT_EQ(k2.split.ep, 2u);
  EXPECT_DOUBLE_EQ(transformer_costs(k1).moe_block.forward.compute_s,
                   transformer_costs(k2).moe_block.forward.compute_s);
}

TEST(ExpertParallel, TheEnumeratorVisitsOnlyValidEpDegrees) {
  const Workload w = mixtral(64);
  StrategySpace space;
  space.set(&StrategyKnobs::ep, {1, 2, 4, 8, 16});
  space.tp = {2};
  space.pp = {2};
  space.max_microbatches = 2;
  std::set<std::uint32_t> seen;
  for_each_strategy(w, 32, space, [&](const Strategy& s, double, bool) {
    seen.insert(s.ep);
    EXPECT_EQ(8 % s.ep, 0u);
    EXPECT_EQ(s.grad_replicas() % s.ep, 0u);
  });
  EXPECT_EQ(seen, (std::set<std::uint32_t>{1, 2, 4, 8}));  // 16 divides neither 8 experts nor dp 8
}

// Mixtral 8x7B on 16 GPUs, tp 2, pp 1, dp 8, ep 4: each rank holds 2 of the 8 experts' halves,
// 32 x 1,409,286,144 / (2 x 4) = 5,637,144,576 expert parameters, whose gradients reduce over the
// dp / ep = 2 ranks holding the same experts: rank t + 2 (e + 4 j), j = 0, 1, for each tp index
// t and expert index e (a brute force over Megatron-Core's rank formula). The dense gradients
// still reduce over the 8 dp ranks; with ep = 1 everything goes there, as before.
TEST(ExpertParallel, ExpertGradientsReduceOverTheirReplicasOnly) {
  Workload w = mixtral(64);
  w.device.hbm_bytes = 1e15;  // the traffic, not whether one stage fits
  const std::uint32_t tp = 2, dp = 8, ep = 4;
  const double experts = 32 * 1409286144.0 / (tp * ep);
  EXPECT_DOUBLE_EQ(experts, 5637144576.0);
  double dense = 0;  // per rank: the tp-split and replicated parameters
  for (const Layer& l : w.model.layers) dense += l.params_sharded / tp + l.params_replicated;
  std::set<std::vector<std::uint32_t>> replicas, dp_groups;
  for (std::uint32_t t = 0; t < tp; ++t) {
    std::vector<std::uint32_t> all;
    for (std::uint32_t d = 0; d < dp; ++d) all.push_back(t + tp * d);
    dp_groups.insert(all);
    for (std::uint32_t e = 0; e < ep; ++e) replicas.insert({t + tp * e, t + tp * (e + ep)});
  }
  const double G = w.grad_bytes_per_element, B = w.bytes_per_element;
  for (const std::uint8_t zero : {std::uint8_t{0}, std::uint8_t{1}}) {
    SCOPED_TRACE(int(zero));
    Strategy s = strategy(dp, tp, 1, ep, 4);
    s.zero = zero;
    const IterationPlan plan = plan_iteration(w, s);
    ASSERT_TRUE(plan.feasible);
    std::map<std::string, double> bytes;
    for (const Task& t : plan.graph.tasks) {
      const std::string& name = plan.graph.labels[t.label];
      if (t.purpose != CommPurpose::DataParallel) continue;
      bytes[name] += t.bytes * t.repeat;
      const auto& groups = plan.graph.group_sets[t.group_set].groups;
      const std::set<std::vector<std::uint32_t>> got(groups.begin(), groups.end());
      EXPECT_EQ(got, name.rfind("expert_", 0) == 0 ? replicas : dp_groups) << name;
    }
    const std::string reduce = zero == 0 ? "allreduce" : "reducescatter";
    EXPECT_NEAR(bytes["expert_dp_" + reduce], experts * G, 1e-12 * experts * G);
    EXPECT_NEAR(bytes["dp_" + reduce], dense * G, 1e-12 * dense * G);
    EXPECT_NEAR(bytes["expert_dp_allgather"], zero == 1 ? experts * B : 0.0, 1e-12 * experts * B);
    EXPECT_NEAR(bytes["dp_allgather"], zero == 1 ? dense * B : 0.0, 1e-12 * dense * B);
    // ep = 1: no expert reductions; the dp group reduces the experts' gradients (4x as many).
    Strategy one = s;
    one.ep = 1;
    std::map<std::string, double> one_bytes;
    const IterationPlan plan1 = plan_iteration(w, one);
    for (const Task& t : plan1.graph.tasks)
      if (t.purpose == CommPurpose::DataParallel)
        one_bytes[plan1.graph.labels[t.label]] += t.bytes * t.repeat;
    EXPECT_EQ(one_bytes.count("expert_dp_" + reduce), 0u);
    EXPECT_NEAR(one_bytes["dp_" + reduce], (dense + ep * experts) * G, 1e-12 * dense * G);
  }
  // ep = dp: every rank holds different experts, nothing to reduce them over.
  const IterationPlan all = plan_iteration(w, strategy(dp, tp, 1, dp, 4));
  double reduced = 0;
  for (const Task& t : all.graph.tasks) {
    EXPECT_EQ(all.graph.labels[t.label].rfind("expert_", 0), std::string::npos);
    if (t.purpose == CommPurpose::DataParallel) reduced += t.bytes * t.repeat;
  }
  EXPECT_NEAR(reduced, dense * G, 1e-12 * dense * G);
}

// model.moe_imbalance = 1.5 on Mixtral (tp 2 with sequence parallelism, dp 8, ep 2, b = 1): the
// busiest EP rank's experts take 1.5x the mean rows. On an idealised device (GEMMs at their
// FLOPs, memory free) a block's compute is C(I) = C_rest + I x T_e, T_e the rank's grouped expert
// GEMMs: 2 x (k s = 8192 routed rows) x (3 f h / tp) FLOPs forward; so C(1.5) - C(1) = T_e / 2.
// Every dispatch/combine All-to-All carries 1.5 x 33,554,432 bytes, and so does every TP
// collective of the routed experts' tokens (the gather after the dispatch and the reduce-scatter
// before the combine: k s h x 2 bytes = 67,108,864 over the tp 2 ranks, then 1.5 x that); the
// expert activations kept (expert_in's k s h, the SwiGLU's 2 k s f, expert_out's k s f, over tp)
// grow by half; nothing else moves, and at ep = 1 the imbalance changes nothing.
TEST(ExpertParallel, ImbalanceScalesTheBusiestRanksExpertWork) {
  Workload w = mixtral(64);
  w.device.hbm_bytes = 1e15;
  Workload wi = w;
  wi.moe_imbalance = 1.5;
  const Strategy s = strategy(8, 2, 1, 2, 8);
  const auto ideal = test::idealised;
  const LayerCostKey k1 = ideal(layer_cost_key(w, s)), k15 = ideal(layer_cost_key(wi, s));
  EXPECT_EQ(k15.expert_load, 1.5);
  const double c1 = transformer_costs(k1).moe_block.forward.compute_s;
  const double c15 = transformer_costs(k15).moe_block.forward.compute_s;
  const double expert_flops = 2.0 * (2 * 4096) * (3.0 * 14336 * 4096 / 2);
  // The expert GEMMs run at the grouped GEMMs' efficiency (the weight GEMMs' where unset).
  const double expert_efficiency = k1.device.expert_gemm_efficiency > 0 ? k1.device.expert_gemm_efficiency
                                                                        : k1.device.weight_gemm_efficiency;
  const double T_e = expert_flops / (k1.device.weight_gemm_peak_flops * expert_efficiency);
  EXPECT_NEAR(c15 - c1, 0.5 * T_e, 1e-9 * T_e);
  EXPECT_EQ(transformer_costs(k15).block.forward.compute_s, transformer_costs(k1).block.forward.compute_s);

  const IterationPlan p1 = plan_iteration(w, s), p15 = plan_iteration(wi, s);
  ASSERT_TRUE(p1.feasible && p15.feasible);
  ASSERT_EQ(p1.graph.tasks.size(), p15.graph.tasks.size());
  std::size_t all_to_alls = 0, expert_tp = 0;
  for (std::size_t i = 0; i < p1.graph.tasks.size(); ++i) {
    const Task &a = p1.graph.tasks[i], &b = p15.graph.tasks[i];
    if (a.purpose == CommPurpose::ExpertParallel) {
      EXPECT_DOUBLE_EQ(a.bytes, 33554432.0);
      EXPECT_DOUBLE_EQ(b.bytes, 1.5 * 33554432.0);
      ++all_to_alls;
    } else if (a.purpose == CommPurpose::TensorParallel && a.bytes == 67108864.0) {
      EXPECT_DOUBLE_EQ(b.bytes, 1.5 * 67108864.0);
      ++expert_tp;
    } else {
      EXPECT_EQ(a.bytes, b.bytes) << i;
    }
  }
  EXPECT_GT(all_to_alls, 0u);
  EXPECT_GT(expert_tp, 0u);
  const double kept = (2.0 * 4096 * 4096 + 3.0 * 2 * 4096 * 14336) / 2 * w.bytes_per_element;  // per block
  EXPECT_DOUBLE_EQ(kept, 385875968.0);
  EXPECT_NEAR(p15.memory.activations - p1.memory.activations, 0.5 * kept * 32 * microbatches_in_flight(s, 0),
              1e-9 * p1.memory.activations);
  EXPECT_EQ(p15.memory.weights, p1.memory.weights);
  EXPECT_EQ(p15.memory.optimizer, p1.memory.optimizer);

  Strategy one = s;
  one.ep = 1;
  const IterationPlan q1 = plan_iteration(w, one), q15 = plan_iteration(wi, one);
  EXPECT_EQ(q1.memory.activations, q15.memory.activations);
  EXPECT_EQ(layer_cost_key(wi, one), layer_cost_key(w, one));
}

// The capacity factor (model.moe_capacity_factor, model.moe_pad_to_capacity; Megatron-Core's
// --moe-expert-capacity-factor and --moe-pad-expert-input-to-capacity) against the load the
// busiest EP rank's experts then take, worked by hand: dropless, the imbalance I with ep > 1 and 1
// with every expert on each rank; capped at c, min(that, c); padded, exactly c. The load scales
// exactly what the imbalance scales (the test above): the expert GEMMs' compute on an idealised
// device, the dispatch/combine All-to-Alls' bytes and the expert activations kept.
TEST(ExpertParallel, CapacityFactorCapsOrPadsTheExpertsLoad) {
  struct Case {
    double imbalance, capacity;
    bool pad;
    std::uint32_t ep;
    double load;
  };
  const Case cases[] = {{1.5, 0, false, 2, 1.5},    {1.5, 1.25, false, 2, 1.25}, {1.5, 2, false, 2, 1.5},
                        {1.0, 1.25, true, 2, 1.25}, {1.5, 1.25, true, 2, 1.25},  {1.5, 1.25, true, 1, 1.25},
                        {1.5, 1.25, false, 1, 1.0}, {1.0, 0.75, false, 1, 0.75}};  // 0.75: whole rows
  Workload base = mixtral(64);
  base.device.hbm_bytes = 1e15;
  for (const Case& c : cases) {
    Workload w = base;
    w.moe_imbalance = c.imbalance;
    w.moe_capacity_factor = c.capacity;
    w.moe_pad_to_capacity = c.pad;
    EXPECT_DOUBLE_EQ(w.expert_load(c.ep), c.load) << c.capacity << " " << c.ep;
    const Strategy s = strategy(8, 2, 1, c.ep, 8);
    const LayerCostKey k1 = test::idealised(layer_cost_key(base, s)),
                       kc = test::idealised(layer_cost_key(w, s));
    EXPECT_EQ(kc.expert_load, c.load);
    // The rank's experts take k x its tokens' rows whatever ep is (balanced).
    const double T_e = 2.0 * (2 * 4096) * (3.0 * 14336 * 4096 / 2) /
                       (k1.device.weight_gemm_peak_flops * k1.device.expert_gemm_efficiency);
    EXPECT_NEAR(
        transformer_costs(kc).moe_block.forward.compute_s - transformer_costs(k1).moe_block.forward.compute_s,
        (c.load - 1) * T_e, 1e-9 * T_e)
        << c.capacity << " " << c.ep;
    const IterationPlan p1 = plan_iteration(base, s), pc = plan_iteration(w, s);
    for (std::size_t i = 0; i < p1.graph.tasks.size(); ++i) {
      if (p1.graph.tasks[i].purpose == CommPurpose::ExpertParallel) {
        EXPECT_DOUBLE_EQ(pc.graph.tasks[i].bytes, c.load * p1.graph.tasks[i].bytes);
      }
    }
    const double kept = 385875968.0;  // expert activations per block (the test above)
    EXPECT_NEAR(pc.memory.activations - p1.memory.activations,
                (c.load - 1) * kept * 32 * microbatches_in_flight(s, 0), 1e-9 * p1.memory.activations);
  }
  // Padding needs a capacity; a capacity below 0 is bad input.
  WorkloadSpec spec;
  spec.model = "mixtral-8x7b";
  spec.device = "h100";
  spec.moe_pad_to_capacity = true;
  EXPECT_THROW(make_workload(spec, 8), BadInput);
  spec.moe_capacity_factor = 1.0;
  EXPECT_EQ(make_workload(spec, 8).expert_load(2), 1.0);
  // The model file's capacity_factor is the default; the key overrides it (0: dropless).
  Model capped = builtin_model("mixtral-8x7b");
  capped.transformer->moe->capacity_factor = 1.25;
  spec.moe_capacity_factor.reset();
  EXPECT_EQ(make_workload(spec, 8, capped, builtin_device("h100")).expert_load(2), 1.25);
  spec.moe_pad_to_capacity = false;
  spec.moe_capacity_factor = 0;
  spec.moe_imbalance = 1.5;
  EXPECT_EQ(make_workload(spec, 8, capped, builtin_device("h100")).expert_load(2), 1.5);
}

TEST(ExpertParallel, BadDegreesNameStrategyEp) {
  const Workload w = mixtral(64);
  const auto where = test::strategy_error_key;
  EXPECT_EQ(where(w, strategy(8, 2, 2, 16, 8)), "key strategy.ep");  // 16 experts? 8 only
  EXPECT_EQ(where(w, strategy(6, 2, 2, 4, 2)), "key strategy.ep");   // 4 does not divide dp 6
  const Workload dense = make_workload(builtin_model("llama3-8b"), builtin_device("h100"), "bf16", 64);
  EXPECT_EQ(where(dense, strategy(8, 1, 1, 2, 8)), "key strategy.ep");
  EXPECT_EQ(where(w, strategy(8, 2, 2, 4, 8)), "no error");
}

}  // namespace
}  // namespace toposweep
