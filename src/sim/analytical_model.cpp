#include "toposweep/sim/analytical_model.hpp"

#include <algorithm>
#include <bit>
#include <limits>

#include "toposweep/collective/plan.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::sim {

std::size_t AnalyticalModel::KeyHash::operator()(const Key& k) const {
  std::uint64_t h = std::bit_cast<std::uint64_t>(k.bytes);
  h ^= reinterpret_cast<std::uintptr_t>(k.graph) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= (std::uint64_t{k.group} << 32 | k.instance) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= (std::uint64_t{k.kind} << 8 | k.op) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return static_cast<std::size_t>(h);
}

AnalyticalModel::AnalyticalModel(const Network& net, CommSettings settings)
    : net_(&net), settings_(std::move(settings)), routes_(net) {}

double AnalyticalModel::instance_time(const Task& t, const std::vector<std::uint32_t>& ranks,
                                      const Placement& placement) {
  const GroupNodes g = group_nodes(ranks, placement);
  if (t.kind == TaskKind::Transfer) {
    if (ranks.size() != 2) throw RuntimeFailure("a transfer group must be {src, dst}");
    if (g.nodes.size() == 1) return intra_node_transfer_time(t.bytes, net_->intra_bandwidth_Bps());
    const auto path = routes_.shortest_path(g.nodes[0], g.nodes[1]);
    if (!path)
      throw BadInput("compute node " + std::to_string(g.nodes[1]) + " is unreachable from compute node " +
                         std::to_string(g.nodes[0]),
                     "topology");
    return path_transfer_time(*net_, *path, t.bytes);
  }
  if (g.nodes.size() == 1) return intra_node_collective_time(t.op, g.ranks, t.bytes, net_->intra_bandwidth_Bps());
  CollectiveRequest req;
  req.op = t.op;
  req.nodes = g.nodes;
  req.gpus_per_node = g.gpus_per_node;
  req.bytes = t.bytes;
  req.root = g.nodes[0];
  CollectiveOptions opts;
  opts.with_flows = false;
  opts.hierarchical_pipelined = settings_.hierarchical_pipelined;
  ++plans_computed_;
  return plan_collective(*net_, req, settings_.algorithm, opts).time_s;
}

double AnalyticalModel::operation_time(const CommTask& comm) {
  const Task& t = comm.task();
  const GroupSet& gs = comm.graph->group_sets.at(t.group_set);
  if (gs.groups.empty()) return 0.0;
  // Instances of one task run in lockstep on symmetric placements; timing the first is the
  // default, timing all of them (the slowest wins) is an option for irregular networks.
  const std::size_t count = settings_.analytical_all_instances ? gs.groups.size() : 1;
  double worst = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const Key key{comm.graph, t.group_set, static_cast<std::uint32_t>(i), static_cast<std::uint8_t>(t.kind),
                  static_cast<std::uint8_t>(t.op), t.bytes};
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, instance_time(t, gs.groups[i], *comm.placement)).first;
    worst = std::max(worst, it->second);
  }
  return worst;
}

std::optional<double> AnalyticalModel::begin(const CommTask& comm, double, std::uint64_t) {
  return operation_time(comm) * comm.task().repeat;
}

double AnalyticalModel::next_event_time() { return std::numeric_limits<double>::infinity(); }

}  // namespace toposweep::sim
