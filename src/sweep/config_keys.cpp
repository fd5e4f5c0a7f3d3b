#include "toposweep/sweep/config_keys.hpp"

namespace toposweep::sweep {

std::vector<KeySpec> config_keys() {
  return {
      {"sweep.objectives", "cost_usd,iteration_time_s",
       "objectives of /frontier, comma separated; max:FIELD for a maximised one"},
      {"sweep.frontier_by", "model.name",
       "model.name: /frontier is the union of each model's own frontier (models are never compared); "
       "none: one frontier pooling every point"},
      {"sweep.chunk_seconds", "0.5", "target wall time of one scheduling chunk per rank (plain number, s)"},
      {"sweep.max_chunk_points", "4096", "upper bound of the points in one chunk"},
      {"sweep.progress_interval", "2s", "time between progress lines on stderr (time)"},
      {"sweep.compression", "1", "deflate level of /points, 0 (none) to 9"},
      {"sweep.evaluator", "model",
       "model (the simulator, PointEvaluator) or synthetic (a closed-form stand-in for tests and "
       "benchmarks)"},
      {"sweep.synthetic_cost", "0s", "busy time per point of the synthetic evaluator (time)"},
      {"space.*", "", "design-space definitions: [space.NAME] KEY = V1, V2 (see docs/sweep.md)"},
  };
}

}  // namespace toposweep::sweep
