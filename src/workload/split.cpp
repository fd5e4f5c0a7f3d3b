#include "toposweep/workload/split.hpp"

namespace toposweep {

ActivationSplit activation_split(const Strategy& s) {
  ActivationSplit split;
  split.tp = s.tp;
  split.sequence = s.sequence_parallel && s.tp > 1 ? s.tp : 1;
  split.cp = s.cp;
  split.ep = s.ep;
  split.etp = s.expert_tp() == s.tp ? 0 : s.expert_tp();  // one key for etp = 0 and etp = tp
  return split;
}

double compute_shard(const Model& m, const Strategy& s) {
  return m.transformer ? static_cast<double>(s.tp) * s.cp : 1.0;
}

StageBoundary stage_boundary(const Strategy& s, bool transformer) {
  StageBoundary b;
  b.gathered = transformer && s.tp > 1 && s.scatter_gather && !s.sequence_parallel;
  b.split = transformer && s.tp > 1 && (s.sequence_parallel || s.scatter_gather);
  return b;
}

}  // namespace toposweep
