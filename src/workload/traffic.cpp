// Aggregates a TaskGraph's communication to compute nodes. Volumes are summed per group set
// first (a graph has few group sets and many tasks), then expanded to nodes once.
#include "toposweep/workload/traffic.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "toposweep/util/alltoall_dedup.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep {
namespace {

// Per group set: AllReduce-equivalent bytes of mutable collectives, and bytes each member sends
// each other member (non-mutable collectives), and bytes along each pair (transfers).
struct SetVolume {
  double allreduce = 0;
  double all_pairs = 0;   // every member -> every other member
  double from_first = 0;  // group[0] -> each other member (broadcast)
  double to_first = 0;    // each other member -> group[0] (reduce)
  double along_pair = 0;  // transfers: group = {src, dst}
  // All-to-Alls sent once per destination node (Task::dedup), by routing: like all_pairs, their
  // node-to-node bytes scaled by the fraction of copies that cross (util/alltoall_dedup.hpp).
  std::map<TokenDedup, double> dedup_pairs;
};

}  // namespace

double TrafficDemand::total_allreduce_bytes() const {
  double s = 0;
  for (const auto& a : allreduce) s += a.bytes;
  return s;
}

double TrafficDemand::total_mp_bytes() const {
  double s = 0;
  for (const auto& d : mp) s += d.bytes;
  return s;
}

TrafficDemand derive_traffic(const TaskGraph& graph, const Placement& placement, std::uint32_t nodes) {
  if (placement.node_of_gpu.size() < graph.gpus)
    throw BadInput("placement covers " + std::to_string(placement.node_of_gpu.size()) +
                       " GPUs, the graph has " + std::to_string(graph.gpus),
                   "placement");
  for (auto n : placement.node_of_gpu)
    if (n >= nodes)
      throw BadInput("placement uses node " + std::to_string(n) + " of " + std::to_string(nodes),
                     "placement");

  std::vector<SetVolume> volume(graph.group_sets.size());
  for (const Task& t : graph.tasks) {
    if (t.kind == TaskKind::Compute) continue;
    SetVolume& v = volume.at(t.group_set);
    const double bytes = t.bytes * t.repeat;
    if (t.kind == TaskKind::Transfer) {
      v.along_pair += bytes;
      continue;
    }
    const auto& groups = graph.group_sets[t.group_set].groups;
    const double n = groups.empty() ? 1 : static_cast<double>(groups[0].size());
    if (t.is_mutable) {
      // ReduceScatter + AllGather of the same buffer move what one AllReduce moves.
      v.allreduce += t.op == CollectiveOp::AllReduce ? bytes : 0.5 * bytes;
      continue;
    }
    if (t.op == CollectiveOp::AllToAll && t.dedup.active()) {
      v.dedup_pairs[t.dedup] += bytes / n;
      continue;
    }
    switch (t.op) {
      case CollectiveOp::AllToAll:       // per-rank send buffer, 1/n to each member
      case CollectiveOp::AllGather:      // output buffer, each member contributes 1/n
      case CollectiveOp::ReduceScatter:  // input buffer, 1/n reduced at each member
        v.all_pairs += bytes / n;
        break;
      case CollectiveOp::AllReduce:  // direct reduce-scatter + all-gather
        v.all_pairs += 2 * bytes / n;
        break;
      case CollectiveOp::Broadcast:
        v.from_first += bytes;
        break;
      case CollectiveOp::Reduce:
        v.to_first += bytes;
        break;
    }
  }

  std::map<std::vector<std::uint32_t>, double> allreduce;
  std::map<std::pair<std::uint32_t, std::uint32_t>, double> mp;
  const auto& node = placement.node_of_gpu;
  auto add_mp = [&](std::uint32_t a, std::uint32_t b, double bytes) {
    if (bytes > 0 && node[a] != node[b]) mp[{node[a], node[b]}] += bytes;
  };
  // The distinct nodes a group's ranks sit on, ascending.
  auto nodes_of = [&](const std::vector<std::uint32_t>& group) {
    std::vector<std::uint32_t> members;
    for (auto r : group) members.push_back(node[r]);
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    return members;
  };
  for (std::size_t gs = 0; gs < volume.size(); ++gs) {
    const SetVolume& v = volume[gs];
    for (const auto& group : graph.group_sets[gs].groups) {
      const bool need_nodes = v.allreduce > 0 || !v.dedup_pairs.empty();
      const std::vector<std::uint32_t> members = need_nodes ? nodes_of(group) : std::vector<std::uint32_t>{};
      if (v.allreduce > 0 && members.size() > 1) allreduce[members] += v.allreduce;
      if (v.along_pair > 0 && group.size() == 2) add_mp(group[0], group[1], v.along_pair);
      for (std::size_t i = 1; i < group.size(); ++i) {
        add_mp(group[0], group[i], v.from_first);
        add_mp(group[i], group[0], v.to_first);
      }
      // Every member to every other: the plain all-pairs bytes and the deduplicated All-to-Alls'
      // share that crosses among the nodes the group spans.
      double pairs = v.all_pairs;
      for (const auto& [dedup, bytes] : v.dedup_pairs)
        pairs += bytes * dedup_network_fraction(dedup, static_cast<std::uint32_t>(members.size()));
      if (pairs > 0)
        for (auto a : group)
          for (auto b : group)
            if (a != b) add_mp(a, b, pairs);
    }
  }

  TrafficDemand d;
  d.nodes = nodes;
  for (auto& [members, bytes] : allreduce) d.allreduce.push_back({members, bytes});
  for (auto& [pair, bytes] : mp) d.mp.push_back({pair.first, pair.second, bytes});
  return d;
}

}  // namespace toposweep
