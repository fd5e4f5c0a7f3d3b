// `toposweep collective`: time one collective on one topology with one algorithm.
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "toposweep/cli/command.hpp"
#include "toposweep/collective/options.hpp"
#include "toposweep/collective/plan.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/topology/spec.hpp"
#include "toposweep/util/alltoall_dedup.hpp"
#include "toposweep/util/collective_op.hpp"
#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"
#include "toposweep/util/units.hpp"
#include "toposweep/workload/moe_routing.hpp"
#include "toposweep/workload/spec.hpp"

namespace toposweep::cli {
namespace {

void add_options(po::options_description& o) {
  o.add_options()("op", po::value<std::string>()->default_value("allreduce"),
                  "allreduce, reducescatter, allgather, alltoall, broadcast or reduce")(
      "algorithm", po::value<std::string>(),
      (join(collective_algorithm_names(), ", ") + " (default: collective.algorithm)").c_str())(
      "bytes", po::value<std::string>()->default_value("1GB"),
      "per-rank buffer with a unit, nccl-tests convention (e.g. 64MiB, 1GB)")(
      "ranks", po::value<std::string>(), "member compute nodes, e.g. 0-7,16 (default: all compute nodes)")(
      "root", po::value<std::string>()->default_value("0"), "root compute node of broadcast / reduce")(
      "topology-file", po::value<std::string>(), "edge-list topology file (sets topology.kind = file)")(
      "flows", po::bool_switch(), "also build the flows a flow-level simulator would play and count them")(
      "deepep", po::value<std::string>(),
      "alltoall only: MoE tokens sent once per destination node (strategy.ep_dispatcher = deepep), "
      "TOP_K,EXPERTS[,GROUPS,GROUP_TOPK]: each token's top_k of the experts, spread evenly over the member "
      "nodes, optionally within group_topk of groups groups (one per node)");
}

// --deepep TOP_K,EXPERTS[,GROUPS,GROUP_TOPK]: the routing of a node-deduplicated All-to-All,
// checked as a model's (workload/moe_routing.hpp).
TokenDedup parse_deepep(const std::string& text, CollectiveOp op) {
  if (op != CollectiveOp::AllToAll)
    throw BadInput("a deduplicated dispatch is an All-to-All (--op alltoall)", "--deepep");
  std::vector<std::uint32_t> v;
  for (const std::string& part : split_list(text)) {
    const auto x = parse_plain_number(part);
    if (!x || *x < 1 || *x > 65535 || *x != static_cast<double>(static_cast<std::uint32_t>(*x)))
      throw BadInput("'" + part + "' is not a count from 1 to 65535", "--deepep");
    v.push_back(static_cast<std::uint32_t>(*x));
  }
  if (v.size() != 2 && v.size() != 4)
    throw BadInput("expected TOP_K,EXPERTS or TOP_K,EXPERTS,GROUPS,GROUP_TOPK", "--deepep");
  MoeShape moe;
  moe.top_k = v[0];
  moe.experts = v[1];
  if (v.size() == 4) {
    moe.router_groups = v[2];
    moe.router_group_topk = v[3];
  }
  if (moe.top_k > moe.experts) throw BadInput("top_k above the experts", "--deepep");
  if (const std::string problem = router_groups_problem(moe); !problem.empty())
    throw BadInput(problem, "--deepep");
  return token_routing(moe);
}

std::uint32_t parse_node(const std::string& text, const std::string& where) {
  const auto v = parse_plain_number(text);
  if (!v || *v < 0 || *v != static_cast<double>(static_cast<std::uint32_t>(*v)))
    throw BadInput("'" + text + "' is not a compute node id", where);
  return static_cast<std::uint32_t>(*v);
}

std::vector<VertexId> parse_ranks(const std::string& text, std::uint32_t compute_nodes) {
  std::vector<VertexId> nodes;
  for (const std::string& part : split_list(text)) {
    const auto dash = part.find('-');
    if (dash == std::string::npos) {
      nodes.push_back(parse_node(part, "--ranks"));
      continue;
    }
    const std::uint32_t lo = parse_node(std::string(trim(part.substr(0, dash))), "--ranks");
    const std::uint32_t hi = parse_node(std::string(trim(part.substr(dash + 1))), "--ranks");
    if (hi < lo) throw BadInput("empty range '" + part + "'", "--ranks");
    for (std::uint32_t v = lo; v <= hi; ++v) nodes.push_back(v);
  }
  if (nodes.empty()) throw BadInput("no ranks given", "--ranks");
  for (VertexId v : nodes)
    if (v >= compute_nodes)
      throw BadInput("rank " + std::to_string(v) + " is not a compute node (the topology has " +
                         std::to_string(compute_nodes) + ")",
                     "--ranks");
  return nodes;
}

int run(CommandContext& ctx) {
  const auto& vm = ctx.options;
  const auto op = parse_collective_op(vm["op"].as<std::string>());
  if (!op) throw BadInput("unknown collective op '" + vm["op"].as<std::string>() + "'", "--op");
  const double bytes = parse_size(vm["bytes"].as<std::string>(), "--bytes");
  if (!(bytes > 0)) throw BadInput("the collective size must be positive", "--bytes");
  if (vm.count("algorithm"))
    ctx.config.set("collective.algorithm", vm["algorithm"].as<std::string>(), "--algorithm");
  const std::string algorithm = collective_algorithm_from_config(ctx.config);
  CollectiveOptions options = collective_options_from_config(ctx.config);
  options.with_flows = vm["flows"].as<bool>();
  if (vm.count("topology-file")) {
    ctx.config.set("topology.kind", "file", "--topology-file");
    ctx.config.set("topology.file", vm["topology-file"].as<std::string>(), "--topology-file");
  }
  // The server's fabric defaults to server.device's measured link class.
  const LinkClass intra = intra_link_from_config(ctx.config);
  const Network net = build_network(topology::topology_spec_from_config(ctx.config, &intra));

  CollectiveRequest req;
  req.op = *op;
  req.bytes = bytes;
  req.gpus_per_node = net.gpus_per_node();
  req.root = parse_node(vm["root"].as<std::string>(), "--root");
  if (vm.count("deepep")) req.dedup = parse_deepep(vm["deepep"].as<std::string>(), req.op);
  if (vm.count("ranks")) {
    req.nodes = parse_ranks(vm["ranks"].as<std::string>(), net.compute_count());
  } else {
    for (VertexId v = 0; v < net.compute_count(); ++v) req.nodes.push_back(v);
  }
  int ranks = static_cast<int>(req.nodes.size() * req.gpus_per_node);
  if (!net.uniform_gpus()) {
    // Servers of different sizes: every GPU of each member node takes part.
    ranks = 0;
    req.gpus_per_node = 1;
    for (VertexId v : req.nodes) {
      req.node_gpus.push_back(net.gpus_on(v));
      req.gpus_per_node = std::max(req.gpus_per_node, net.gpus_on(v));
      ranks += static_cast<int>(net.gpus_on(v));
    }
  }
  const CollectivePlan plan = plan_collective(net, req, algorithm, options);
  const double fraction = dedup_network_fraction(req.dedup, static_cast<std::uint32_t>(req.nodes.size()));

  const double algbw = plan.time_s > 0 ? bytes / plan.time_s : 0;
  const double busbw = algbw * busbw_factor(req.op, ranks);
  const bool forest = plan.algorithm == "forest";
  if (ctx.json) {
    nlohmann::json j;
    j["op"] = std::string(collective_op_name(req.op));
    j["algorithm"] = plan.algorithm;
    j["requested_algorithm"] = algorithm;
    j["ranks"] = ranks;
    j["nodes"] = req.nodes.size();
    j["gpus_per_node"] = req.gpus_per_node;
    j["bytes"] = bytes;
    j["time_s"] = plan.time_s;
    j["latency_s"] = plan.latency_s;
    j["intra_node_time_s"] = plan.intra_node_time_s;
    j["algbw_Bps"] = algbw;
    j["busbw_Bps"] = busbw;
    j["model"] = plan.model;
    j["stages"] = plan.stages;
    if (options.with_flows) j["flows"] = plan.flows.size();
    if (req.dedup.active()) j["network_fraction"] = fraction;
    if (forest) {
      j["forest"] = options.greedy_forest ? "greedy" : "exact";
      j["trees"] = plan.trees;
      j["optimal_time_s"] = plan.optimal_time_s;
      j["built_time_s"] = plan.built_time_s;
      j["cut_bandwidth_Bps"] = plan.cut_bandwidth_Bps;
      j["cut_weight"] = plan.cut_weight;
      j["packing_efficiency"] = plan.built_time_s > 0 ? plan.optimal_time_s / plan.built_time_s : 1.0;
    }
    *ctx.out << j.dump() << "\n";
    return kExitOk;
  }
  std::ostream& out = *ctx.out;
  out << collective_op_name(req.op) << " of " << human_quantity(Quantity::Size, bytes) << " per rank over "
      << req.nodes.size() << " node(s) x " << req.gpus_per_node << " GPU(s) = " << ranks << " ranks on "
      << (net.info().kind.empty() ? "the topology" : net.info().kind) << "\n";
  out << "  algorithm  " << plan.algorithm
      << (algorithm != plan.algorithm ? " (asked: " + algorithm + ")" : "")
      << (plan.model.empty() ? "" : ", " + plan.model + " model") << "\n";
  out << "  time       " << human_quantity(Quantity::Time, plan.time_s) << "  (latency "
      << human_quantity(Quantity::Time, plan.latency_s);
  if (plan.intra_node_time_s > 0)
    out << ", intra-node " << human_quantity(Quantity::Time, plan.intra_node_time_s);
  out << ")\n";
  if (req.dedup.active())
    out << "  dispatch   once per destination node (deepep): " << fraction
        << " of the plain All-to-All's network bytes\n";
  out << "  algbw      " << human_quantity(Quantity::Bandwidth, algbw) << "\n";
  out << "  busbw      " << human_quantity(Quantity::Bandwidth, busbw) << "\n";
  if (forest) {
    out << "  trees      " << plan.trees << " (" << (options.greedy_forest ? "greedy" : "exact")
        << " packing)\n";
    out << "  cut        " << human_quantity(Quantity::Bandwidth, plan.cut_bandwidth_Bps) << " leaving "
        << plan.cut_weight << " member(s) (x* = "
        << human_quantity(Quantity::Bandwidth, plan.cut_weight ? plan.cut_bandwidth_Bps / plan.cut_weight : 0)
        << " per member)\n";
    out << "  optimum    " << human_quantity(Quantity::Time, plan.optimal_time_s)
        << " (cut bound, bandwidth part; built packing " << human_quantity(Quantity::Time, plan.built_time_s)
        << ", " << (plan.built_time_s > 0 ? 100.0 * plan.optimal_time_s / plan.built_time_s : 100.0)
        << "% of optimal)\n";
  }
  if (options.with_flows)
    out << "  flows      " << plan.flows.size() << " in " << plan.stages << " stage(s)\n";
  return kExitOk;
}

}  // namespace

Command collective_command() {
  return Command{"collective", "time one collective on one topology with one algorithm", "", add_options,
                 run};
}

}  // namespace toposweep::cli
