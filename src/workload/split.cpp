#include "toposweep/workload/split.hpp"

#include "toposweep/util/error.hpp"

namespace toposweep {

ActivationSplit activation_split(const Strategy& s) {
  ActivationSplit split;
  split.tp = s.tp;
  split.sequence = s.sequence_parallel && s.tp > 1 ? s.tp : 1;
  split.cp = s.cp;
  return split;
}

double compute_shard(const Model& m, const Strategy& s) {
  return m.transformer ? static_cast<double>(s.tp) * s.cp : 1.0;
}

std::string context_parallel_problem(const Workload& w, std::uint32_t cp) {
  if (cp <= 1) return "";
  const auto& t = w.model.transformer;
  if (!t || w.model.has_tables())
    return "context parallelism splits a transformer's sequence: " + w.model.name + " has none";
  if (!w.fused_attention)
    return "context parallelism (ring attention) runs on fused attention kernels: set model.fused_attention "
           "= "
           "true";
  if (t->seq_len % (2 * cp) != 0)
    return "cp = " + std::to_string(cp) + " needs the sequence length (" + std::to_string(t->seq_len) +
           ") to be a multiple of 2 cp (load-balanced causal chunks)";
  if (w.mixed()) return "context parallelism on mixed devices is not modelled";
  return "";
}

void check_context_parallel(const Workload& w, std::uint32_t cp) {
  const std::string problem = context_parallel_problem(w, cp);
  if (!problem.empty()) throw InvalidDesign(problem, "key strategy.cp");
}

StageBoundary stage_boundary(const Strategy& s, bool transformer) {
  StageBoundary b;
  b.gathered = transformer && s.tp > 1 && s.scatter_gather && !s.sequence_parallel;
  b.split = transformer && s.tp > 1 && (s.sequence_parallel || s.scatter_gather);
  return b;
}

}  // namespace toposweep
