// model.cross_entropy: the loss's kernels over the logits, against byte counts worked out by hand
// from each implementation's code, not from cross_entropy.cpp's table. Unfused (Megatron-Core's
// vocab_parallel_cross_entropy): .float() 2 + 4, max 4, subtract 4 + 4, exp 4 + 4, sum 4, divide
// 4 + 4 = 38 forward, 22 backward, the fp32 softmax kept. Native (fused_vocab_parallel_cross_entropy,
// three torch.compile'd functions): 6 + 8 + 8 = 22 forward, 4 + 4 + 2 = 10 backward, fp32 kept.
// Transformer Engine (Triton, in place): online softmax 2, loss and gradient 2 + 2 = 6 forward,
// element_mul 2 + 2 = 4 backward, the bf16 logits kept.
#include <gtest/gtest.h>

#include "toposweep/util/error.hpp"
#include "toposweep/workload/block.hpp"
#include "toposweep/workload/compute_bound.hpp"
#include "toposweep/workload/layer_cost.hpp"
#include "toposweep/workload/memory.hpp"
#include "toposweep/workload/model_library.hpp"
#include "toposweep/workload/spec.hpp"
#include "toposweep/workload/split.hpp"
#include "workload_test_helpers.hpp"

namespace toposweep {
namespace {

Workload llama3_8b(CrossEntropyKind kind) {
  Model m = builtin_model("llama3-8b");
  if (kind != CrossEntropyKind::Unfused) m = with_cross_entropy(m, kind, "test");
  return make_workload(std::move(m), builtin_device("h100"), "bf16", 1);  // one sample a microbatch
}

Strategy tp(std::uint32_t t) {
  Strategy s;
  s.tp = t;
  s.microbatches = 1;
  return s;
}

// The H100's fitted memory bandwidth (inputs/devices/h100.json: 3.35 TB/s x 0.5653).
constexpr double kBandwidth = 3.35e12 * 0.5653;

// Logits on one rank of `t`: 8,192 tokens x 128,256 / t vocabulary entries, microbatch 1.
double logits(double t) {
  return 8192.0 * 128256.0 / t;
}

TEST(CrossEntropy, EachImplementationMovesItsBytesForwardAndBackward) {
  for (const std::uint32_t t : {1u, 4u}) {
    const LayerCost unfused =
        transformer_costs(layer_cost_key(llama3_8b(CrossEntropyKind::Unfused), tp(t))).head;
    const LayerCost native =
        transformer_costs(layer_cost_key(llama3_8b(CrossEntropyKind::Native), tp(t))).head;
    const LayerCost te = transformer_costs(layer_cost_key(llama3_8b(CrossEntropyKind::Te), tp(t))).head;
    EXPECT_NEAR(unfused.forward.compute_s - native.forward.compute_s, (38.0 - 22.0) * logits(t) / kBandwidth,
                1e-12);
    EXPECT_NEAR(unfused.backward.compute_s - native.backward.compute_s,
                (22.0 - 10.0) * logits(t) / kBandwidth, 1e-12);
    EXPECT_NEAR(unfused.forward.compute_s - te.forward.compute_s, (38.0 - 6.0) * logits(t) / kBandwidth,
                1e-12);
    EXPECT_NEAR(unfused.backward.compute_s - te.backward.compute_s, (22.0 - 4.0) * logits(t) / kBandwidth,
                1e-12);
    // The GEMMs and the collectives are the same.
    EXPECT_EQ(te.forward.exposed, unfused.forward.exposed);
    EXPECT_EQ(te.backward.exposed, unfused.backward.exposed);
    EXPECT_EQ(te.tp_bytes, unfused.tp_bytes);
  }
}

TEST(CrossEntropy, TransformerEngineKeepsTheBf16LogitsInsteadOfTheFp32Softmax) {
  const Workload unfused = llama3_8b(CrossEntropyKind::Unfused), native = llama3_8b(CrossEntropyKind::Native),
                 te = llama3_8b(CrossEntropyKind::Te);
  const Layer& head = unfused.model.layers.back();
  ASSERT_EQ(head.kind, LayerKind::Head);
  for (const std::uint32_t t : {1u, 8u}) {
    const ActivationSplit split = activation_split(tp(t));
    const double u = layer_activations(unfused, head, split).none;
    EXPECT_DOUBLE_EQ(layer_activations(native, native.model.layers.back(), split).none, u);
    // 4 - 2 bytes per logit of one sample (sequence 8,192; vocabulary split over t).
    EXPECT_DOUBLE_EQ(u - layer_activations(te, te.model.layers.back(), split).none, 2.0 * logits(t));
  }
}

TEST(CrossEntropy, TheLastChunkGainsWhatTheHeadSaves) {
  // pp 2: the first stage's passes are unchanged, the last stage's forward and backward shorten by
  // the head's savings.
  Strategy s = tp(1);
  s.pp = 2;
  s.microbatches = 2;
  const Workload unfused = make_workload(builtin_model("llama3-8b"), builtin_device("h100"), "bf16", 2);
  const Workload te =
      make_workload(with_cross_entropy(builtin_model("llama3-8b"), CrossEntropyKind::Te, "test"),
                    builtin_device("h100"), "bf16", 2);
  const ChunkTimes u = chunk_compute_times(unfused, s, nullptr), f = chunk_compute_times(te, s, nullptr);
  ASSERT_EQ(u.forward.size(), 2u);
  EXPECT_EQ(u.forward[0], f.forward[0]);
  EXPECT_EQ(u.backward[0], f.backward[0]);
  EXPECT_NEAR(u.forward[1] - f.forward[1], 32.0 * logits(1) / kBandwidth, 1e-12);
  EXPECT_NEAR(u.backward[1] - f.backward[1], 18.0 * logits(1) / kBandwidth, 1e-12);
}

TEST(CrossEntropy, KeyReachesTheWorkloadAndRefusesNonTransformers) {
  WorkloadSpec spec = workload_spec_from_config(test::workload_config({"model.name=llama3-8b"}));
  EXPECT_EQ(spec.cross_entropy, CrossEntropyKind::Unfused);
  spec = workload_spec_from_config(test::workload_config({"model.name=llama3-8b", "model.cross_entropy=te"}));
  EXPECT_EQ(spec.cross_entropy, CrossEntropyKind::Te);
  spec = workload_spec_from_config(
      test::workload_config({"model.name=llama3-8b", "model.cross_entropy=native"}));
  EXPECT_EQ(spec.cross_entropy, CrossEntropyKind::Native);
  const Workload w = make_workload(spec, 8);
  ASSERT_TRUE(w.model.transformer.has_value());
  EXPECT_EQ(w.model.transformer->cross_entropy, CrossEntropyKind::Native);
  spec.model = "resnet50";
  EXPECT_THROW(make_workload(spec, 8), BadInput);
  EXPECT_THROW(test::workload_config({"model.cross_entropy=liger"}), BadInput);
}

}  // namespace
}  // namespace toposweep
