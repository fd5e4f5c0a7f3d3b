#include "toposweep/sweep/config_keys.hpp"

#include "toposweep/frontier/pareto.hpp"
#include "toposweep/util/config.hpp"
#include "toposweep/util/config_checks.hpp"

namespace toposweep::sweep {
namespace {

void check_objectives(const std::string& value, const std::string& where) {
  frontier::parse_objectives(value, where);
}

}  // namespace

std::vector<KeySpec> config_keys() {
  return {
      {"sweep.objectives", "cost_usd,iteration_time_s",
       "objectives of /frontier, comma separated; max:FIELD for a maximised one", check_objectives},
      {"sweep.frontier_by", "model.name",
       "model.name: /frontier is the union of each model's own frontier (models are never compared); "
       "none: one frontier pooling every point",
       checks::one_of({"model.name", "none"})},
      {"sweep.chunk_seconds", "0.5", "target wall time of one scheduling chunk per rank (plain number, s)",
       checks::number_in(1e-9, 1e9)},
      {"sweep.max_chunk_points", "4096", "upper bound of the points in one chunk",
       checks::integer(1, 1 << 24)},
      {"sweep.scheduler", "auto",
       "where the ranks' shared chunk counters live: auto (shared_memory when every rank is on one node, "
       "else one_sided), shared_memory (processor atomics in an MPI-3 shared window) or one_sided (MPI "
       "passive-target atomics on rank 0; spans nodes)",
       checks::one_of({"auto", "shared_memory", "one_sided"})},
      {"sweep.progress_interval", "2s", "time between progress lines on stderr (time)",
       checks::quantity(Quantity::Time, false)},
      {"sweep.compression", "1", "deflate level of /points, 0 (none) to 9", checks::integer(0, 9)},
      {"sweep.evaluator", "model",
       "model (the simulator, PointEvaluator) or synthetic (a closed-form stand-in for tests and "
       "benchmarks)",
       checks::one_of({"model", "synthetic"})},
      {"sweep.synthetic_cost", "0s", "busy time per point of the synthetic evaluator (time)",
       checks::quantity(Quantity::Time, false)},
      {"sweep.synthetic_fail", "hashed",
       "synthetic evaluator: hashed (points whose hash is 0 mod 97 throw) or all (every point throws)",
       checks::one_of({"hashed", "all"})},
      {"space.*", "", "design-space definitions: [space.NAME] KEY = V1, V2 (see docs/sweep.md)"},
  };
}

}  // namespace toposweep::sweep
