#include "toposweep/workload/task_graph.hpp"

#include <algorithm>

#include "toposweep/util/error.hpp"

namespace toposweep {

TaskId TaskGraph::add(const Task& t, std::span<const TaskId> dependencies) {
  const auto id = static_cast<TaskId>(tasks.size());
  for (TaskId d : dependencies)
    if (d >= id) throw RuntimeFailure("TaskGraph::add: dependency on a later task");
  tasks.push_back(t);
  deps.insert(deps.end(), dependencies.begin(), dependencies.end());
  dep_offsets.push_back(static_cast<std::uint32_t>(deps.size()));
  return id;
}

std::uint32_t TaskGraph::add_group_set(GroupSet gs) {
  group_sets.push_back(std::move(gs));
  return static_cast<std::uint32_t>(group_sets.size() - 1);
}

std::uint32_t TaskGraph::add_stream(std::string name) {
  stream_names.push_back(std::move(name));
  return static_cast<std::uint32_t>(stream_names.size() - 1);
}

std::uint32_t TaskGraph::add_label(std::string label) {
  labels.push_back(std::move(label));
  return static_cast<std::uint32_t>(labels.size() - 1);
}

Placement rank_order_placement(std::uint32_t gpus, std::uint32_t gpus_per_node) {
  Placement p;
  p.gpus_per_node = gpus_per_node;
  p.node_of_gpu.resize(gpus);
  for (std::uint32_t r = 0; r < gpus; ++r) p.node_of_gpu[r] = r / gpus_per_node;
  return p;
}

Placement rank_order_placement(std::uint32_t gpus, std::span<const std::uint32_t> gpus_of_node) {
  Placement p;
  p.gpus_per_node = gpus_of_node.empty() ? 1 : *std::max_element(gpus_of_node.begin(), gpus_of_node.end());
  p.node_of_gpu.reserve(gpus);
  for (std::uint32_t v = 0; v < gpus_of_node.size() && p.node_of_gpu.size() < gpus; ++v)
    for (std::uint32_t i = 0; i < gpus_of_node[v] && p.node_of_gpu.size() < gpus; ++i)
      p.node_of_gpu.push_back(v);
  if (p.node_of_gpu.size() < gpus) throw RuntimeFailure("rank order: more ranks than GPUs");
  return p;
}

}  // namespace toposweep
