#include "toposweep/topology/edge_list.hpp"

#include <algorithm>
#include <fstream>
#include <istream>
#include <optional>
#include <ostream>
#include <sstream>
#include <vector>

#include "toposweep/util/error.hpp"
#include "toposweep/util/units.hpp"

namespace toposweep::topology {
namespace {

constexpr std::uint64_t kMaxVertices = 1u << 26;

std::uint32_t parse_id(const std::string& token, const std::string& where) {
  const auto v = parse_plain_number(token);
  if (!v || *v < 0 || *v != static_cast<double>(static_cast<std::uint64_t>(*v)) || *v >= kMaxVertices ||
      token.find_first_not_of("0123456789") != std::string::npos)
    throw BadInput("vertex id '" + token + "' is not an integer in [0, 2^26)", where);
  return static_cast<std::uint32_t>(*v);
}

}  // namespace

Network read_edge_list(std::istream& in, const std::string& name, const EdgeListOptions& options) {
  std::vector<Arc> arcs;
  std::vector<std::uint32_t> switches;
  std::vector<std::string> switch_where;
  std::uint64_t vertices = 0;
  std::uint32_t declared_gpus = 0;  // gpus_per_node line (0: none)
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const std::string where = name + ":" + std::to_string(lineno);
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream fields(line);
    std::vector<std::string> tok;
    for (std::string t; fields >> t;) tok.push_back(t);
    if (tok.empty()) continue;
    if (tok[0] == "switch") {
      if (tok.size() < 2) throw BadInput("'switch' needs at least one vertex id", where);
      for (std::size_t i = 1; i < tok.size(); ++i) {
        switches.push_back(parse_id(tok[i], where));
        vertices = std::max<std::uint64_t>(vertices, switches.back() + 1ull);
      }
      continue;
    }
    if (tok[0] == "gpus_per_node") {
      const auto n = tok.size() == 2 ? parse_plain_number(tok[1]) : std::nullopt;
      if (!n || *n < 1 || *n > (1 << 16) || *n != static_cast<double>(static_cast<std::uint32_t>(*n)))
        throw BadInput("expected 'gpus_per_node N' with N a whole number in 1..65536", where);
      if (declared_gpus != 0) throw BadInput("gpus_per_node declared twice", where);
      declared_gpus = static_cast<std::uint32_t>(*n);
      if (options.gpus_given && declared_gpus != options.server.gpus)
        throw BadInput("the file declares gpus_per_node " + tok[1] + " but server.gpus = " +
                           std::to_string(options.server.gpus) + " (drop one of them)",
                       where);
      continue;
    }
    if (tok.size() != 3 && tok.size() != 4)
      throw BadInput("expected 'SRC DST BANDWIDTH [LATENCY]' or 'switch ID ...', got " +
                         std::to_string(tok.size()) + " fields",
                     where);
    Arc a;
    a.src = parse_id(tok[0], where);
    a.dst = parse_id(tok[1], where);
    if (a.src == a.dst) throw BadInput("self-loop at vertex " + tok[0], where);
    a.bandwidth_Bps = parse_bandwidth(tok[2], where);
    if (!(a.bandwidth_Bps > 0)) throw BadInput("bandwidth must be positive, got '" + tok[2] + "'", where);
    a.latency_s = tok.size() == 4 ? parse_time(tok[3], where) : options.default_latency_s;
    vertices = std::max<std::uint64_t>(vertices, std::max(a.src, a.dst) + 1ull);
    arcs.push_back(a);
  }
  if (in.bad()) throw RuntimeFailure("read error on " + name);
  if (arcs.empty()) throw BadInput("no links in the topology file", name);

  std::vector<bool> is_switch(vertices, false);
  for (std::uint32_t s : switches) {
    if (is_switch[s]) throw BadInput("switch " + std::to_string(s) + " declared twice", name);
    is_switch[s] = true;
  }
  // Compute nodes first, switches after, each in increasing id order.
  std::vector<std::uint32_t> relabel(vertices);
  std::uint32_t next = 0;
  for (std::uint32_t v = 0; v < vertices; ++v)
    if (!is_switch[v]) relabel[v] = next++;
  const std::uint32_t compute = next;
  for (std::uint32_t v = 0; v < vertices; ++v)
    if (is_switch[v]) relabel[v] = next++;
  if (compute < 1) throw BadInput("the topology file has no compute node", name);

  NetworkBuilder b(compute, declared_gpus != 0 ? declared_gpus : options.server.gpus,
                   options.server.intra_bandwidth_Bps);
  apply_server_fabric(b, options.server, b.vertex_count());
  b.add_switches(static_cast<std::uint32_t>(vertices) - compute);
  for (const Arc& a : arcs) b.add_arc(relabel[a.src], relabel[a.dst], a.bandwidth_Bps, a.latency_s);
  TopologyInfo info;
  info.kind = "file";
  info.optical = options.optical;
  b.set_info(std::move(info));
  return std::move(b).build();
}

Network read_edge_list_file(const std::string& path, const EdgeListOptions& options) {
  std::ifstream in(path);
  if (!in) throw BadInput("cannot read topology file '" + path + "'", "topology.file");
  return read_edge_list(in, path, options);
}

void write_edge_list(std::ostream& out, const Network& network) {
  out << "# toposweep topology: " << (network.info().kind.empty() ? "network" : network.info().kind) << ", "
      << network.compute_count() << " compute nodes, " << network.switch_count() << " switches, "
      << network.arc_count() << " directed links\n"
      << "# SRC DST BANDWIDTH LATENCY (one direction per line)\n";
  constexpr std::uint32_t kPerLine = 16;
  for (std::uint32_t v = network.compute_count(); v < network.vertex_count(); v += kPerLine) {
    out << "switch";
    for (std::uint32_t s = v; s < std::min(network.vertex_count(), v + kPerLine); ++s) out << ' ' << s;
    out << '\n';
  }
  for (const Arc& a : network.arcs())
    out << a.src << ' ' << a.dst << ' ' << format_bandwidth(a.bandwidth_Bps) << ' '
        << format_time(a.latency_s) << '\n';
}

}  // namespace toposweep::topology
