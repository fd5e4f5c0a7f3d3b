#pragma once
// Analytical network model: each communication task takes the alpha-beta time of its
// algorithm on an otherwise idle network (plan_collective, time only), charged `repeat`
// times; the instances of a collective task that share a node also share its network links
// (CollectiveRequest::instances_per_node). Otherwise uncontended by construction, and cached per
// distinct (group, op, bytes), so a design point costs microseconds. One exception keeps
// point-to-point exchanges honest: a set of concurrent transfers (e.g. an embedding all-to-all
// as GPU pairs) also takes at least the bytes the busiest node must inject into (or receive
// from) the network over its NIC bandwidth, and the slowest of up to 64 sampled instances, not
// just the first.
#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "toposweep/collective/memo.hpp"
#include "toposweep/sim/comm_groups.hpp"
#include "toposweep/sim/comm_layout.hpp"
#include "toposweep/sim/engine.hpp"
#include "toposweep/sim/network_model.hpp"
#include "toposweep/sim/prepared_graph.hpp"

namespace toposweep::sim {

class AnalyticalModel final : public NetworkModel {
 public:
  // `twins`: what it shares with the models of bandwidth twins of `net` (ring sets, distances,
  // path sums: collective/memo.hpp); null: its own.
  AnalyticalModel(const Network& net, CommSettings settings, std::shared_ptr<TwinShared> twins = nullptr);

  std::optional<double> begin(const CommTask& comm, double now, std::uint64_t token) override;
  double next_event_time() override;
  void advance_to(double, std::vector<std::uint64_t>&) override {}
  std::string name() const override { return "analytical"; }

  // Time of one operation of `task` (repeat not applied): the slowest timed instance.
  double operation_time(const CommTask& comm);
  std::uint64_t plans_computed() const { return plans_computed_; }
  const CommSettings& settings() const { return settings_; }
  // Plays one iteration of `graph` with rank-order placement (gpus_per_node GPUs per node):
  // the same times as run_engine, but the graph's playback structure and every task's
  // duration are kept per graph, so replaying a plan costs one linear pass.
  JobTimes play(const TaskGraph& graph, std::uint32_t gpus_per_node, std::vector<TaskSpan>& spans);
  // The same times without the spans (a sweep row needs only these) from a layout of the
  // graph, which many models (one per network) share: each distinct operation is timed once,
  // and a layout played before costs one lookup. The layout must match settings(). The
  // per-purpose busy times (comm_busy_s) are not measured here: 0.
  const JobTimes& play_times(const CommLayout& layout);
  // The model keeps no per-run state, so one instance can time many runs on its network and
  // keep its plan cache. Call this when a graph it has seen may be freed (its per-graph memo
  // is keyed by address).
  void forget_graphs() {
    prepared_.clear();
    first_shape_.clear();
    transfer_sets_.clear();
    task_time_.clear();
  }
  // The same for one graph, and for one layout.
  void forget_graph(const TaskGraph* graph);
  void forget_layout(const CommLayout* layout) { layout_times_.erase(layout); }

 private:
  // Cache key: the node-level shape of the timed instance (members' nodes in order, GPUs per
  // node), the kind of communication, the op and the bytes. Group sets with the same shape
  // share entries, so a graph with one group set per task still costs one plan per shape.
  struct Key {
    std::int32_t shape;
    std::uint8_t kind, op;
    double bytes;
    TokenDedup dedup;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };
  std::int32_t shape_of(const std::vector<std::uint32_t>& ranks, const Placement& placement,
                        std::uint32_t sharing);
  double shape_time(const Task& t, std::int32_t shape);
  // A point-to-point transfer of `bytes` between the shape's two members.
  double transfer_time(std::int32_t shape, double bytes);
  // Per shape id (transfers between two nodes): the path's summed latency and narrowest arc, or
  // the fabric of a transfer inside one node.
  struct PathCost {
    bool known = false;
    PathSums sums;                     // between nodes: the path's hops, latency and narrowest link
    const LinkClass* intra = nullptr;  // within a node: its fabric
    // Between nodes on a rail-only fabric, GPUs on disjoint rails: the source server's fabric,
    // which the PXN relay crosses (topology/rail_relay.hpp); null otherwise.
    const LinkClass* relay = nullptr;
  };
  void learn_path(std::int32_t shape, PathCost& p);
  std::vector<PathCost> paths_;

  const Network* net_;
  CommSettings settings_;
  CollectiveMemo memo_;  // routes for transfers, ring sets for collectives
  std::unordered_map<Key, double, KeyHash> cache_;
  std::map<std::vector<std::uint32_t>, std::int32_t> shape_ids_;
  std::vector<GroupNodes> shapes_;
  // Per job graph: the shape of each group set's first instance (-1: not computed yet).
  std::unordered_map<const TaskGraph*, std::vector<std::int32_t>> first_shape_;
  // Per job graph: each task's operation time once known (NaN: not yet), so evaluating the
  // same plan again (a sweep varying only other axes) costs one lookup per task.
  std::unordered_map<const TaskGraph*, std::vector<double>> task_time_;
  double compute_operation_time(const CommTask& comm);
  // A set of concurrent transfers: sampled instance shapes and the largest number of network
  // transfers any node sends / receives, relative to its egress / ingress bandwidth.
  struct TransferSet {
    std::vector<std::int32_t> shapes;
    double injection_s_per_byte = 0;  // max over nodes of count / bandwidth
    // Slowest sampled instance per message size (a pipeline sends one size many times).
    std::vector<std::pair<double, double>> worst_by_bytes;
  };
  TransferSet& transfer_set(const CommTask& comm);
  std::map<std::pair<const TaskGraph*, std::uint32_t>, TransferSet> transfer_sets_;
  std::uint64_t plans_computed_ = 0;
  struct Prepared {
    std::uint32_t gpus_per_node = 0;
    PreparedGraph graph;
    std::vector<double> durations;  // per task, seconds, repeat included
    // The playback itself: with the network, the settings and the durations fixed, replaying
    // the same graph gives the same result, so later calls copy it.
    bool played = false;
    JobTimes times;
    std::vector<TaskSpan> spans;
  };
  std::unordered_map<const TaskGraph*, Prepared> prepared_;
  // play_times(): the result per layout, and scratch.
  std::unordered_map<const CommLayout*, JobTimes> layout_times_;
  std::vector<std::int32_t> layout_shapes_;
  std::vector<double> op_times_;
  Prepared& prepared(const TaskGraph& graph, std::uint32_t gpus_per_node);
};

}  // namespace toposweep::sim
