// describe_block joins the block's parts in execution order; block_totals sums a table into
// what a Layer carries. Every per-sample quantity of the table is an integer or half-integer
// far below 2^53 (hidden is a multiple of heads, heads of kv_heads), so these sums are exact
// and equal the closed forms they replace whatever their order.
#include "toposweep/workload/block.hpp"

#include <string>

#include "toposweep/util/error.hpp"

namespace toposweep {

double BlockOp::flops() const {
  if (kind != OpKind::Gemm && kind != OpKind::AttentionCore) return 0;
  const double full = 2 * M * N * K * batch;
  return window > 0 ? full * attended_share(M, window) : full;  // a sliding window's share (block_window.cpp)
}

std::vector<BlockOp> describe_block(const TransformerShape& shape, bool moe, bool windowed) {
  std::vector<BlockOp> ops;
  describe_norm(shape, ops);
  if (shape.mla)
    describe_mla(shape, ops);
  else
    describe_attention(shape, ops);
  if (windowed) apply_window(shape, ops);
  describe_norm(shape, ops);
  if (moe && shape.moe)
    describe_moe(shape, ops);
  else
    describe_mlp(shape, ops);
  return ops;
}

std::vector<BlockOp> describe_block(const TransformerShape& shape, const Layer& l) {
  return describe_block(shape, l.moe, l.windowed);
}

BlockTotals block_totals(const std::vector<BlockOp>& ops) {
  BlockTotals t;
  for (const BlockOp& op : ops) {
    t.forward_flops += op.flops();
    t.params_sharded += op.params_sharded;
    t.params_replicated += op.params_replicated;
    t.params_expert += op.params_expert;
    t.kept_replicated += op.kept_replicated;
    t.kept_sharded += op.kept_sharded;
    if (op.recompute == RecomputeClass::DroppedUnderSelective) t.kept_scores += op.kept_sharded;
    if (op.kind == OpKind::Gemm) {
      t.kept_gemm_replicated += op.kept_replicated;
      t.kept_gemm_sharded += op.kept_sharded;
    }
    if (op.role == OpRole::ExpertGemm || op.role == OpRole::ExpertActivation) {
      t.kept_expert_replicated += op.kept_replicated;
      t.kept_expert_sharded += op.kept_sharded;
    }
  }
  return t;
}

bool tp_divides_kv_heads(const Model& m, std::uint32_t tp) {
  if (!m.transformer || tp == 0) return true;
  const std::uint32_t kv = m.transformer->kv_heads > 0 ? m.transformer->kv_heads : m.transformer->heads;
  return kv % tp == 0;
}

void check_tp_against_kv_heads(const Model& m, std::uint32_t tp) {
  if (tp_divides_kv_heads(m, tp)) return;
  const std::uint32_t kv = m.transformer->kv_heads > 0 ? m.transformer->kv_heads : m.transformer->heads;
  throw InvalidDesign("tp = " + std::to_string(tp) + " does not divide the " + std::to_string(kv) +
                          " key/value heads of " + m.name,
                      "key strategy.tp");
}

}  // namespace toposweep
