// The communication-aware lower bound of the exact strategy search (opt/strategy_bound.hpp):
// never above the simulated iteration time of any candidate of small spaces (with the knobs the
// enumeration leaves at their defaults flipped too: blocking sends, no scatter/gather), never
// below the compute bound, strictly above it where TP collectives are exposed; and the search
// with it returns the brute force's top k.
#include "toposweep/opt/strategy_bound.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_config.hpp"
#include "toposweep/opt/strategy_search.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/workload/compute_bound.hpp"
#include "toposweep/workload/device.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/model_library.hpp"

namespace toposweep::opt {
namespace {

struct Space {
  Network net;
  Workload workload;
  sim::SimOptions options;
  StrategySpace space;
  std::string label;
};

// A small transformer on `servers` x `gpus` GPUs; `per_operator` off times compute by FLOPs.
Space small_space(const char* kind, const char* servers, const char* gpus, const char* bandwidth,
                  bool per_operator, double batch) {
  Space c;
  const Config config = testing::make_config({{"topology.kind", kind},
                                              {"topology.servers", servers},
                                              {"server.gpus", gpus},
                                              {"topology.link_bandwidth", bandwidth}});
  c.net = network_from_config(config);
  c.options = sim::sim_options_from_config(config);
  TransformerShape shape;
  shape.layers = 8, shape.hidden = 512, shape.heads = 8, shape.kv_heads = 8, shape.ffn_hidden = 2048;
  shape.seq_len = 512, shape.vocab = 4000, shape.max_positions = 512;
  c.workload = make_workload(transformer_model("small", shape), builtin_device("a100"), "fp16", batch);
  c.workload.per_operator = per_operator;
  c.space.max_microbatches = 8;
  c.label = std::string(kind) + " " + servers + "x" + gpus + " at " + bandwidth +
            (per_operator ? ", per-operator" : ", FLOP-timed");
  return c;
}

// The same small transformer with routed experts: 4 of 1024, top 2, the first block dense (batch 16).
void with_experts(Space& c) {
  TransformerShape shape = *c.workload.model.transformer;
  shape.moe = MoeShape{4, 2, 1024, 0, 1, 0};
  c.workload = make_workload(transformer_model("small-moe", shape), builtin_device("a100"), "fp16", 16);
}

std::vector<Space> spaces() {
  std::vector<Space> out;
  out.push_back(small_space("switch", "2", "4", "25Gbps", true, 16));
  out.push_back(small_space("switch", "4", "2", "10Gbps", true, 16));
  out.push_back(small_space("fattree", "4", "4", "100Gbps", false, 32));
  out.push_back(small_space("switch", "2", "8", "100Gbps", true, 32));
  // Context parallelism (fused attention, cp 1 or 2): dp x cp gradient groups, s / cp sends.
  // Four servers of four GPUs, and eight of one (every CP and gradient group across servers).
  for (const auto& [servers, gpus, bandwidth] :
       {std::array<const char*, 3>{"4", "4", "25Gbps"}, std::array<const char*, 3>{"8", "1", "1Gbps"}}) {
    Space cp = small_space("switch", servers, gpus, bandwidth, true, 16);
    cp.workload.fused_attention = true;
    cp.space.set(&StrategyKnobs::cp, {1, 2});
    cp.label += ", cp 1|2";
    out.push_back(std::move(cp));
  }
  // Mixture of Experts (4 experts, top 2, ep 1 or 2): expert gradients reduce over dp / ep
  // replicas, which the bound leaves out of its DP cut. Slow links: the DP cut decides.
  for (const char* bandwidth : {"25Gbps", "1Gbps"}) {
    Space moe = small_space("switch", "4", "2", bandwidth, true, 16);
    with_experts(moe);
    moe.space.set(&StrategyKnobs::ep, {1, 2});
    moe.label = std::string("switch 4x2 at ") + bandwidth + ", MoE, ep 1|2";
    out.push_back(std::move(moe));
  }
  // Expert tensor parallelism (etp 0, 1, 2 up to tp 4 inside a server): the dispatcher's gathers
  // over the TP group or its pairs, the EP groups folded over tp / etp x dp.
  Space folded = small_space("switch", "2", "4", "25Gbps", true, 16);
  with_experts(folded);
  folded.space.set(&StrategyKnobs::ep, {1, 2, 4});
  folded.space.set(&StrategyKnobs::etp, {0, 1, 2});
  folded.space.max_microbatches = 4;
  folded.label = "switch 2x4 at 25Gbps, MoE, ep 1|2|4, etp 0|1|2";
  out.push_back(std::move(folded));
  return out;
}

double simulated(const Space& c, const Strategy& s) {
  const IterationPlan plan = plan_iteration(c.workload, s);
  if (!plan.feasible) return -1;
  return sim::simulate_iteration(c.net, plan.graph, c.options).job(0).iteration_time_s;
}

TEST(StrategyBound, NeverAboveTheSimulatedTime) {
  std::size_t checked = 0, tighter = 0, with_cp = 0, cp_tighter = 0, with_ep = 0, with_prefetch = 0,
              partly_split = 0, block_recompute = 0;
  for (const Space& c : spaces()) {
    StrategyScorer scorer(c.workload, c.net, c.options);
    StrategyBound bound(c.workload, c.net, c.options, PlacementKind::RankOrder,
                        scorer.placement_for(c.net.gpu_count()));
    ASSERT_TRUE(bound.with_communication()) << c.label;
    std::size_t replicated = 0;
    for (Strategy s : feasible_strategies(c.workload, c.net.gpu_count(), c.space)) {
      // The knobs the enumeration keeps at their defaults, both ways; and ZeRO-3 with and without
      // FSDP's prefetch (strategy.param_gather_overlap) on every fourth strategy where several
      // ranks share the weights (all of them would double the test's time under the sanitizers).
      // Block recomputation (strategy.recompute_layers = 1) on every fully recomputed transformer.
      const bool zero3 = s.grad_replicas() > 1 && replicated++ % 4 == 0;
      const bool blocks = s.recompute == Recompute::Full && c.workload.model.transformer.has_value();
      for (int variant = 0; variant < 6; ++variant) {
        if ((variant == 3 || variant == 4) && !zero3) continue;
        if (variant == 5 && !blocks) continue;
        Strategy v = s;
        if (variant == 5) v.recompute_layers = 1;
        v.p2p_overlap = variant != 1;
        v.scatter_gather = variant != 2;
        if (variant == 3 || variant == 4) {
          v.zero = 3;
          v.param_gather_overlap = variant == 4;
        }
        const double t = simulated(c, v);
        if (t < 0) continue;
        const double b = bound(v);
        const double compute = compute_lower_bound(c.workload, v, nullptr);
        ASSERT_LE(b, t) << c.label << ": " << strategy_to_json(v).dump();
        ASSERT_GE(b, compute * (1 - 1e-9)) << c.label << ": " << strategy_to_json(v).dump();
        ++checked;
        tighter += b > compute * (1 + 1e-6);
        with_cp += v.cp > 1;
        cp_tighter += v.cp > 1 && b > compute * (1 + 1e-6);
        with_ep += v.ep > 1;
        partly_split += v.expert_tp() > 1 && v.expert_tp() < v.tp;
        with_prefetch += v.param_gather_overlap;
        block_recompute += v.recompute_layers > 0;
      }
    }
  }
  EXPECT_GT(checked, 1000u);
  // TP collectives and sends count: most candidates with tp > 1 or pp > 1 get a higher bound.
  EXPECT_GT(tighter, checked / 4);
  // With context parallelism too (the bound used to fall back to compute alone there).
  EXPECT_GT(with_cp, 100u);
  EXPECT_GT(cp_tighter, with_cp / 4);
  EXPECT_GT(with_ep, 20u);
  EXPECT_GT(partly_split, 20u);  // etp 2 at tp 4: the gathers over the pairs
  EXPECT_GT(with_prefetch, 1000u);
  EXPECT_GT(block_recompute, 100u);
}

TEST(StrategyBound, ExposedTpCollectivesAddTheirIntraNodeTime) {
  // One stage, tp = 4 inside a server, no data parallelism, no overlap, FLOP-timed compute: the
  // bound is the compute bound plus microbatches x the pass's exposed collectives, each timed by
  // the intra-node formula (an independent sum over the layers' collective counts).
  Space c = small_space("switch", "2", "4", "25Gbps", false, 16);
  Strategy s;
  s.dp = 1, s.tp = 4, s.pp = 1, s.microbatches = 4;
  StrategyScorer scorer(c.workload, c.net, c.options);
  StrategyBound bound(c.workload, c.net, c.options, PlacementKind::RankOrder, scorer.placement_for(8));
  LayerCostKey key = layer_cost_key(c.workload, s);
  key.device = KernelDevice{1, 1, 1, 0, 1, {{1, 1}}, 1, 1, {}, 0, 1, 1};
  const TransformerCosts costs = transformer_costs(key);
  double comm = 0;
  for (const Layer& l : c.workload.model.layers) {
    const LayerCost* cost = cost_of_layer(costs, l);
    ASSERT_NE(cost, nullptr);
    for (const TpCollectives& n : {cost->forward.exposed, cost->backward.exposed}) {
      comm += n.allreduce *
              sim::intra_node_collective_time(CollectiveOp::AllReduce, 4, cost->tp_bytes, c.net.intra_link());
      EXPECT_EQ(n.reducescatter + n.allgather, 0u);  // none without sequence parallelism
    }
  }
  ASSERT_GT(comm, 0);
  const double compute = compute_lower_bound(c.workload, s, nullptr) / (1 - 1e-12);
  EXPECT_NEAR(bound(s), (compute + 4 * comm) * (1 - 1e-10), 1e-9 * compute);
  EXPECT_LE(bound(s), simulated(c, s));
  // dp = 2 across the two servers: each server's 4 TP ranks each need the other server's
  // gradient sum (ZeRO-0 AllReduce), all of it through the server's incoming links.
  s.dp = 2;
  double params = 0;
  for (const Layer& l : c.workload.model.layers) params += l.params_sharded / 4 + l.params_replicated;
  double ingress = 0;
  for (const Arc& a : c.net.arcs()) ingress += a.dst == 0 ? a.bandwidth_Bps : 0;
  const double reduction = 4 * params * c.workload.grad_bytes_per_element / ingress;
  EXPECT_GE(bound(s), reduction * (1 - 1e-9));
  EXPECT_LE(bound(s), simulated(c, s));
  s.dp = 1;
  // Compute: the compute bound alone.
  StrategyBound compute_only(c.workload, c.net, c.options, PlacementKind::RankOrder, scorer.placement_for(8),
                             BoundKind::Compute);
  EXPECT_FALSE(compute_only.with_communication());
  EXPECT_EQ(compute_only(s), compute_lower_bound(c.workload, s, nullptr));
}

TEST(StrategyBound, ExpertCollectivesTakeTheExpertTensorRanksTime) {
  // The same with routed experts split over pairs of the 4 TP ranks (etp 2, sequence
  // parallelism): the dense collectives at 4 ranks and the token dispatcher's at 2, each of its
  // own bytes, by the intra-node formula.
  Space c = small_space("switch", "2", "4", "25Gbps", false, 16);
  with_experts(c);
  c.workload.per_operator = false;
  Strategy s;
  s.dp = 1, s.tp = 4, s.pp = 1, s.microbatches = 4, s.etp = 2, s.sequence_parallel = true;
  StrategyScorer scorer(c.workload, c.net, c.options);
  StrategyBound bound(c.workload, c.net, c.options, PlacementKind::RankOrder, scorer.placement_for(8));
  LayerCostKey key = layer_cost_key(c.workload, s);
  key.device = KernelDevice{1, 1, 1, 0, 1, {{1, 1}}, 1, 1, {}, 0, 1, 1};
  const TransformerCosts costs = transformer_costs(key);
  const auto time = [&](const TpCollectives& n, std::uint32_t ranks, double bytes) {
    const LinkClass& link = c.net.intra_link();
    return n.allreduce * sim::intra_node_collective_time(CollectiveOp::AllReduce, ranks, bytes, link) +
           n.reducescatter *
               sim::intra_node_collective_time(CollectiveOp::ReduceScatter, ranks, bytes, link) +
           n.allgather * sim::intra_node_collective_time(CollectiveOp::AllGather, ranks, bytes, link);
  };
  double comm = 0, expert = 0;
  for (const Layer& l : c.workload.model.layers) {
    const LayerCost* cost = cost_of_layer(costs, l);
    ASSERT_NE(cost, nullptr);
    for (const PassCost* p : {&cost->forward, &cost->backward}) {
      comm += time(p->exposed, 4, cost->tp_bytes);
      expert += time(p->expert, 2, cost->expert_tp_bytes);
    }
  }
  ASSERT_GT(expert, 0);
  const double compute = compute_lower_bound(c.workload, s, nullptr) / (1 - 1e-12);
  EXPECT_NEAR(bound(s), (compute + 4 * (comm + expert)) * (1 - 1e-10), 1e-9 * compute);
  EXPECT_LE(bound(s), simulated(c, s));
}

TEST(StrategyBound, SearchTopKEqualsSortingEverySimulatedCandidate) {
  for (const Space& c : spaces()) {
    struct Timed {
      double time;
      std::size_t index;
    };
    std::vector<Timed> all;
    const auto candidates = feasible_strategies(c.workload, c.net.gpu_count(), c.space);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const double t = simulated(c, candidates[i]);
      if (t >= 0) all.push_back({t, i});
    }
    std::sort(all.begin(), all.end(), [](const Timed& a, const Timed& b) {
      return a.time < b.time || (a.time == b.time && a.index < b.index);
    });
    for (BoundKind kind : {BoundKind::Compute, BoundKind::Communication}) {
      StrategyScorer scorer(c.workload, c.net, c.options);
      const auto r = exhaustive_strategy_search(scorer, c.workload, c.space, 7, {}, nullptr, kind);
      ASSERT_EQ(r.top.size(), std::min<std::size_t>(7, all.size())) << c.label;
      for (std::size_t i = 0; i < r.top.size(); ++i) {
        EXPECT_EQ(r.top[i].iteration_time_s, all[i].time) << c.label << " rank " << i;
        EXPECT_TRUE(r.top[i].strategy == candidates[all[i].index]) << c.label << " rank " << i;
      }
      EXPECT_EQ(r.simulations, scorer.simulations()) << c.label;
      EXPECT_EQ(r.evaluated + r.pruned, all.size()) << c.label;
    }
  }
}

}  // namespace
}  // namespace toposweep::opt
