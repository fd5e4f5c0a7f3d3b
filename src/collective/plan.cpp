// plan_collective: picks the algorithm, builds the network-level plan among the member nodes and,
// for multi-GPU nodes, wraps it in a two-level collective with the intra-node part.
#include "toposweep/collective/plan.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "toposweep/collective/forest.hpp"
#include "toposweep/collective/hierarchical.hpp"
#include "toposweep/collective/memo.hpp"
#include "toposweep/collective/multiring.hpp"
#include "toposweep/collective/patterns.hpp"
#include "toposweep/collective/routing.hpp"
#include "toposweep/collective/schedule.hpp"
#include "toposweep/topology/rail_relay.hpp"
#include "toposweep/util/alltoall_dedup.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"

namespace toposweep {

namespace {

void check_request(const Network& net, const CollectiveRequest& req) {
  if (!(req.bytes > 0)) throw BadInput("collective size must be positive", "collective bytes");
  if (req.nodes.empty()) throw BadInput("collective has no members", "collective members");
  if (req.gpus_per_node == 0) throw BadInput("gpus_per_node must be at least 1", "server.gpus");
  if (!req.node_gpus.empty() && req.node_gpus.size() != req.nodes.size())
    throw RuntimeFailure("a collective request lists GPU counts for other nodes than its members");
  std::vector<char> seen(net.compute_count(), 0);
  for (VertexId v : req.nodes) {
    if (v >= net.compute_count())
      throw BadInput("member " + std::to_string(v) + " is not a compute node (the network has " +
                         std::to_string(net.compute_count()) + ")",
                     "collective members");
    if (seen[v]) throw BadInput("member " + std::to_string(v) + " is listed twice", "collective members");
    seen[v] = 1;
  }
  if ((req.op == CollectiveOp::Broadcast || req.op == CollectiveOp::Reduce) &&
      (req.root >= seen.size() || !seen[req.root]))
    throw BadInput("root " + std::to_string(req.root) + " is not a member of the group", "collective root");
}

// The options' routing on networks with switches, where paths tie up many ways (a Clos
// fabric's ECMP); networks without switches keep the first shortest path. Auto: ECMP on the
// families built of switches (fat-tree, switch, rail, dragonfly: a dragonfly's minimal routing
// over its equal-cost minimal paths), the first shortest path elsewhere.
Routing phase_routing(const Network& net, const CollectiveOptions& opt) {
  if (net.switch_count() == 0) return Routing::Shortest;
  if (opt.switch_routing != Routing::Auto) return opt.switch_routing;
  const std::string& kind = net.info().kind;
  const bool clos = kind == "fattree" || kind == "switch" || kind == "rail" || kind == "dragonfly";
  return clos ? Routing::Ecmp : Routing::Shortest;
}

CollectivePlan from_phases(RouteCache& routes, std::vector<Phase> phases, const CollectiveOptions& opt,
                           std::string algorithm) {
  // `shortest` keeps what the algorithm asked for (sub-group multiring phases spread).
  const Routing routing = phase_routing(routes.network(), opt);
  if (routing != Routing::Shortest)
    for (Phase& ph : phases) ph.routing = routing;
  CollectivePlan plan;
  plan.algorithm = std::move(algorithm);
  cost_phases(routes, phases, opt.with_flows, plan);
  if (opt.system_costs()) {
    // ASTRA-sim's costs on a one-resource collective: chunks run one after another, so the
    // bandwidth part is paid once and every step's latency (plus the endpoint delay) per chunk;
    // a reduce step also moves 3x its message through local memory.
    const double C = opt.chunks;
    double steps = 0, reduction_s = 0;
    for (const Phase& ph : phases) {
      steps += ph.latency_steps;
      if (opt.reduction_Bps > 0 && ph.reduce_steps > 0) {
        double message = 0;
        for (const Transfer& t : ph.transfers) message = std::max(message, t.bytes);
        reduction_s += ph.reduce_steps * 3 * message / opt.reduction_Bps;
      }
    }
    const double latency = (C - 1) * plan.latency_s + C * steps * opt.endpoint_delay_s;
    plan.time_s += latency + reduction_s;
    plan.latency_s += latency;
  }
  return plan;
}

CollectivePlan plan_network(const Network& net, const CollectiveRequest& req, const std::string& algorithm,
                            const CollectiveOptions& opt, CollectiveMemo& memo);

CollectivePlan plan_hierarchical(const Network& net, CollectiveMemo& memo, const CollectiveRequest& req,
                                 const CollectiveOptions& opt) {
  if (req.op == CollectiveOp::AllToAll && net.info().kind != "multidim") {
    // Any other family: the node-level pattern of NCCL's PXN and DeepEP. Each GPU first hands
    // its data over the server fabric to the local GPU on the destination's rail (what stays in
    // the server included: S(g - 1)/g per GPU, plan_collective's intra-node part), then the
    // servers exchange directly, g S/N per server pair over the fabric's paths (each server
    // g S (N - 1)/N), one message per pair instead of one per GPU pair.
    CollectivePlan plan = plan_network(net, req, "direct", opt, memo);
    plan.algorithm = "hierarchical";
    return plan;
  }
  if (net.info().kind != "multidim" &&
      (req.op == CollectiveOp::AllReduce || req.op == CollectiveOp::ReduceScatter ||
       req.op == CollectiveOp::AllGather)) {
    // Any other family, two dimensions: the server fabric, then the network. The GPUs of a server
    // reduce-scatter (or gather) inside it (plan_collective's intra-node part), then one ring
    // among the servers moves each server's buffer over the fabric's paths, (N - 1)/N of it per
    // pass on the server's NICs, where NCCL's flat ring through all n GPUs sends (n - 1)/n.
    CollectivePlan plan = plan_network(net, req, "ring", opt, memo);
    plan.algorithm = "hierarchical";
    return plan;
  }
  RouteCache& routes = memo.routes();
  const std::vector<std::uint32_t> shape = hierarchical_group_shape(net, req.nodes);
  const auto& dims = net.info().dims;
  const HierarchicalTime h = hierarchical_time(req.op, dims, shape, req.bytes);
  CollectivePlan plan;
  plan.algorithm = "hierarchical";
  plan.model = opt.hierarchical_pipelined ? "pipelined" : "sequential";
  plan.time_s = opt.hierarchical_pipelined ? h.pipelined_s : h.sequential_s;
  plan.latency_s = opt.hierarchical_pipelined ? h.pipelined_latency_s : h.sequential_latency_s;
  if (opt.system_costs()) {
    // ASTRA-sim's schedule: chunks through the dimensions, one chunk per dimension at a time.
    const ChunkedTime c = hierarchical_chunked_time(req.op, dims, shape, req.bytes, opt.chunks,
                                                    opt.endpoint_delay_s, opt.reduction_Bps);
    plan.model = "chunked";
    plan.time_s = c.time_s;
    plan.latency_s = c.latency_s;
  }
  plan.stages =
      opt.hierarchical_pipelined ? (h.phases.empty() ? 0 : 1) : static_cast<std::uint32_t>(h.phases.size());
  if (!opt.with_flows) return plan;
  // Flows: per dimension, each member sends its size_k to its ring successor along the
  // dimension (Ring, Switch) or spreads it over its peers (FullyConnected). Pipelined phases
  // share one stage and so run concurrently.
  std::uint32_t stage = 0;
  for (const DimensionPhase& dp : h.phases) {
    Phase ph;
    for (const auto& line : dimension_lines(net, req.nodes, dp.dim)) {
      const std::size_t n = line.size();
      if (dims[dp.dim].type == DimensionType::FullyConnected) {
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t j = 0; j < n; ++j)
            if (i != j) ph.transfers.push_back({line[i], line[j], dp.bytes / static_cast<double>(n - 1)});
      } else {
        for (std::size_t i = 0; i < n; ++i) ph.transfers.push_back({line[i], line[(i + 1) % n], dp.bytes});
      }
    }
    ph.routing = phase_routing(net, opt);
    phase_cost(routes, ph, &plan.flows, stage);
    if (!opt.hierarchical_pipelined) ++stage;
  }
  return plan;
}

CollectivePlan plan_forest(const Network& net, const CollectiveRequest& req, const CollectiveOptions& opt) {
  const ForestSchedule fs =
      forest_schedule(net, req.op, req.nodes, req.bytes, req.root, opt.with_flows,
                      opt.greedy_forest ? ForestAlgorithm::Greedy : ForestAlgorithm::Exact);
  CollectivePlan plan;
  plan.algorithm = "forest";
  plan.time_s = fs.built_time_s + fs.latency_s;
  plan.latency_s = fs.latency_s;
  plan.trees = fs.trees;
  plan.optimal_time_s = fs.optimal_time_s;
  plan.built_time_s = fs.built_time_s;
  plan.cut_bandwidth_Bps = fs.last_optimum.bandwidth_Bps;
  plan.cut_weight = fs.last_optimum.weight;
  plan.stages = fs.stages;
  plan.flows = fs.flows;
  return plan;
}

CollectivePlan plan_network(const Network& net, const CollectiveRequest& req, const std::string& algorithm,
                            const CollectiveOptions& opt, CollectiveMemo& memo);

// The automatic choice: hierarchical on a multidim network when the members are a sub-grid of
// its dimensions; otherwise, for AllToAll, direct (every pair at once over the fabric's own
// paths: the egress bound on a non-blocking Clos, where a ring relays p(p-1)/2 chunk-steps);
// for the other ops multiring where ring strides are known (topoopt, or a per-job network
// carrying them: the serving strides, or for a sub-group the best ring set over the network's
// links), a ring otherwise.
CollectivePlan plan_auto(const Network& net, CollectiveMemo& memo, const CollectiveRequest& req,
                         const CollectiveOptions& opt) {
  if (req.op == CollectiveOp::AllToAll) {
    if (net.info().kind == "multidim" && !net.info().dims.empty() &&
        !group_shape(net, req.nodes).shape.empty())
      return plan_network(net, req, "hierarchical", opt, memo);
    return plan_network(net, req, "direct", opt, memo);
  }
  if (!net.info().strides.empty()) return plan_network(net, req, "multiring", opt, memo);
  if (net.info().kind == "multidim" && !net.info().dims.empty() && !group_shape(net, req.nodes).shape.empty())
    return plan_network(net, req, "hierarchical", opt, memo);
  return plan_network(net, req, "ring", opt, memo);
}

CollectivePlan plan_ring(const Network&, CollectiveMemo& memo, const CollectiveRequest& req,
                         const CollectiveOptions& opt) {
  RouteCache& routes = memo.routes();
  return from_phases(routes, ring_phases(req.op, {req.nodes}, {1.0}, req.bytes, req.root), opt, "ring");
}

// Two counter-rotating rings over the members, half the data each: both directions of every
// ring link carry data (ring uses one).
CollectivePlan plan_biring(const Network&, CollectiveMemo& memo, const CollectiveRequest& req,
                           const CollectiveOptions& opt) {
  RouteCache& routes = memo.routes();
  std::vector<VertexId> reversed(req.nodes.rbegin(), req.nodes.rend());
  return from_phases(routes, ring_phases(req.op, {req.nodes, reversed}, {0.5, 0.5}, req.bytes, req.root), opt,
                     "biring");
}

CollectivePlan plan_multiring(const Network&, CollectiveMemo& memo, const CollectiveRequest& req,
                              const CollectiveOptions& opt) {
  RouteCache& routes = memo.routes();
  const MultiRing& mr = memo.multiring(req.nodes);
  std::vector<Phase> phases = ring_phases(req.op, mr.rings, mr.shares, req.bytes, req.root);
  for (Phase& ph : phases) ph.routing = mr.routed ? Routing::Spread : Routing::Shortest;
  return from_phases(routes, std::move(phases), opt, "multiring");
}

CollectivePlan plan_tree(const Network&, CollectiveMemo& memo, const CollectiveRequest& req,
                         const CollectiveOptions& opt) {
  RouteCache& routes = memo.routes();
  return from_phases(routes, tree_phases(req.op, req.nodes, req.bytes, req.root), opt, "tree");
}

CollectivePlan plan_halving_doubling(const Network&, CollectiveMemo& memo, const CollectiveRequest& req,
                                     const CollectiveOptions& opt) {
  RouteCache& routes = memo.routes();
  return from_phases(routes, halving_doubling_phases(req.op, req.nodes, req.bytes, req.root), opt,
                     "halving_doubling");
}

CollectivePlan plan_direct(const Network&, CollectiveMemo& memo, const CollectiveRequest& req,
                           const CollectiveOptions& opt) {
  RouteCache& routes = memo.routes();
  return from_phases(routes, direct_phases(req.op, req.nodes, req.bytes, req.root), opt, "direct");
}

CollectivePlan plan_pairwise(const Network&, CollectiveMemo& memo, const CollectiveRequest& req,
                             const CollectiveOptions& opt) {
  RouteCache& routes = memo.routes();
  return from_phases(routes, pairwise_phases(req.op, req.nodes, req.bytes), opt, "pairwise");
}

CollectivePlan plan_forest_routed(const Network& net, CollectiveMemo&, const CollectiveRequest& req,
                                  const CollectiveOptions& opt) {
  return plan_forest(net, req, opt);
}

struct Algorithm {
  const char* name;
  const char* summary;
  CollectivePlan (*plan)(const Network&, CollectiveMemo&, const CollectiveRequest&, const CollectiveOptions&);
};

// The collective algorithms by name. Adding one: its phases (patterns.hpp) or planner, one line here.
constexpr Algorithm kAlgorithms[] = {
    {"auto",
     "AllToAll: hierarchical on multidim sub-grids, direct otherwise; other ops: multiring on topoopt, "
     "hierarchical on multidim, ring otherwise",
     plan_auto},
    {"ring", "one ring over the members in order, one direction", plan_ring},
    {"biring", "two rings over the members, one each way, half the data each", plan_biring},
    {"multiring", "rings over the network's strides, data split by their bandwidth", plan_multiring},
    {"hierarchical",
     "one phase per dimension of a multidim network (LIBRA / ASTRA-sim style); on any other family two: "
     "the server fabric, then a ring among the servers (AllReduce, ReduceScatter, AllGather) or a direct "
     "exchange after a rail-aligned gather (AllToAll: PXN / DeepEP)",
     plan_hierarchical},
    {"tree", "binary tree (reduce up, broadcast down)", plan_tree},
    {"halving_doubling", "recursive halving and doubling (Rabenseifner)", plan_halving_doubling},
    {"direct", "every member exchanges with every other at once", plan_direct},
    {"pairwise", "AllToAll in n-1 pairwise exchange steps", plan_pairwise},
    {"forest", "topology-adaptive forest of spanning trees at the exact cut bound", plan_forest_routed},
};

// The collective among whole nodes, each node's buffer being `req.bytes`.
CollectivePlan plan_network(const Network& net, const CollectiveRequest& req, const std::string& algorithm,
                            const CollectiveOptions& opt, CollectiveMemo& memo) {
  if (req.nodes.size() == 1) {
    CollectivePlan plan;
    plan.algorithm = algorithm;
    return plan;
  }
  for (const auto& a : kAlgorithms)
    if (algorithm == a.name) return a.plan(net, memo, req, opt);
  throw BadInput(
      "unknown collective algorithm '" + algorithm + "' (" + join(collective_algorithm_names(), ", ") + ")",
      "collective.algorithm");
}

// Intra-node part of a two-level collective over g GPUs (a ring on the node's fabric): NCCL's
// latency model plus the bus bytes at the fabric's achievable bandwidth.
double intra_node_time(CollectiveOp op, double bytes, double g, const LinkClass& intra) {
  double bus = 0, steps = g - 1;
  switch (op) {
    case CollectiveOp::AllReduce:
      bus = 2 * bytes * (g - 1) / g;  // reduce-scatter + all-gather
      steps = 2 * (g - 1);
      break;
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllGather:
    case CollectiveOp::AllToAll:
      bus = bytes * (g - 1) / g;
      break;
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce:
      bus = bytes;
      break;
  }
  return intra.latency_s + steps * intra.step_latency_s + bus / intra.achievable_Bps();
}

// The network part of `plan` carrying `factor` times its bytes: its bandwidth term and its
// flows scale, its latency does not.
void scale_network_bytes(CollectivePlan& plan, double factor) {
  if (factor == 1) return;
  plan.time_s = plan.latency_s + (plan.time_s - plan.latency_s) * factor;
  for (Flow& f : plan.flows) f.bytes *= factor;
}

// One GPU per member node on a rail-only fabric (CollectiveRequest::member_locals): the network
// bytes a member sends to peers that share no rail with it relay through the GPU of its server on
// the peer's rail, over the server's fabric (NCCL's PXN). Each member sends busbw_factor(op, N) x
// bytes over the network (the flat ring's or direct exchange's share per member), spread evenly
// over its N - 1 peers (exact for the direct AllToAll; a ring's share of its neighbours
// otherwise), so it relays that times the fraction of its peers on other rails, as one intra-node
// transfer (its fabric's latency and one step). The slowest member's relay joins the network time
// as the two-level collectives' intra-node part does: pipelined the slower of the two, sequential
// their sum.
void add_rail_relay(const Network& net, const CollectiveRequest& req, const CollectiveOptions& opt,
                    CollectivePlan& plan) {
  const std::size_t N = req.nodes.size();
  if (req.member_locals.size() != N || N < 2 || !rail_only(net)) return;
  const double member_bytes = busbw_factor(req.op, static_cast<int>(N)) * req.bytes;
  double relay = 0;
  for (std::size_t k = 0; k < N; ++k) {
    std::size_t across = 0;
    for (std::size_t m = 0; m < N; ++m)
      across += needs_rail_relay(net, req.nodes[k], req.member_locals[k], req.nodes[m], req.member_locals[m]);
    if (across == 0) continue;
    const LinkClass& fabric = net.intra_link(req.nodes[k]);
    if (!(fabric.achievable_Bps() > 0))
      throw BadInput(
          "a collective across rails of a rail-only fabric relays through the server's fabric, "
          "which needs a positive intra-node bandwidth",
          "server.intra_bandwidth");
    const double bytes = member_bytes * static_cast<double>(across) / static_cast<double>(N - 1);
    relay = std::max(relay, fabric.latency_s + fabric.step_latency_s + bytes / fabric.achievable_Bps());
  }
  if (relay == 0) return;
  const double network_s = plan.time_s;
  plan.time_s = opt.hierarchical_pipelined ? std::max(network_s, relay) : network_s + relay;
  plan.intra_node_time_s = plan.time_s - network_s;
  if (plan.model.empty()) plan.model = opt.hierarchical_pipelined ? "pipelined" : "sequential";
}

}  // namespace

const std::vector<std::string>& collective_algorithm_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& a : kAlgorithms) v.push_back(a.name);
    return v;
  }();
  return names;
}

std::string collective_algorithm_help() {
  std::string out;
  for (const auto& a : kAlgorithms) out += std::string(out.empty() ? "" : "; ") + a.name + ": " + a.summary;
  return out;
}

CollectivePlan plan_collective(const Network& net, const CollectiveRequest& request,
                               const std::string& algorithm, const CollectiveOptions& options) {
  CollectiveMemo memo(net);
  return plan_collective(request, algorithm, options, memo);
}

CollectivePlan plan_collective(const CollectiveRequest& request, const std::string& algorithm,
                               const CollectiveOptions& options, CollectiveMemo& memo) {
  const Network& net = memo.network();
  const auto& names = collective_algorithm_names();
  if (std::find(names.begin(), names.end(), algorithm) == names.end())
    throw BadInput("unknown collective algorithm '" + algorithm + "' (one of " + join(names, ", ") + ")",
                   "collective.algorithm");
  check_request(net, request);
  const std::uint32_t g = request.gpus_per_node;
  const double sharing = std::max<std::uint32_t>(1, request.instances_per_node);
  // A node-deduplicating MoE dispatch sends that fraction of an AllToAll's network bytes.
  const double dedup =
      request.op == CollectiveOp::AllToAll
          ? dedup_network_fraction(request.dedup, static_cast<std::uint32_t>(request.nodes.size()))
          : 1.0;
  if (g <= 1) {
    CollectivePlan plan = plan_network(net, request, algorithm, options, memo);
    scale_network_bytes(plan, sharing * dedup);
    add_rail_relay(net, request, options, plan);
    return plan;
  }
  // Two-level: the GPUs of a node first combine inside it, then the nodes run the network
  // collective on the node's whole buffer (AllToAll: the node sends g buffers' worth).
  double slowest_fabric = net.intra_link().achievable_Bps();
  if (!net.uniform_servers())
    for (VertexId v : request.nodes)
      slowest_fabric = std::min(slowest_fabric, net.intra_link(v).achievable_Bps());
  if (!(slowest_fabric > 0))
    throw BadInput("a two-level collective over " + std::to_string(g) +
                       " GPUs per node needs a positive intra-node bandwidth",
                   "server.intra_bandwidth");
  CollectiveRequest inter = request;
  if (request.op == CollectiveOp::AllToAll) inter.bytes = request.bytes * g;
  CollectivePlan plan = plan_network(net, inter, algorithm, options, memo);
  double intra_ranks = g;
  // Servers of different sizes: each member node's own count (gpus_per_node is the largest).
  const bool counts = !request.node_gpus.empty();
  double members = 0;
  for (auto c : request.node_gpus) members += c;
  const double n = counts ? members : static_cast<double>(g) * request.nodes.size(),
               nodes = static_cast<double>(request.nodes.size());
  const bool ring_op = request.op == CollectiveOp::AllReduce || request.op == CollectiveOp::ReduceScatter ||
                       request.op == CollectiveOp::AllGather;
  double network_factor = sharing * dedup;
  const bool rings = plan.algorithm == "ring" || plan.algorithm == "multiring";
  if (rings && ring_op && nodes > 1) {
    // NCCL's ring (and each ring of a multiring) runs through all n GPUs, g channels each
    // crossing a node boundary on its own GPU's NIC (rail-aligned): every node sends (n-1)/n of
    // the buffer per pass instead of the hierarchical (N-1)/N, and every GPU forwards the whole
    // ring's traffic on its fabric. Bus bandwidth: min(fabric, g x NIC), as nccl-tests measures
    // on DGX servers.
    network_factor *= ((n - 1) / n) / ((nodes - 1) / nodes);
    intra_ranks = n;
  }
  scale_network_bytes(plan, network_factor);
  // The intra-node part on one fabric; on mixed servers every member node's, the slowest wins.
  const bool ring_through = intra_ranks != g;
  const auto intra_on = [&](const LinkClass& fabric, double gv) {
    if (!ring_through) return intra_node_time(request.op, request.bytes, gv, fabric);
    // Latency of one node's steps only, as in the hierarchical form: a Simple-protocol ring pays
    // every one of its 2(n - 1) steps, but NCCL's tuner picks LL128 or a tree where that would
    // dominate, so large groups do not pay O(n) step latencies.
    LinkClass no_latency = fabric;
    no_latency.latency_s = no_latency.step_latency_s = 0;
    return intra_node_time(request.op, request.bytes, intra_ranks, no_latency) +
           intra_node_time(request.op, 0, gv, fabric);
  };
  double intra = intra_on(net.intra_link(), g);
  if (!net.uniform_servers() || counts) {
    intra = 0;
    for (std::size_t i = 0; i < request.nodes.size(); ++i)
      intra = std::max(intra, intra_on(net.intra_link(request.nodes[i]), counts ? request.node_gpus[i] : g));
  }
  const double network_s = plan.time_s;
  if (options.hierarchical_pipelined) {
    plan.time_s = std::max(network_s, intra);
    plan.intra_node_time_s = plan.time_s - network_s;
  } else {
    plan.time_s = network_s + intra;
    plan.intra_node_time_s = intra;
  }
  if (plan.model.empty()) plan.model = options.hierarchical_pipelined ? "pipelined" : "sequential";
  return plan;
}

}  // namespace toposweep
