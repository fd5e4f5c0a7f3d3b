// ASTRA-sim inputs for one design point: the network mapping, network.yml, system.json and the
// directory layout (docs/interop.md, "ASTRA-sim").
#include "toposweep/interop/astra_sim.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "toposweep/util/error.hpp"

namespace toposweep::interop {
namespace {

namespace fs = std::filesystem;

constexpr double kGiB = 1073741824.0;  // ASTRA-sim's GB (bw_GBps_to_Bpns)

// Shortest text that reads back as the same double.
std::string number(double x) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::trunc);
  f << text;
  f.close();
  if (!f) throw BadInput("cannot write '" + path.string() + "'", "export --out");
}

// What the hierarchical closed form runs on a dimension of this type (docs/collectives.md).
AstraSimDim dim_of(const Dimension& d) {
  AstraSimDim a;
  a.npus = d.size;
  switch (d.type) {
    case DimensionType::Ring:  // per-NPU bandwidth over both neighbours: one ring at the full rate
      a.topology = "Ring";
      a.bandwidth_GBps = d.bandwidth_Bps / kGiB;
      a.latency_ns = d.latency_s * 1e9;
      a.implementation = "ring";
      break;
    case DimensionType::FullyConnected:  // split over the n-1 peers
      a.topology = "FullyConnected";
      a.bandwidth_GBps = d.bandwidth_Bps / kGiB / std::max<std::uint32_t>(1, d.size - 1);
      a.latency_ns = d.latency_s * 1e9;
      a.implementation = "direct";
      break;
    case DimensionType::Switch:  // ASTRA-sim charges two hops per crossing
      a.topology = "Switch";
      a.bandwidth_GBps = d.bandwidth_Bps / kGiB;
      a.latency_ns = d.latency_s * 1e9 / 2;
      a.implementation = "halvingDoubling";
      break;
  }
  return a;
}

}  // namespace

std::vector<AstraSimDim> astra_sim_network(const AstraSimInput& in) {
  const TopologyInfo& t = in.topology;
  const std::string& alg = in.algorithm;
  if (t.kind == "multidim") {
    if (alg != "auto" && alg != "hierarchical")
      throw BadInput(
          "ASTRA-sim runs multidim collectives dimension by dimension, toposweep's "
          "'hierarchical'; '" +
              alg + "' has no ASTRA-sim counterpart",
          "key collective.algorithm");
    std::vector<AstraSimDim> dims;
    for (const Dimension& d : t.dims) dims.push_back(dim_of(d));
    if (dims.empty()) throw RuntimeFailure("astra_sim_network: a multidim network without dimensions");
    return dims;
  }
  if (t.kind == "switch") {
    // One ideal switch: each server's uplink is degree x link_bandwidth, a crossing two links.
    if (in.gpus_per_server != 1)
      throw BadInput(
          "a switch network maps to one ASTRA-sim Switch dimension only with one GPU per "
          "server; toposweep's intra-server model (" +
              std::to_string(in.gpus_per_server) + " GPUs) has no ASTRA-sim counterpart",
          "key server.gpus");
    if (alg != "auto" && alg != "ring" && alg != "hierarchical")
      throw BadInput(
          "on a switch network ASTRA-sim's counterpart is toposweep's ring (auto, ring or "
          "hierarchical), not '" +
              alg + "'",
          "key collective.algorithm");
    AstraSimDim a;
    a.topology = "Switch";
    a.npus = in.servers;
    a.bandwidth_GBps = t.link_bandwidth_Bps * std::max<std::uint32_t>(1, t.degree) / kGiB;
    a.latency_ns = t.link_latency_s * 1e9;
    a.implementation = "ring";
    return {a};
  }
  throw BadInput(
      "ASTRA-sim's analytical network has Ring, FullyConnected and Switch dimensions: "
      "toposweep maps multidim and switch networks to it, not " +
          (t.kind.empty() ? std::string("this network") : "'" + t.kind + "'"),
      "key topology.kind");
}

std::string astra_sim_network_yaml(const std::vector<AstraSimDim>& dims) {
  auto list = [&](auto field) {
    std::string s = "[ ";
    for (std::size_t k = 0; k < dims.size(); ++k) s += (k ? ", " : "") + field(dims[k]);
    return s + " ]";
  };
  std::string y = "# ASTRA-sim analytical network, written by `toposweep export astra-sim`\n";
  y += "topology: " + list([](const AstraSimDim& d) { return d.topology; }) + "\n";
  y += "npus_count: " + list([](const AstraSimDim& d) { return std::to_string(d.npus); }) + "\n";
  y += "bandwidth: " + list([](const AstraSimDim& d) { return number(d.bandwidth_GBps); }) +
       "  # GB/s, GB = 2^30 B\n";
  y += "latency: " + list([](const AstraSimDim& d) { return number(d.latency_ns); }) + "  # ns\n";
  return y;
}

std::string astra_sim_system_json(const std::vector<AstraSimDim>& dims, const AstraSimInput& in) {
  nlohmann::ordered_json impl = nlohmann::ordered_json::array();
  for (const AstraSimDim& d : dims) impl.push_back(d.implementation);
  // ASTRA-sim's endpoint-delay is whole ns, and 0 aborted it in All-Reduce microbenchmarks
  // (docs/collectives.md): 1 ns stands for "off"; local-mem-bw 0 would divide by zero: 10^9 GB/s
  // stands for free reductions.
  const long delay_ns = std::max(1L, std::lround(in.endpoint_delay_s * 1e9));
  const double mem_GBps = in.reduction_Bps > 0 ? in.reduction_Bps / 1e9 : 1e9;
  nlohmann::ordered_json j;
  j["scheduling-policy"] = "LIFO";
  j["endpoint-delay"] = delay_ns;
  j["active-chunks-per-dimension"] = 1;
  j["preferred-dataset-splits"] = in.chunks;
  j["all-reduce-implementation"] = impl;
  j["all-gather-implementation"] = impl;
  j["reduce-scatter-implementation"] = impl;
  j["all-to-all-implementation"] = impl;
  j["collective-optimization"] = "localBWAware";
  j["local-mem-bw"] = mem_GBps;
  j["boost-mode"] = 0;
  j["roofline-enabled"] = 0;  // compute nodes take their duration_micros
  return j.dump(2) + "\n";
}

AstraSimExport write_astra_sim(const IterationPlan& plan, const AstraSimInput& in, const fs::path& dir,
                               const std::string& prefix) {
  AstraSimExport out;
  out.dims = astra_sim_network(in);  // before anything is written
  std::uint64_t npus = 1;
  for (const AstraSimDim& d : out.dims) npus *= d.npus;
  if (npus != plan.graph.gpus)
    throw BadInput("the plan runs on " + std::to_string(plan.graph.gpus) + " GPUs, ASTRA-sim's network has " +
                       std::to_string(npus) + " NPUs; ASTRA-sim simulates every NPU of its network",
                   in.topology.kind == "multidim" ? "key topology.dims" : "key topology.servers");
  // ASTRA-sim's workload layer runs AllReduce, AllGather, ReduceScatter and AllToAll; a Broadcast
  // takes the node's recorded duration (none here) and a Reduce is never finished.
  for (const Task& t : plan.graph.tasks)
    if (t.kind == TaskKind::Collective && (t.op == CollectiveOp::Broadcast || t.op == CollectiveOp::Reduce))
      throw BadInput(std::string("the iteration has a ") +
                         (t.op == CollectiveOp::Broadcast ? "Broadcast" : "Reduce") +
                         ", which ASTRA-sim's workload layer does not simulate",
                     "export astra-sim");
  // Its All-to-All sends every (token, expert) copy: DeepEP's one copy per node has no counterpart.
  for (const Task& t : plan.graph.tasks)
    if (t.dedup.active())
      throw BadInput(
          "the iteration's expert-parallel All-to-Alls send a token once per node (deepep), which "
          "ASTRA-sim's All-to-All does not model; export with strategy.ep_dispatcher = alltoall",
          "key strategy.ep_dispatcher");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec))
    throw BadInput("cannot create the directory '" + dir.string() + "'", "export --out");
  out.chakra = write_chakra(plan, dir / "workload", prefix, CommSizeConvention::AstraSim);
  out.workload = dir / "workload" / prefix;
  out.network = dir / "network.yml";
  out.system = dir / "system.json";
  out.remote_memory = dir / "remote_memory.json";
  out.readme = dir / "README.md";
  write_text(out.network, astra_sim_network_yaml(out.dims));
  write_text(out.system, astra_sim_system_json(out.dims, in));
  write_text(out.remote_memory, "{\n  \"memory-type\": \"NO_MEMORY_EXPANSION\"\n}\n");
  out.command = "\"$ASTRA_SIM\" --workload-configuration=" + out.workload.string() +
                " --comm-group-configuration=" + out.chakra.comm_groups.string() +
                " --system-configuration=" + out.system.string() +
                " --remote-memory-configuration=" + out.remote_memory.string() +
                " --network-configuration=" + out.network.string();
  std::string r = "# ASTRA-sim inputs written by `toposweep export astra-sim`\n\n";
  r += "One design point's iteration (" + std::to_string(out.chakra.ranks) + " ranks, " +
       std::to_string(out.chakra.nodes) + " Chakra nodes) for ASTRA-sim's analytical backend.\n\n";
  r += "- `network.yml`: the analytical network, one entry per dimension\n";
  r += "- `system.json`: collective implementations per dimension and the system costs\n";
  r += "- `remote_memory.json`: no memory expansion\n";
  r += "- `workload/" + prefix + ".<rank>.et`, `workload/" + prefix +
       ".comm_groups.json`: the Chakra traces and communicator groups\n\n";
  r += "Run it with ASTRA-sim's congestion-unaware analytical binary "
       "(`build/astra_analytical/build.sh -t congestion_unaware` in an ASTRA-sim checkout, binary "
       "`build/astra_analytical/build/bin/AstraSim_Analytical_Congestion_Unaware`):\n\n";
  r += "```sh\nASTRA_SIM=/path/to/AstraSim_Analytical_Congestion_Unaware\n" + out.command + "\n```\n\n";
  r += "It prints `sys[r] finished, T cycles` per rank (1 cycle = 1 ns); the iteration takes the "
       "largest T. toposweep's side: docs/interop.md, \"ASTRA-sim\".\n";
  write_text(out.readme, r);
  return out;
}

}  // namespace toposweep::interop
