#pragma once
// Helpers shared by the workload tests.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "toposweep/util/config.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/workload/config_keys.hpp"
#include "toposweep/workload/iteration.hpp"
#include "toposweep/workload/layer_cost.hpp"
#include "toposweep/workload/model_library.hpp"

namespace toposweep::test {

// A Config with the workload module's defaults plus "key=value" settings (as --set gives them).
inline Config workload_config(const std::vector<std::string>& sets) {
  Config c;
  for (const auto& s : sets) apply_set(c, s);
  validate_and_default(c, KeyRegistry(workload::config_keys()));
  return c;
}

// `key` on an idealised device: memory-bound kernels free, no kernel floor, one SM and one tile
// (no wave quantisation), no SMs lost to overlapped collectives; GEMMs run at exactly their FLOPs
// over peak x efficiency.
inline LayerCostKey idealised(LayerCostKey key) {
  key.device.memory_Bps = 1e30;
  key.device.kernel_floor_s = 0;
  key.device.sms = 1;
  key.device.tiles = {{1, 1}};
  key.device.collective_sm_share = 0;
  return key;
}

// The key validate_strategy names for `s` on `w` ("no error" when it accepts it).
inline std::string strategy_error_key(const Workload& w, const Strategy& s) {
  try {
    validate_strategy(s, w, s.gpus());
  } catch (const BadInput& e) {
    return e.where();
  }
  return "no error";
}

// A model of `layers` identical layers: 1 TFLOP forward, 2 TFLOP backward, 1,000 elements in and
// out each (compute-bound pipelines whose stage times are easy to work by hand).
inline Model uniform_chain(int layers) {
  nlohmann::json j = {{"name", "chain"}, {"layers", nlohmann::json::array()}};
  for (int i = 0; i < layers; ++i) {
    std::string name = "l";  // (not "l" + to_string: GCC 12's -Wrestrict misfires on it)
    name += std::to_string(i);
    j["layers"].push_back({{"name", name},
                           {"kind", "other"},
                           {"forward_flops", 1e12},
                           {"backward_flops", 2e12},
                           {"input_elements", 1000},
                           {"output_elements", 1000}});
  }
  return model_from_json(j, "chain");
}

// Plays the graph with communication free: tasks in id order (a topological order), each
// starting after its dependencies and its stream's previous task.
inline double makespan_without_comm(const TaskGraph& g, bool skip_optimizer = true) {
  std::vector<double> end(g.tasks.size(), 0), stream_end(g.stream_count(), 0);
  double makespan = 0;
  for (TaskId i = 0; i < g.tasks.size(); ++i) {
    const Task& t = g.tasks[i];
    double start = stream_end[t.stream];
    for (TaskId d : g.deps_of(i)) start = std::max(start, end[d]);
    double duration = t.kind == TaskKind::Compute ? t.duration_s * t.repeat : 0;
    if (skip_optimizer && t.phase == TaskPhase::WeightUpdate) duration = 0;
    end[i] = start + duration;
    stream_end[t.stream] = end[i];
    makespan = std::max(makespan, end[i]);
  }
  return makespan;
}

// Where the BadInput planning those settings on `gpus` GPUs throws, or "no error".
inline std::string plan_error_where(const std::vector<std::string>& sets, std::uint32_t gpus) {
  try {
    plan_iteration_from_config(workload_config(sets), gpus);
  } catch (const BadInput& e) {
    return e.where();
  }
  return "no error";
}

}  // namespace toposweep::test
