#include "toposweep/opt/metis_stages.hpp"

#include <metis.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "toposweep/util/error.hpp"

namespace toposweep::opt {

void stage_loads(const std::vector<double>& load, const std::vector<OperatorEdge>& edges,
                 const std::vector<std::uint32_t>& stage_of_op, std::uint32_t stages, double* max_load,
                 double* cut) {
  std::vector<double> per(stages, 0.0);
  for (std::size_t v = 0; v < load.size(); ++v) per[stage_of_op[v]] += load[v];
  *max_load = *std::max_element(per.begin(), per.end());
  *cut = 0;
  for (const auto& e : edges)
    if (stage_of_op[e.from] != stage_of_op[e.to]) *cut += e.bytes;
}

StagePartition metis_pipeline_stages(const std::vector<double>& op_load,
                                     const std::vector<OperatorEdge>& edges, std::uint32_t stages,
                                     std::uint64_t seed) {
  const std::uint32_t n = static_cast<std::uint32_t>(op_load.size());
  if (stages == 0 || stages > n)
    throw BadInput(
        "cannot split " + std::to_string(n) + " operators into " + std::to_string(stages) + " stages",
        "strategy.pp");
  for (const auto& e : edges)
    if (e.from >= n || e.to >= n) throw BadInput("operator edge out of range", "operator graph");
  StagePartition out;
  out.stage_of_op.resize(n);
  for (std::uint32_t v = 0; v < n; ++v)
    out.stage_of_op[v] = static_cast<std::uint32_t>(std::uint64_t{v} * stages / n);
  stage_loads(op_load, edges, out.stage_of_op, stages, &out.rank_order_max_stage_load,
              &out.rank_order_cut_bytes);
  out.max_stage_load = out.rank_order_max_stage_load;
  out.cut_bytes = out.rank_order_cut_bytes;
  out.method = "rank_order";
  if (stages == 1) return out;

  // METIS wants integers: loads scaled to <= 1e6, bytes to <= 1e6 (at least 1 each).
  const double top_load = std::max(1e-300, *std::max_element(op_load.begin(), op_load.end()));
  double top_bytes = 1e-300;
  std::map<std::pair<std::uint32_t, std::uint32_t>, double> w;
  for (const auto& e : edges)
    if (e.from != e.to) w[std::minmax(e.from, e.to)] += e.bytes, top_bytes = std::max(top_bytes, e.bytes);
  std::vector<std::vector<std::pair<idx_t, idx_t>>> adj(n);
  for (const auto& [e, b] : w) {
    const idx_t iw = std::max<idx_t>(1, static_cast<idx_t>(std::llround(b / top_bytes * 1e6)));
    adj[e.first].push_back({static_cast<idx_t>(e.second), iw});
    adj[e.second].push_back({static_cast<idx_t>(e.first), iw});
  }
  std::vector<idx_t> xadj{0}, adjncy, adjwgt, vwgt;
  for (std::uint32_t v = 0; v < n; ++v) {
    for (const auto& [u, iw] : adj[v]) adjncy.push_back(u), adjwgt.push_back(iw);
    xadj.push_back(static_cast<idx_t>(adjncy.size()));
    vwgt.push_back(std::max<idx_t>(1, static_cast<idx_t>(std::llround(op_load[v] / top_load * 1e6))));
  }
  idx_t nv = static_cast<idx_t>(n), ncon = 1, nparts = static_cast<idx_t>(stages), objval = 0;
  std::vector<idx_t> part(n, 0);
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = static_cast<idx_t>(seed % 1000003);
  const int status = METIS_PartGraphRecursive(
      &nv, &ncon, xadj.data(), adjwgt.empty() ? nullptr : adjncy.data(), vwgt.data(), nullptr,
      adjwgt.empty() ? nullptr : adjwgt.data(), &nparts, nullptr, nullptr, options, &objval, part.data());
  if (status != METIS_OK) return out;
  std::vector<std::uint32_t> metis(n);
  for (std::uint32_t v = 0; v < n; ++v) metis[v] = static_cast<std::uint32_t>(part[v]);
  double load = 0, cut = 0;
  stage_loads(op_load, edges, metis, stages, &load, &cut);
  // Keep METIS only if it does not worsen the bottleneck, and improves it or the cut.
  if (load <= out.max_stage_load * (1 + 1e-12) && (load < out.max_stage_load || cut < out.cut_bytes)) {
    out.stage_of_op = metis;
    out.max_stage_load = load;
    out.cut_bytes = cut;
    out.method = "metis";
  }
  return out;
}

}  // namespace toposweep::opt
