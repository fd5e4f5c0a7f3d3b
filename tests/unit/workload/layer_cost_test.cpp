// The per-operator compute model against values derived apart from it: hand-counted waves,
// closed-form GEMM and FLOP totals on idealised devices, the A100 parameters' calibration set
// (Korthikanti et al. 2022 Table 4), and the strategy options' effects worked out by hand.
#include "toposweep/workload/layer_cost.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "toposweep/workload/devices.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/model_library.hpp"
#include "toposweep/workload/spec.hpp"
#include "workload_test_helpers.hpp"

namespace toposweep {
namespace {

KernelDevice a100_kernels() {
  Workload w = make_workload(builtin_model("gpt3-1.3b"), builtin_device("a100"), "fp16", 8);
  return kernel_device(w);
}

TEST(LayerCost, WaveQuantizationCountsTilesAndWaves) {
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> tiles{{256, 128}, {128, 256}, {128, 128}};
  // 256 x 256 outputs: two 256x128 tiles or four 128x128 ones in one wave of 108 SMs.
  EXPECT_DOUBLE_EQ(wave_efficiency(256, 256, 1, 108, tiles), 4.0 / 108);
  // 1000 x 1000: 128x128 tiles, 8 x 8 = 64 of them (partial at the edges), one wave:
  // 1e6 / 128^2 useful tiles of 108 SM slots.
  EXPECT_DOUBLE_EQ(wave_efficiency(1000, 1000, 1, 108, tiles), 1e6 / (128.0 * 128) / 108);
  // The matmul benchmark's 6912 x 16384: 27 x 128 = 3,456 tiles of 256x128, exactly 32 waves.
  EXPECT_DOUBLE_EQ(wave_efficiency(6912, 16384, 1, 108, tiles), 1.0);
  // 109 full tiles need a second wave that is almost empty: 109 / 216.
  EXPECT_DOUBLE_EQ(wave_efficiency(109 * 256, 128, 1, 108, {{256, 128}}), 109.0 / 216);
  // A batch of 96 GEMMs of 2048 x 128 (attention scores x V): 8 tiles each, 768 tiles, 8 waves
  // of 108 (864 slots), all tiles full.
  EXPECT_DOUBLE_EQ(wave_efficiency(2048, 128, 96, 108, {{256, 128}}), 768.0 / 864);
}

TEST(LayerCost, GemmIsComputeMemoryOrLaunchBound) {
  const KernelDevice d = a100_kernels();
  const double rate = 312e12 * 0.767;
  // 12 x 9 = 108 full 256x128 tiles: one full wave; FLOPs at the sustained rate (its 42 MB of
  // operands would take a quarter of that).
  EXPECT_DOUBLE_EQ(gemm_seconds(d, 12 * 256, 9 * 128, 4096, 1, 2, 2), 2.0 * 3072 * 1152 * 4096 / rate);
  // K = 128: the operands and the output dominate: 2 (M K + K N) + 2 M N bytes at 1.381 TB/s.
  const double M = 108 * 256, N = 128, K = 128;
  EXPECT_DOUBLE_EQ(gemm_seconds(d, M, N, K, 1, 2, 2),
                   (2 * (M * K + K * N) + 2 * M * N) / (2.039e12 * 0.6773));
  // A tiny GEMM takes the kernel floor.
  EXPECT_DOUBLE_EQ(gemm_seconds(d, 8, 8, 8, 1, 2, 2), 4e-6);
  EXPECT_DOUBLE_EQ(memory_seconds(d, 2.039e12 * 0.6773), 1.0);
}

// On an idealised device (every tile full, memory free, no floor) a layer's kernels take its
// FLOPs at the sustained rate: the block's forward is 24 b s h^2 / t + 4 b s^2 h / t FLOPs (the
// layer's forward_flops over t), its backward twice that, plus the recomputed forward.
TEST(LayerCost, IdealDeviceRecoversTheLayerFlops) {
  TransformerShape shape;
  shape.layers = 4;
  shape.hidden = 1024;
  shape.heads = 16;
  shape.seq_len = 512;
  shape.vocab = 32000;
  const Model m = transformer_model("toy", shape);
  Workload w = make_workload(m, builtin_device("a100"), "fp16", 8);
  Strategy s;
  s.tp = 4;
  s.dp = 2;
  s.microbatches = 1;  // 4 sequences per microbatch
  LayerCostKey key = test::idealised(layer_cost_key(w, s));
  const double rate = 312e12 * 0.767, b = 4;
  const Layer& block = m.layers[1];
  const TransformerCosts c = transformer_costs(key);
  EXPECT_NEAR(c.block.forward.compute_s, b * block.forward_flops / 4 / rate, 1e-12);
  EXPECT_NEAR(c.block.backward.compute_s, b * block.backward_flops / 4 / rate, 1e-12);
  key.recompute = Recompute::Full;
  EXPECT_NEAR(transformer_costs(key).block.backward.compute_s, 3 * b * block.forward_flops / 4 / rate, 1e-12);
  // Selective: the attention core again, QK^T and x V: 4 b s^2 h / t FLOPs.
  key.recompute = Recompute::Selective;
  EXPECT_NEAR(transformer_costs(key).block.backward.compute_s,
              (b * block.backward_flops + 4 * b * 512.0 * 512 * 1024) / 4 / rate, 1e-12);
  // The head's logits GEMM forward, dgrad and wgrad: 2 b s h V / t FLOPs each.
  EXPECT_NEAR(c.head.forward.compute_s, 2 * b * 512 * 1024 * 32000.0 / 4 / rate, 1e-12);
  EXPECT_NEAR(c.head.backward.compute_s, 2 * 2 * b * 512 * 1024 * 32000.0 / 4 / rate, 1e-12);
}

// Korthikanti et al. 2022 Table 4: one layer of the 22B model (t = 8, b = 4), Megatron-LM with
// the asynchronous backward collective, forward / backward ms. These ten numbers calibrated the
// A100's two fitted parameters, so this checks the fit, not a prediction.
TEST(LayerCost, KorthikantiTable4IsReproducedWithinThreePercent) {
  TransformerShape shape;
  shape.layers = 48;
  shape.hidden = 6144;
  shape.heads = 64;
  shape.seq_len = 2048;
  shape.vocab = 51200;
  shape.max_positions = 2048;
  const Workload w = make_workload(transformer_model("22b", shape), builtin_device("a100"), "fp16", 4);
  struct Row {
    bool sp;
    Recompute r;
    double fwd_ms, bwd_ms;
  };
  const Row rows[] = {{false, Recompute::None, 7.7, 11.9},
                      {true, Recompute::None, 7.2, 11.8},
                      {false, Recompute::Full, 7.7, 19.5},
                      {false, Recompute::Selective, 7.7, 13.2},
                      {true, Recompute::Selective, 7.2, 13.1}};
  const LinkClass& nv = w.device.intra_server;
  for (const Row& row : rows) {
    Strategy s;
    s.tp = 8;
    s.microbatches = 1;
    s.sequence_parallel = row.sp;
    s.recompute = row.r;
    s.tp_overlap = TpOverlap::Backward;
    const LayerCost c = transformer_costs(layer_cost_key(w, s)).block;
    auto comm = [&](const TpCollectives& n) {
      return n.allreduce * intra_collective_seconds(nv, CollectiveOp::AllReduce, c.tp_bytes, 8) +
             n.reducescatter * intra_collective_seconds(nv, CollectiveOp::ReduceScatter, c.tp_bytes, 8) +
             n.allgather * intra_collective_seconds(nv, CollectiveOp::AllGather, c.tp_bytes, 8);
    };
    const double fwd = (c.forward.compute_s + comm(c.forward.exposed)) * 1e3;
    const double bwd = (c.backward.compute_s + comm(c.backward.exposed)) * 1e3;
    EXPECT_NEAR(fwd, row.fwd_ms, 0.03 * row.fwd_ms) << row.sp << " " << recompute_name(row.r);
    EXPECT_NEAR(bwd, row.bwd_ms, 0.03 * row.bwd_ms) << row.sp << " " << recompute_name(row.r);
  }
}

Strategy tp8(TpOverlap o, bool sp = false) {
  Strategy s;
  s.tp = 8;
  s.microbatches = 1;
  s.tp_overlap = o;
  s.sequence_parallel = sp;
  return s;
}

const Workload& gpt3_175b() {
  static const Workload w = make_workload(builtin_model("gpt3-175b"), builtin_device("a100"), "fp16", 1);
  return w;
}

// Which collectives each option hides, and the SM share they cost: with tp_overlap = backward the
// two input-gradient AllReduces run under the weight-gradient GEMMs and take 24 of 108 SMs while
// they last (an A100's 24 NCCL channels).
TEST(LayerCost, TpOverlapMovesCollectivesUnderGemmsAndCostsTheirSms) {
  const Workload& w = gpt3_175b();
  const LayerCost none = transformer_costs(layer_cost_key(w, tp8(TpOverlap::None))).block;
  const LayerCost back = transformer_costs(layer_cost_key(w, tp8(TpOverlap::Backward))).block;
  const LayerCost full = transformer_costs(layer_cost_key(w, tp8(TpOverlap::Full))).block;
  EXPECT_EQ(none.forward.exposed, (TpCollectives{2, 0, 0}));
  EXPECT_EQ(none.backward.exposed, (TpCollectives{2, 0, 0}));
  EXPECT_EQ(back.backward.hidden, (TpCollectives{2, 0, 0}));
  EXPECT_EQ(back.backward.exposed, (TpCollectives{0, 0, 0}));
  EXPECT_EQ(back.forward, none.forward);
  EXPECT_EQ(full.forward.hidden, (TpCollectives{2, 0, 0}));
  // 2048 x 12288 fp16 per rank: 50.3 MB; ring AllReduce over 8: 8.4 us + 14 x 3.4 us + 1.75 x
  // 50.3 MB at 230 GB/s.
  const double X = 2048.0 * 12288 * 2;
  const double ar = 8.4e-6 + 14 * 3.4e-6 + 1.75 * X / 230e9;
  EXPECT_DOUBLE_EQ(back.tp_bytes, X);
  EXPECT_NEAR(back.backward.compute_s - none.backward.compute_s, 2 * (24.0 / 108) * ar, 1e-12);
  // Sequence parallelism, backward overlap: the re-gathers (AG) and input-gradient RS of QKV and
  // FFN1 hidden; the incoming gradients' AG before proj and FFN2 exposed.
  const LayerCost sp = transformer_costs(layer_cost_key(w, tp8(TpOverlap::Backward, true))).block;
  EXPECT_EQ(sp.forward.exposed, (TpCollectives{0, 2, 2}));
  EXPECT_EQ(sp.backward.hidden, (TpCollectives{0, 2, 2}));
  EXPECT_EQ(sp.backward.exposed, (TpCollectives{0, 0, 2}));
}

// Each overlapped collective hides under its own GEMM (Transformer Engine's userbuffers pair
// QKV and FFN1 with their input's AllGather, proj and FFN2 with their output's ReduceScatter),
// not under the whole pass: where the collective outlasts its GEMM the pair takes the
// collective's time. A tiny block (h = 64, 256 tokens, tp = 8 with SP) has every projection at
// the 4 us kernel floor and every collective far longer, so full overlap adds, per pass, each
// collective's time less its GEMM's to the kernels' sum.
TEST(LayerCost, ACollectiveLongerThanItsGemmExtendsThePass) {
  TransformerShape shape;
  shape.layers = 2;
  shape.hidden = 64;
  shape.heads = 8;
  shape.seq_len = 256;
  shape.vocab = 1024;
  shape.max_positions = 256;
  const Workload w = make_workload(transformer_model("tiny", shape), builtin_device("h100"), "bf16", 1);
  const KernelDevice d = kernel_device(w);
  ASSERT_DOUBLE_EQ(d.kernel_floor_s, 4e-6);
  Strategy s;
  s.tp = 8;
  s.microbatches = 1;
  s.sequence_parallel = true;
  const LayerCost none = transformer_costs(layer_cost_key(w, s)).block;
  s.tp_overlap = TpOverlap::Full;
  const LayerCost full = transformer_costs(layer_cost_key(w, s)).block;
  ASSERT_EQ(full.forward.hidden, (TpCollectives{0, 2, 2}));
  const LinkClass& nv = w.device.intra_server;
  const double ag = intra_collective_seconds(nv, CollectiveOp::AllGather, full.tp_bytes, 8);
  const double rs = intra_collective_seconds(nv, CollectiveOp::ReduceScatter, full.tp_bytes, 8);
  ASSERT_GT(std::min(ag, rs), 2 * 4e-6);  // longer than a GEMM slowed by the collective's SMs
  EXPECT_NEAR(full.forward.compute_s - none.forward.compute_s, 2 * (ag - 4e-6) + 2 * (rs - 4e-6), 1e-12);
}

// Without gradient-accumulation fusion every microbatch adds its gradients with a separate
// kernel: read both, write the sum, 3 x 2 bytes per local parameter at the memory bandwidth (and
// the weight-gradient GEMMs write fp16 instead of accumulating fp32; they stay compute bound).
TEST(LayerCost, GradientAccumulationWithoutFusionStreamsTheGradients) {
  const Workload& w = gpt3_175b();
  Strategy s = tp8(TpOverlap::None);
  const double fused = transformer_costs(layer_cost_key(w, s)).block.backward.compute_s;
  s.grad_accum_fusion = false;
  const double separate = transformer_costs(layer_cost_key(w, s)).block.backward.compute_s;
  const double h = 12288, params = (12 * h * h + 7 * h) / 8 + 6 * h;
  EXPECT_NEAR(separate - fused, 3 * 2 * params / (2.039e12 * 0.6773), 1e-9);
}

// A fused (flash) attention kernel: causal QK^T and x V over half the score matrix at the
// device's flash fraction, 2 b (a/t) s^2 d FLOPs forward and 2.5 times that backward.
TEST(LayerCost, FusedAttentionReplacesTheScoreKernels) {
  Workload w = gpt3_175b();
  const Strategy s = tp8(TpOverlap::None);
  const LayerCost plain = transformer_costs(layer_cost_key(w, s)).block;
  w.fused_attention = true;
  const LayerCost fused = transformer_costs(layer_cost_key(w, s)).block;
  const KernelDevice d = kernel_device(w);
  const double b = 1, at = 96 / 8, S = 2048, hd = 128, scores = b * at * S * S;
  const double unfused_fwd = gemm_seconds(d, S, S, hd, b * at, 2, 2) +
                             gemm_seconds(d, S, hd, S, b * at, 2, 2) + memory_seconds(d, 4 * scores) +
                             memory_seconds(d, 5 * scores) + memory_seconds(d, 4 * 2048 * 12288.0 / 8);
  EXPECT_NEAR(plain.forward.compute_s - fused.forward.compute_s,
              unfused_fwd - 2 * b * at * S * S * hd / (312e12 * 0.6), 1e-12);
  // Selective recomputation has nothing left to recompute.
  Strategy sel = s;
  sel.recompute = Recompute::Selective;
  EXPECT_DOUBLE_EQ(transformer_costs(layer_cost_key(w, sel)).block.backward.compute_s,
                   fused.backward.compute_s);
  // A device without a flash fraction cannot run it.
  WorkloadSpec spec;
  spec.model = "gpt3-1.3b";
  spec.device = "v100";
  spec.fused_attention = true;
  EXPECT_THROW(make_workload(spec, 8), BadInput);
}

// model.fused_attention unset: the device's default (flash on Hopper and later, the score kernels
// on the A100 and V100); a value given wins.
TEST(LayerCost, FusedAttentionDefaultsToTheDevices) {
  WorkloadSpec spec;
  spec.model = "gpt3-1.3b";
  for (const char* name : {"h100", "h200", "h800", "b200"}) {
    spec.device = name;
    spec.fused_attention.reset();
    EXPECT_TRUE(make_workload(spec, 8).fused_attention) << name;
    spec.fused_attention = false;
    EXPECT_FALSE(make_workload(spec, 8).fused_attention) << name;
  }
  for (const char* name : {"a100", "v100"}) {
    spec.device = name;
    spec.fused_attention.reset();
    EXPECT_FALSE(make_workload(spec, 8).fused_attention) << name;
  }
  spec.device = "a100";
  spec.fused_attention = true;
  EXPECT_TRUE(make_workload(spec, 8).fused_attention);
  // Mixed servers: the default holds only where every kind runs fused attention.
  const std::vector<std::uint32_t> gpus{8, 8};
  const auto resolve = [](const std::string& name) { return builtin_device(name); };
  spec.fused_attention.reset();
  for (const auto& [text, fused] : {std::pair{"h100*1,h200*1", true}, std::pair{"a100*1,h100*1", false}}) {
    spec.device = text;
    const Workload w =
        make_workload(spec, builtin_model("gpt3-1.3b"), server_devices(text, 2, resolve), gpus);
    EXPECT_EQ(w.fused_attention, fused) << text;
  }
}

TEST(LayerCost, CacheReturnsTheSameCostsForTheSameShape) {
  const Workload& w = gpt3_175b();
  LayerCostCache cache;
  const LayerCostKey k = layer_cost_key(w, tp8(TpOverlap::None));
  const TransformerCosts& a = cache.get(k);
  EXPECT_EQ(cache.get(k).block, a.block);
  EXPECT_EQ(cache.size(), 1u);
  Strategy other = tp8(TpOverlap::None);
  other.tp = 4;
  cache.get(layer_cost_key(w, other));
  EXPECT_EQ(cache.size(), 2u);
  // A plan with the cache equals one without.
  const Workload small = make_workload(builtin_model("gpt3-1.3b"), builtin_device("a100"), "fp16", 8);
  Strategy s = tp8(TpOverlap::Backward);
  s.tp = 4;
  s.dp = 2;
  s.microbatches = 2;
  const IterationPlan with = plan_iteration(small, s, &cache), without = plan_iteration(small, s);
  ASSERT_EQ(with.graph.tasks.size(), without.graph.tasks.size());
  for (std::size_t i = 0; i < with.graph.tasks.size(); ++i)
    EXPECT_EQ(with.graph.tasks[i].duration_s, without.graph.tasks[i].duration_s) << i;
}

// A smaller tp gives each GPU larger GEMMs, which reach more of the sustained rate: the same
// model's block on 4 GPUs takes less than twice its time on 8.
TEST(LayerCost, SmallerTensorParallelismGivesLargerMoreEfficientGemms) {
  const Workload w = make_workload(builtin_model("gpt3-13b"), builtin_device("a100"), "fp16", 1);
  Strategy s;
  s.microbatches = 1;
  s.tp = 8;
  const double t8 = transformer_costs(layer_cost_key(w, s)).block.forward.compute_s;
  s.tp = 4;
  const double t4 = transformer_costs(layer_cost_key(w, s)).block.forward.compute_s;
  EXPECT_LT(t4, 2 * t8);
  EXPECT_GT(t4, t8);
}

}  // namespace
}  // namespace toposweep
