#include "toposweep/sim/comm_groups.hpp"

#include <algorithm>
#include <unordered_map>

#include "toposweep/util/error.hpp"

namespace toposweep::sim {

GroupNodes group_nodes(std::span<const std::uint32_t> ranks, const Placement& placement) {
  GroupNodes g;
  std::vector<std::uint32_t> count;
  group_nodes_into(ranks, placement, g, count);
  return g;
}

void group_nodes_into(std::span<const std::uint32_t> ranks, const Placement& placement, GroupNodes& g,
                      std::vector<std::uint32_t>& count) {
  g.nodes.clear();
  count.clear();
  g.ranks = static_cast<std::uint32_t>(ranks.size());
  g.instances_per_node = 1;
  for (std::uint32_t r : ranks) {
    if (r >= placement.node_of_gpu.size())
      throw RuntimeFailure("task group names GPU rank " + std::to_string(r) + " outside the placement of " +
                           std::to_string(placement.node_of_gpu.size()) + " GPUs");
    const VertexId node = placement.node_of_gpu[r];
    // Groups are small (a few dozen distinct nodes at most per level), so a linear scan is
    // cheaper than hashing.
    auto it = std::find(g.nodes.begin(), g.nodes.end(), node);
    if (it == g.nodes.end()) {
      g.nodes.push_back(node);
      count.push_back(1);
    } else {
      ++count[static_cast<std::size_t>(it - g.nodes.begin())];
    }
  }
  g.gpus_per_node = count.empty() ? 1 : *std::max_element(count.begin(), count.end());
  g.locals.clear();
  if (g.gpus_per_node != 1 || g.nodes.size() < 2) return;
  // A node's ranks are consecutive (rank_order_placement, and a job's placement on its servers):
  // a rank's index on its node is its distance from the first of the run it belongs to.
  const auto& of = placement.node_of_gpu;
  bool differ = false;
  for (std::uint32_t r : ranks) {
    std::uint32_t first = r;
    while (first > 0 && of[first - 1] == of[r]) --first;
    const std::uint32_t local = r - first;
    differ = differ || (!g.locals.empty() && local != g.locals[0]);
    g.locals.push_back(local);
  }
  if (!differ) g.locals.clear();
}

void shape_signature_into(const GroupNodes& g, std::uint32_t sharing, std::vector<std::uint32_t>& sig) {
  sig.assign(g.nodes.begin(), g.nodes.end());
  sig.push_back(g.gpus_per_node);
  sig.push_back(g.ranks);
  sig.push_back(sharing);
  if (g.locals.empty()) return;
  sig.insert(sig.end(), g.locals.begin(), g.locals.end());
  sig.push_back(0xffffffffu);  // no sharing count is this: the signatures with locals stay apart
}

std::vector<std::size_t> sampled_transfer_groups(const GroupSet& gs) {
  constexpr std::size_t kSamples = 64;
  const std::size_t stride = std::max<std::size_t>(1, gs.groups.size() / kSamples);
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < gs.groups.size(); i += stride) out.push_back(i);
  return out;
}

void count_transfer_endpoints(const GroupSet& gs, const Placement& placement, std::vector<std::uint32_t>& out,
                              std::vector<std::uint32_t>& in) {
  for (const auto& g : gs.groups) {
    if (g.size() != 2) throw RuntimeFailure("a transfer group must be {src, dst}");
    const VertexId a = placement.node_of_gpu.at(g[0]), b = placement.node_of_gpu.at(g[1]);
    if (a == b) continue;
    ++out[a];
    ++in[b];
  }
}

std::uint32_t instances_on_first_node(const GroupSet& gs, const Placement& placement) {
  if (gs.groups.empty() || gs.groups[0].empty()) return 1;
  const VertexId node = placement.node_of_gpu.at(gs.groups[0][0]);
  std::uint32_t count = 0;
  for (const auto& g : gs.groups)
    for (std::uint32_t r : g)
      if (placement.node_of_gpu.at(r) == node) {
        ++count;
        break;
      }
  return std::max<std::uint32_t>(1, count);
}

double intra_node_collective_time(CollectiveOp op, std::uint32_t ranks, double bytes,
                                  const LinkClass& intra) {
  if (ranks <= 1 || bytes <= 0) return 0.0;
  if (!(intra.achievable_Bps() > 0))
    throw RuntimeFailure("a collective among GPUs of one node needs server.intra_bandwidth > 0");
  const double steps = op == CollectiveOp::AllReduce ? 2.0 * (ranks - 1) : ranks - 1.0;
  return intra.latency_s + steps * intra.step_latency_s +
         busbw_factor(op, static_cast<int>(ranks)) * bytes / intra.achievable_Bps();
}

double intra_node_transfer_time(double bytes, const LinkClass& intra) {
  if (bytes <= 0) return 0.0;
  if (!(intra.achievable_Bps() > 0))
    throw RuntimeFailure("a transfer between GPUs of one node needs server.intra_bandwidth > 0");
  return intra.latency_s + intra.step_latency_s + bytes / intra.achievable_Bps();
}

CollectiveRequest node_collective_request(const Task& t, const GroupNodes& g) {
  CollectiveRequest req;
  req.op = t.op;
  req.nodes = g.nodes;
  req.gpus_per_node = g.gpus_per_node;
  req.bytes = t.bytes;
  req.root = g.nodes.empty() ? 0 : g.nodes[0];
  req.instances_per_node = g.instances_per_node;
  req.member_locals = g.locals;
  req.dedup = t.dedup;
  return req;
}

CollectiveOptions collective_plan_options(const CommSettings& settings, bool with_flows) {
  CollectiveOptions opts;
  opts.with_flows = with_flows;
  opts.hierarchical_pipelined = settings.hierarchical_pipelined;
  opts.switch_routing = settings.switch_routing;
  opts.greedy_forest = settings.greedy_forest;
  opts.chunks = settings.chunks;
  opts.endpoint_delay_s = settings.endpoint_delay_s;
  opts.reduction_Bps = settings.reduction_Bps;
  return opts;
}

}  // namespace toposweep::sim
