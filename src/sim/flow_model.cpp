#include "toposweep/sim/flow_model.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "toposweep/collective/plan.hpp"
#include "toposweep/sim/simulate.hpp"
#include "toposweep/topology/rail_relay.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::sim {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Per-connection ECMP: a hash of (src, dst, connection) picks one path, with the probability
// the per-hop even split gives each path.
std::size_t ecmp_pick(const std::vector<WeightedPath>& paths, VertexId src, VertexId dst,
                      std::uint32_t conn) {
  if (paths.size() <= 1) return 0;
  const std::uint64_t h = splitmix64(splitmix64(std::uint64_t{src} << 32 | dst) ^ conn);
  const double u = static_cast<double>(h >> 11) * 0x1.0p-53;
  double acc = 0;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    acc += paths[i].fraction;
    if (u < acc) return i;
  }
  return paths.size() - 1;
}

}  // namespace

FlowModel::FlowModel(const Network& net, CommSettings settings)
    : net_(&net), settings_(std::move(settings)), routes_(net), flows_(net) {}

FlowModel::InstancePlan FlowModel::plan_instance(const Task& t, const GroupNodes& g, std::uint32_t copies,
                                                 bool relays) {
  InstancePlan ip;
  ip.stage_begin = {0};
  if (t.kind == TaskKind::Transfer) {
    if (g.ranks != 2) throw RuntimeFailure("a transfer group must be {src, dst}");
    if (g.nodes.size() == 1) {
      ip.fixed_s = intra_node_transfer_time(t.bytes, net_->intra_link(g.nodes[0]));
      return ip;
    }
    // Each of the `copies` connections between these two nodes hashes onto its own path; the
    // transfer ends when the slowest has arrived.
    const auto& paths = routes_.ecmp_paths(g.nodes[0], g.nodes[1]);
    std::map<std::size_t, std::uint32_t> per_path;
    for (std::uint32_t c = 0; c < copies; ++c) ++per_path[ecmp_pick(paths, g.nodes[0], g.nodes[1], c)];
    double idle_s = 0;  // the slowest path's time on an idle network
    for (const auto& [k, n] : per_path) {
      const double latency = path_latency(*net_, paths[k].arcs);
      ip.stage_latency_s = std::max(ip.stage_latency_s, latency);
      double narrowest = std::numeric_limits<double>::infinity();
      for (ArcId a : paths[k].arcs) narrowest = std::min(narrowest, net_->arc(a).bandwidth_Bps);
      idle_s = std::max(idle_s, latency + t.bytes * n / narrowest);
      ip.paths.push_back(paths[k].arcs);
      ip.bytes.push_back(t.bytes * n);
      ip.weight.push_back(n);
    }
    if (relays) {
      // The PXN relay over the source server's fabric (rail_relay.hpp), as the analytical model
      // charges it, each connection over its own GPU's link; intra-node time is not flows, so it
      // waits after them as a two-level collective's intra-node part does: pipelined what it
      // takes beyond the idle network's time, sequential all of it.
      const double relay = intra_node_transfer_time(t.bytes, net_->intra_link(g.nodes[0]));
      ip.stage_latency_s += settings_.hierarchical_pipelined ? std::max(0.0, relay - idle_s) : relay;
    }
    ip.stage_begin.push_back(static_cast<std::uint32_t>(ip.paths.size()));
    return ip;
  }
  if (g.nodes.size() == 1) {
    ip.fixed_s = intra_node_collective_time(t.op, g.ranks, t.bytes, net_->intra_link(g.nodes[0]));
    return ip;
  }
  CollectivePlan plan = plan_collective(*net_, node_collective_request(t, g), settings_.algorithm,
                                        collective_plan_options(settings_, true));
  if (plan.flows.empty()) {
    // An algorithm without flows (nothing crosses the network): its idle-network time stands.
    ip.fixed_s = plan.time_s;
    return ip;
  }
  std::uint32_t stages = plan.stages;
  for (const Flow& f : plan.flows) stages = std::max(stages, f.stage + 1);
  std::vector<std::uint32_t> order(plan.flows.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return plan.flows[a].stage < plan.flows[b].stage;
  });
  ip.stage_begin.assign(stages + 1, 0);
  for (const Flow& f : plan.flows) ++ip.stage_begin[f.stage + 1];
  for (std::uint32_t s = 0; s < stages; ++s) ip.stage_begin[s + 1] += ip.stage_begin[s];
  for (std::uint32_t k : order) {
    ip.paths.push_back(std::move(plan.flows[k].path));
    ip.bytes.push_back(plan.flows[k].bytes * copies);
    ip.weight.push_back(copies);
  }
  ip.stage_latency_s = (plan.latency_s + plan.intra_node_time_s) / stages;
  return ip;
}

const FlowModel::TaskPlan& FlowModel::plan_for(const CommTask& comm) {
  const Task& t = comm.task();
  const PlanKey key{comm.graph, t.group_set, static_cast<std::uint8_t>(t.kind),
                    static_cast<std::uint8_t>(t.op), t.bytes};
  auto it = plans_.find(key);
  if (it != plans_.end()) return *it->second;
  auto plan = std::make_unique<TaskPlan>();
  const GroupSet& gs = comm.graph->group_sets.at(t.group_set);
  // Merge instances with the same node-level signature, keeping first-appearance order.
  std::map<std::vector<std::uint32_t>, std::uint32_t> seen;  // signature -> unique index
  std::vector<GroupNodes> unique;
  std::vector<std::uint32_t> copies;
  std::vector<char> relay;  // transfers: whether a connection of the instance relays
  std::vector<std::uint32_t> sig;
  for (const auto& ranks : gs.groups) {
    GroupNodes g = group_nodes(ranks, *comm.placement);
    sig.assign(g.nodes.begin(), g.nodes.end());
    sig.push_back(g.gpus_per_node);
    sig.push_back(g.ranks);
    const bool locals = !g.locals.empty() && rail_only(*net_);
    if (locals && t.kind == TaskKind::Collective) {
      // Members on other local GPUs may cross rails here: their instances are not alike.
      sig.insert(sig.end(), g.locals.begin(), g.locals.end());
      sig.push_back(0xffffffffu);
    }
    // Transfers between the same two nodes stay one instance of several connections (each hashed
    // onto its own path); it relays when any of them does, each over its own GPU's fabric.
    const bool relays = locals && t.kind == TaskKind::Transfer && g.locals.size() == 2 &&
                        needs_rail_relay(*net_, g.nodes[0], g.locals[0], g.nodes[1], g.locals[1]);
    auto [it, fresh] = seen.emplace(sig, static_cast<std::uint32_t>(unique.size()));
    if (fresh) {
      unique.push_back(std::move(g));
      copies.push_back(1);
      relay.push_back(relays);
    } else {
      ++copies[it->second];
      relay[it->second] = relay[it->second] || relays;
    }
  }
  plan->instances.reserve(unique.size());
  for (std::size_t u = 0; u < unique.size(); ++u)
    plan->instances.push_back(plan_instance(t, unique[u], copies[u], relay[u]));
  return *plans_.emplace(key, std::move(plan)).first->second;
}

std::optional<double> FlowModel::begin(const CommTask& comm, double now, std::uint64_t token) {
  if (now < flows_.now()) throw RuntimeFailure("FlowModel: time cannot go backwards");
  const TaskPlan& plan = plan_for(comm);
  std::uint32_t a;
  if (!free_active_.empty()) {
    a = free_active_.back();
    free_active_.pop_back();
  } else {
    a = static_cast<std::uint32_t>(active_.size());
    active_.emplace_back();
  }
  Active& act = active_[a];
  act.token = token;
  act.plan = &plan;
  act.repeat = comm.task().repeat;
  act.instances.assign(plan.instances.size(), Instance{});
  act.unfinished = static_cast<std::uint32_t>(plan.instances.size());
  act.in_use = true;
  if (act.unfinished == 0) {
    act.in_use = false;
    free_active_.push_back(a);
    completed_at_begin_.push_back(token);
    return std::nullopt;
  }
  for (std::uint32_t i = 0; i < plan.instances.size(); ++i) {
    const InstancePlan& ip = plan.instances[i];
    if (ip.fixed_s > 0)
      timers_.push({now + ip.fixed_s * act.repeat, a, i});
    else
      run_stage(a, i, completed_at_begin_);
  }
  return std::nullopt;
}

void FlowModel::run_stage(std::uint32_t a, std::uint32_t i, std::vector<std::uint64_t>& completed) {
  Active& act = active_[a];
  const InstancePlan& ip = act.plan->instances[i];
  Instance& inst = act.instances[i];
  const std::uint32_t stages = static_cast<std::uint32_t>(ip.stage_begin.size() - 1);
  while (inst.stage < stages) {
    const std::uint32_t lo = ip.stage_begin[inst.stage], hi = ip.stage_begin[inst.stage + 1];
    if (hi > lo) {
      inst.outstanding = hi - lo;
      const std::uint64_t tag = std::uint64_t{a} << 32 | i;
      for (std::uint32_t k = lo; k < hi; ++k) {
        flows_.start(ip.paths[k], ip.bytes[k] * act.repeat, tag, ip.weight[k]);
        flows_represented_ += static_cast<std::uint64_t>(ip.weight[k]);
      }
      flows_started_ += hi - lo;
      return;
    }
    ++inst.stage;
  }
  if (--act.unfinished == 0) {
    completed.push_back(act.token);
    act.in_use = false;
    free_active_.push_back(a);
  }
}

void FlowModel::stage_done(std::uint32_t a, std::uint32_t i, std::vector<std::uint64_t>& completed) {
  Active& act = active_[a];
  const double latency = act.plan->instances[i].stage_latency_s * act.repeat;
  if (latency > 0) {
    timers_.push({flows_.now() + latency, a, i});
    return;
  }
  ++act.instances[i].stage;
  run_stage(a, i, completed);
}

double FlowModel::next_event_time() {
  if (!completed_at_begin_.empty()) return flows_.now();
  const double tt = timers_.empty() ? kInf : timers_.top().time;
  return std::min(tt, flows_.next_finish_time());
}

void FlowModel::advance_to(double t, std::vector<std::uint64_t>& completed) {
  completed.insert(completed.end(), completed_at_begin_.begin(), completed_at_begin_.end());
  completed_at_begin_.clear();
  auto handle_flows = [&] {
    for (const FinishedFlow& f : finished_scratch_) {
      const auto a = static_cast<std::uint32_t>(f.tag >> 32);
      const auto i = static_cast<std::uint32_t>(f.tag & 0xffffffffu);
      if (--active_[a].instances[i].outstanding == 0) stage_done(a, i, completed);
    }
    finished_scratch_.clear();
  };
  for (;;) {
    const double tf = flows_.next_finish_time();
    const double tt = timers_.empty() ? kInf : timers_.top().time;
    const double tn = std::min(tf, tt);
    if (tn > t) break;
    if (tf <= tn) {
      flows_.advance_to(tf, finished_scratch_);
      handle_flows();
    }
    while (!timers_.empty() && timers_.top().time <= tn) {
      const Timer tm = timers_.top();
      timers_.pop();
      if (flows_.now() < tm.time) flows_.advance_to(tm.time, finished_scratch_);
      handle_flows();
      ++active_[tm.active].instances[tm.instance].stage;
      run_stage(tm.active, tm.instance, completed);
    }
  }
  if (flows_.now() < t) {
    flows_.advance_to(t, finished_scratch_);
    handle_flows();
  }
}

void FlowModel::report(const Network& net, SimResult& r) const {
  r.link_samples = flows_.link_samples();
  r.flows = flows_started_;
  r.flows_represented = flows_represented_;
  r.rate_recomputations = flows_.recomputations();
  r.rate_assignments = flows_.rate_assignments();
  const auto& bytes = flows_.arc_bytes();
  double sum = 0;
  for (ArcId a = 0; a < net.arc_count(); ++a) {
    const double u =
        r.engine.makespan_s > 0 ? bytes[a] / (net.arc(a).bandwidth_Bps * r.engine.makespan_s) : 0.0;
    r.links.push_back({a, bytes[a], u});
    r.max_link_utilisation = std::max(r.max_link_utilisation, u);
    sum += u;
  }
  r.mean_link_utilisation = net.arc_count() ? sum / net.arc_count() : 0.0;
}

}  // namespace toposweep::sim
