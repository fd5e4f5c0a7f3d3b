// model.softmax = eager: unfused attention's score kernels as stock PyTorch (and Megatron's
// fallback) runs them, against byte counts worked out by hand from the kernel chain, not from the
// block table: scale (read e, write e), masked_fill (e, e), .float() (e, 4), fp32 softmax (4, 4),
// .to(bf16) (4, e), in place of Megatron's one fused kernel (e, e); backward the same chain in
// reverse with the softmax reading its output and the incoming gradient (4 + 4, 4) against the
// fused kernel's (e + e, e). Dropout is the same in both.
#include <gtest/gtest.h>

#include "toposweep/workload/layer_cost.hpp"
#include "toposweep/workload/model_library.hpp"
#include "toposweep/workload/spec.hpp"
#include "workload_test_helpers.hpp"

namespace toposweep {
namespace {

Strategy tp8(Recompute r = Recompute::None) {
  Strategy s;
  s.tp = 8;
  s.microbatches = 1;
  s.recompute = r;
  return s;
}

Workload gpt3_175b(SoftmaxKind k) {
  Model m = builtin_model("gpt3-175b");
  if (k == SoftmaxKind::Eager) m = with_softmax(m, k, "test");
  return make_workload(std::move(m), builtin_device("a100"), "fp16", 1);
}

// One score matrix element on one TP rank: 96 / 8 heads x 2048^2, microbatch 1.
constexpr double kScores = 96.0 / 8 * 2048 * 2048;

TEST(SoftmaxKernels, EagerChainMovesItsBytesForwardAndBackward) {
  const Workload fused = gpt3_175b(SoftmaxKind::Fused), eager = gpt3_175b(SoftmaxKind::Eager);
  const LayerCost f = transformer_costs(layer_cost_key(fused, tp8())).block;
  const LayerCost e = transformer_costs(layer_cost_key(eager, tp8())).block;
  const double bw = 2.039e12 * 0.6773;  // the A100's calibrated memory bandwidth
  // Forward: 2+2 + 2+2 + 2+4 + 4+4 + 4+2 = 28 bytes per score against the fused kernel's 4.
  EXPECT_NEAR(e.forward.compute_s - f.forward.compute_s, (28.0 - 4.0) * kScores / bw, 1e-12);
  // Backward: 4 + 4 + 6 + 12 + 6 = 32 bytes against the fused kernel's 6.
  EXPECT_NEAR(e.backward.compute_s - f.backward.compute_s, (32.0 - 6.0) * kScores / bw, 1e-12);
  // Nothing else moves: the same TP collectives.
  EXPECT_EQ(e.forward.exposed, f.forward.exposed);
  EXPECT_EQ(e.backward.exposed, f.backward.exposed);
}

TEST(SoftmaxKernels, SelectiveRecomputationRunsTheEagerChainAgain) {
  const Workload fused = gpt3_175b(SoftmaxKind::Fused), eager = gpt3_175b(SoftmaxKind::Eager);
  const Strategy s = tp8(Recompute::Selective);
  const LayerCost f = transformer_costs(layer_cost_key(fused, s)).block;
  const LayerCost e = transformer_costs(layer_cost_key(eager, s)).block;
  const double bw = 2.039e12 * 0.6773;
  // The backward pays the extra chain once for its own kernels and once for the recomputed
  // forward: (32 - 6) + (28 - 4) bytes per score.
  EXPECT_NEAR(e.backward.compute_s - f.backward.compute_s, (26.0 + 24.0) * kScores / bw, 1e-12);
}

TEST(SoftmaxKernels, EagerKeepsTheProbabilitiesInFp32) {
  // Per sequence the block keeps one more 2-byte element per score (the fp32 probabilities);
  // selective recomputation drops it with the other score tensors.
  const Model fused = builtin_model("gpt3-175b");
  const Model eager = with_softmax(fused, SoftmaxKind::Eager, "test");
  const double scores = 96.0 * 2048 * 2048;
  const Layer* fb = nullptr;
  const Layer* eb = nullptr;
  for (std::size_t i = 0; i < fused.layers.size(); ++i)
    if (fused.layers[i].kind == LayerKind::TransformerBlock) {
      fb = &fused.layers[i];
      eb = &eager.layers[i];
      break;
    }
  ASSERT_NE(fb, nullptr);
  EXPECT_DOUBLE_EQ(eb->act_sharded - fb->act_sharded, scores);
  EXPECT_DOUBLE_EQ(eb->act_scores - fb->act_scores, scores);
  EXPECT_DOUBLE_EQ(eb->forward_flops, fb->forward_flops);
  EXPECT_DOUBLE_EQ(eb->parameters(), fb->parameters());
}

TEST(SoftmaxKernels, KeyReachesTheWorkloadAndRefusesNonTransformers) {
  WorkloadSpec spec = workload_spec_from_config(test::workload_config({"model.name=gpt3-1.3b"}));
  EXPECT_EQ(spec.softmax, SoftmaxKind::Fused);
  spec = workload_spec_from_config(test::workload_config({"model.name=gpt3-1.3b", "model.softmax=eager"}));
  EXPECT_EQ(spec.softmax, SoftmaxKind::Eager);
  const Workload w = make_workload(spec, 8);
  ASSERT_TRUE(w.model.transformer.has_value());
  EXPECT_EQ(w.model.transformer->softmax, SoftmaxKind::Eager);
  spec.model = "resnet50";
  EXPECT_THROW(make_workload(spec, 8), BadInput);
  EXPECT_THROW(test::workload_config({"model.softmax=flash"}), BadInput);
}

}  // namespace
}  // namespace toposweep
