// The two ends both sublayers (attention, MLP) share: the tensor-parallel collective entering the
// column-parallel region (Megatron's f: identity forward, AllReduce backward) and the one leaving
// the row-parallel region (g), followed by bias + dropout + residual add over the whole sequence.
#include "toposweep/workload/block.hpp"

namespace toposweep {

void describe_sublayer_enter(std::string_view name, const TransformerShape& t, std::vector<BlockOp>& ops) {
  BlockOp enter{.name = name, .kind = OpKind::Collective, .role = OpRole::TpEnter};
  enter.M = t.seq_len;
  enter.N = t.hidden;
  enter.axis = ParallelAxis::Tensor;
  ops.push_back(enter);
}

void describe_sublayer_exit(std::string_view exit_name, std::string_view residual_name,
                            const TransformerShape& t, std::vector<BlockOp>& ops) {
  const double s = t.seq_len, h = t.hidden;
  BlockOp exit{.name = exit_name, .kind = OpKind::Collective, .role = OpRole::TpExit};
  exit.M = s;
  exit.N = h;
  exit.axis = ParallelAxis::Tensor;
  ops.push_back(exit);

  BlockOp residual{.name = residual_name, .kind = OpKind::MemoryBound, .role = OpRole::Residual};
  residual.M = s;
  residual.N = h;
  residual.axis = ParallelAxis::Sequence;
  residual.forward = {3, 1};               // bias + dropout + residual add, with the mask
  residual.backward = {3, 0};              // residual add backward
  residual.backward2 = {3, 1};             // dropout + add backward
  residual.kept_replicated = 0.5 * s * h;  // the 1-byte dropout mask
  ops.push_back(residual);
}

}  // namespace toposweep
