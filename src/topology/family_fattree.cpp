#include <algorithm>
#include <cmath>

#include "merged_arcs.hpp"
#include "toposweep/topology/families.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::topology {
namespace {

using LeafSplit = LeafPorts;
LeafSplit leaf_split(std::uint32_t k, double oversubscription) {
  return leaf_ports(k, oversubscription);
}

std::uint32_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return static_cast<std::uint32_t>((a + b - 1) / b);
}

bool fits(std::uint32_t ports, std::uint32_t tiers, std::uint32_t k, double oversubscription) {
  const LeafSplit s = leaf_split(k, oversubscription);
  const std::uint32_t leaves = ceil_div(ports, s.down);
  if (tiers == 2) return leaves <= k;
  return ceil_div(leaves, k / 2) <= k;  // pods of k/2 edge switches, at most k pods
}

}  // namespace

// down:up = oversubscription:1 with down + up = k, rounded to whole ports.
LeafPorts leaf_ports(std::uint32_t k, double oversubscription) {
  LeafPorts s;
  s.down = static_cast<std::uint32_t>(std::lround(k * oversubscription / (1.0 + oversubscription)));
  if (s.down >= k) s.down = k - 1;
  if (s.down < 1) s.down = 1;
  s.up = k - s.down;
  return s;
}

std::uint32_t fattree_auto_radix(std::uint32_t server_ports, std::uint32_t tiers, double oversubscription) {
  for (std::uint32_t k = 4; k <= 4096; k += 2)
    if (fits(server_ports, tiers, k, oversubscription)) return k;
  throw InvalidDesign("no switch radix up to 4096 fits " + std::to_string(server_ports) +
                          " server ports in " + std::to_string(tiers) + " tiers",
                      "topology.fattree_radix");
}

std::uint32_t fattree_auto_radix(std::uint32_t servers, std::uint32_t degree, std::uint32_t tiers,
                                 double oversubscription) {
  const std::uint32_t smallest = fattree_auto_radix(servers * degree, tiers, oversubscription);
  // A server whose ports straddle two leaves reaches a server on one of them in two hops from
  // that leaf's ports only, so shortest-path (ECMP) routing puts their traffic on part of its
  // NICs: take the smallest fitting radix up to twice the smallest whose leaves hold whole
  // servers (down ports a multiple of the degree) or whose servers span whole leaves.
  for (std::uint32_t k = smallest; k <= 2 * smallest && k <= 4096; k += 2) {
    const std::uint32_t down = leaf_split(k, oversubscription).down;
    if ((down % degree == 0 || degree % down == 0) && fits(servers * degree, tiers, k, oversubscription))
      return k;
  }
  return smallest;
}

Network build_fattree(const FatTreeSpec& spec) {
  if (spec.servers < 1) throw BadInput("a fat-tree needs at least 1 server", "topology.servers");
  if (spec.degree < 1) throw BadInput("degree must be at least 1", "topology.degree");
  if (spec.tiers != 2 && spec.tiers != 3)
    throw BadInput("fat-tree tiers must be 2 (leaf-spine) or 3, got " + std::to_string(spec.tiers),
                   "topology.fattree_tiers");
  if (!(spec.oversubscription > 0) || !std::isfinite(spec.oversubscription))
    throw BadInput("oversubscription must be a positive number", "topology.oversubscription");
  if (!(spec.link_bandwidth_Bps > 0))
    throw BadInput("link bandwidth must be positive", "topology.link_bandwidth");
  const std::uint32_t ports = spec.servers * spec.degree;
  std::uint32_t k = spec.radix;
  if (k == 0) k = fattree_auto_radix(spec.servers, spec.degree, spec.tiers, spec.oversubscription);
  if (k < 4 || k % 2 != 0)
    throw BadInput("fat-tree radix must be an even number >= 4, got " + std::to_string(k),
                   "topology.fattree_radix");
  if (!fits(ports, spec.tiers, k, spec.oversubscription))
    throw InvalidDesign(
        std::to_string(ports) + " server ports (" + std::to_string(spec.servers) + " servers x degree " +
            std::to_string(spec.degree) + ") do not fit a " + std::to_string(spec.tiers) +
            "-tier fat-tree of radix " + std::to_string(k) + " (radix " +
            std::to_string(fattree_auto_radix(spec.servers, spec.degree, spec.tiers, spec.oversubscription)) +
            " would)",
        "topology.fattree_radix");

  const LeafSplit split = leaf_split(k, spec.oversubscription);
  const std::uint32_t leaves = ceil_div(ports, split.down);
  const double bw = spec.link_bandwidth_Bps, lat = spec.link_latency_s;
  NetworkBuilder b(spec.servers, spec.server.gpus, spec.server.intra_bandwidth_Bps);
  apply_server_fabric(b, spec.server, b.vertex_count());
  detail::MergedArcs arcs;
  {
    std::size_t links = ports + std::size_t{leaves} * split.up;
    if (spec.tiers == 3) links += std::size_t{ceil_div(leaves, k / 2)} * split.up * (k / 2);
    arcs.reserve(2 * links);
  }
  // The arcs vertex by vertex, each vertex's by destination: the network's own order
  // (arc_before), so nothing is sorted. Servers, then leaves, then the upper tiers.
  const VertexId leaf0 = b.add_switches(leaves);
  const std::uint32_t d = spec.degree, up = split.up, half = k / 2;
  for (std::uint32_t v = 0; v < spec.servers; ++v)
    for (std::uint32_t p = v * d; p < (v + 1) * d; ++p) arcs.add_arc(v, leaf0 + p / split.down, bw, lat);
  auto down_to_servers = [&](std::uint32_t l) {  // leaf l's arcs to the servers of its ports
    for (std::uint32_t p = l * split.down; p < std::min((l + 1) * split.down, ports); ++p)
      arcs.add_arc(leaf0 + l, p / d, bw, lat);
  };
  if (spec.tiers == 2) {
    // Every leaf has one link to each of `up` spines.
    const VertexId spine0 = b.add_switches(up);
    for (std::uint32_t l = 0; l < leaves; ++l) {
      down_to_servers(l);
      for (std::uint32_t s = 0; s < up; ++s) arcs.add_arc(leaf0 + l, spine0 + s, bw, lat);
    }
    for (std::uint32_t s = 0; s < up; ++s)
      for (std::uint32_t l = 0; l < leaves; ++l) arcs.add_arc(spine0 + s, leaf0 + l, bw, lat);
  } else {
    // Pods of k/2 edge switches, each linked to all `up` aggregation switches of its pod;
    // aggregation switch j of every pod links to the k/2 cores of core group j.
    const std::uint32_t pods = ceil_div(leaves, half);
    const VertexId agg0 = b.add_switches(pods * up);
    const VertexId core0 = b.add_switches(up * half);
    for (std::uint32_t l = 0; l < leaves; ++l) {
      down_to_servers(l);
      for (std::uint32_t a = 0; a < up; ++a) arcs.add_arc(leaf0 + l, agg0 + (l / half) * up + a, bw, lat);
    }
    for (std::uint32_t pod = 0; pod < pods; ++pod)
      for (std::uint32_t a = 0; a < up; ++a) {
        for (std::uint32_t l = pod * half; l < std::min((pod + 1) * half, leaves); ++l)
          arcs.add_arc(agg0 + pod * up + a, leaf0 + l, bw, lat);
        for (std::uint32_t c = 0; c < half; ++c)
          arcs.add_arc(agg0 + pod * up + a, core0 + a * half + c, bw, lat);
      }
    for (std::uint32_t a = 0; a < up; ++a)
      for (std::uint32_t c = 0; c < half; ++c)
        for (std::uint32_t pod = 0; pod < pods; ++pod)
          arcs.add_arc(core0 + a * half + c, agg0 + pod * up + a, bw, lat);
  }
  arcs.flush_into(b);
  TopologyInfo info;
  info.kind = "fattree";
  info.degree = spec.degree;
  info.link_bandwidth_Bps = bw;
  info.link_latency_s = lat;
  info.fattree_tiers = spec.tiers;
  info.fattree_radix = k;
  info.oversubscription = spec.oversubscription;
  info.optical = "none";
  if (split.down % d == 0) {
    // Every server's ports on one leaf: the leaf, and on three tiers the pod, group the servers.
    info.tree_groups.assign(spec.tiers - 1, std::vector<std::uint32_t>(spec.servers));
    for (std::uint32_t v = 0; v < spec.servers; ++v) {
      info.tree_groups[0][v] = v * d / split.down;
      if (spec.tiers == 3) info.tree_groups[1][v] = info.tree_groups[0][v] / half;
    }
  }
  // Full leaves, an even number of them: the cut between two halves of the leaves is bounded
  // by the servers' ports or by the leaves' uplinks, whichever is smaller; the upper tiers
  // are non-blocking.
  if (ports % split.down == 0 && split.down % spec.degree == 0 && leaves % 2 == 0)
    info.bisection_closed_form_Bps = (ports / 2.0) * bw * std::min(1.0, double(split.up) / split.down);
  b.set_info(std::move(info));
  return std::move(b).build();
}

}  // namespace toposweep::topology
