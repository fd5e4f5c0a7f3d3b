#pragma once
// Operator graph -> balanced pipeline stages with a small cut (TAG's use of METIS, docs/optimizers.md
// §2.4): vertex weight = compute, edge weight = bytes crossing a stage boundary. Compared with
// the rank-order split (equal numbers of consecutive operators per stage).
#include <cstdint>
#include <string>
#include <vector>

namespace toposweep::opt {

struct OperatorEdge {
  std::uint32_t from = 0, to = 0;
  double bytes = 0;
};

struct StagePartition {
  std::vector<std::uint32_t> stage_of_op;
  double max_stage_load = 0;  // the pipeline's bottleneck stage compute
  double cut_bytes = 0;       // bytes crossing stages
  double rank_order_max_stage_load = 0;
  double rank_order_cut_bytes = 0;
  std::string method;  // "metis" or "rank_order" (METIS was not better in load, then cut)
};

void stage_loads(const std::vector<double>& load, const std::vector<OperatorEdge>& edges,
                 const std::vector<std::uint32_t>& stage_of_op, std::uint32_t stages, double* max_load,
                 double* cut);

// BadInput when stages is 0 or exceeds the operator count.
StagePartition metis_pipeline_stages(const std::vector<double>& op_load,
                                     const std::vector<OperatorEdge>& edges, std::uint32_t stages,
                                     std::uint64_t seed = 1);

}  // namespace toposweep::opt
