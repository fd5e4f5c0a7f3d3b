#include <metis.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "toposweep/topology/metrics.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::topology {
namespace {

// Bandwidth leaving side 0 and side 1 of a vertex partition; the cut is the smaller.
double cut_of(const Network& net, const std::vector<int>& side) {
  double out[2] = {0, 0};
  for (const Arc& a : net.arcs())
    if (side[a.src] != side[a.dst]) out[side[a.src]] += a.bandwidth_Bps;
  return std::min(out[0], out[1]);
}

Bisection exact_bisection(const Network& net) {
  const std::uint32_t C = net.compute_count();
  const std::uint32_t half = C / 2;
  double best = std::numeric_limits<double>::infinity();
  std::vector<int> side(C);
  // Every subset of size floor(C/2) as a bit mask (Gosper's hack).
  for (std::uint32_t mask = (1u << half) - 1; mask < (1u << C);) {
    for (std::uint32_t v = 0; v < C; ++v) side[v] = (mask >> v) & 1u;
    best = std::min(best, cut_of(net, side));
    const std::uint32_t low = mask & -mask, ripple = mask + low;
    mask = (((ripple ^ mask) >> 2) / low) | ripple;
    if (half == 0) break;
  }
  return {best, "exact"};
}

// Small networks with switches: every vertex subset holding floor(C/2) compute nodes.
Bisection exact_bisection_with_switches(const Network& net) {
  const std::uint32_t V = net.vertex_count(), C = net.compute_count();
  const std::uint32_t compute_mask = (1u << C) - 1;
  double best = std::numeric_limits<double>::infinity();
  std::vector<int> side(V);
  for (std::uint32_t mask = 0; mask < (1u << V); ++mask) {
    if (static_cast<std::uint32_t>(std::popcount(mask & compute_mask)) != C / 2) continue;
    for (std::uint32_t v = 0; v < V; ++v) side[v] = (mask >> v) & 1u;
    best = std::min(best, cut_of(net, side));
  }
  return {best, "exact"};
}

Bisection metis_bisection(const Network& net) {
  const std::uint32_t V = net.vertex_count(), C = net.compute_count();
  // Undirected weighted graph: weight of {u, v} = bandwidth u->v + v->u, scaled to integers
  // relative to the smallest one (METIS takes integer weights).
  std::vector<std::map<VertexId, double>> adj(V);
  double wmin = std::numeric_limits<double>::infinity();
  for (const Arc& a : net.arcs()) {
    if (a.src == a.dst) continue;
    adj[a.src][a.dst] += a.bandwidth_Bps;
    adj[a.dst][a.src] += a.bandwidth_Bps;
  }
  for (const auto& m : adj)
    for (const auto& [v, w] : m) wmin = std::min(wmin, w);
  std::vector<idx_t> xadj{0}, adjncy, adjwgt, vwgt(V);
  for (VertexId u = 0; u < V; ++u) {
    for (const auto& [v, w] : adj[u]) {
      adjncy.push_back(static_cast<idx_t>(v));
      adjwgt.push_back(static_cast<idx_t>(std::clamp(std::round(16.0 * w / wmin), 1.0, 1e8)));
    }
    xadj.push_back(static_cast<idx_t>(adjncy.size()));
    vwgt[u] = u < C ? 1 : 0;  // balance counts compute nodes; switches go where they cut least
  }
  idx_t nv = static_cast<idx_t>(V), ncon = 1, nparts = 2, objval = 0;
  real_t ubvec = static_cast<real_t>(1.0 + 1.0 / std::max<std::uint32_t>(C, 2));
  std::vector<idx_t> part(V);
  double best = std::numeric_limits<double>::infinity();
  for (idx_t seed = 1; seed <= 4; ++seed) {
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = seed;
    options[METIS_OPTION_NUMBERING] = 0;
    const int rc =
        METIS_PartGraphRecursive(&nv, &ncon, xadj.data(), adjncy.data(), vwgt.data(), nullptr, adjwgt.data(),
                                 &nparts, nullptr, &ubvec, options, &objval, part.data());
    if (rc != METIS_OK) throw RuntimeFailure("METIS bisection failed (code " + std::to_string(rc) + ")");
    std::vector<int> side(part.begin(), part.end());
    // Rebalance to exactly floor(C/2) : ceil(C/2) compute nodes, moving the node whose move
    // adds the least undirected cut weight.
    auto count0 = [&] { return std::count(side.begin(), side.begin() + C, 0); };
    while (true) {
      const long c0 = count0();
      int from;
      if (c0 > static_cast<long>((C + 1) / 2))
        from = 0;
      else if (c0 < static_cast<long>(C / 2))
        from = 1;
      else
        break;
      double best_gain = -std::numeric_limits<double>::infinity();
      VertexId pick = 0;
      for (VertexId u = 0; u < C; ++u) {
        if (side[u] != from) continue;
        double gain = 0;  // reduction of the cut when u moves
        for (const auto& [v, w] : adj[u]) gain += side[v] == from ? -w : w;
        if (gain > best_gain) {
          best_gain = gain;
          pick = u;
        }
      }
      side[pick] = 1 - from;
    }
    best = std::min(best, cut_of(net, side));
  }
  return {best, "metis_estimate"};
}

}  // namespace

Bisection bisection_bandwidth(const Network& net) {
  if (net.compute_count() < 2) return {0, "exact"};
  if (net.info().bisection_closed_form_Bps > 0) return {net.info().bisection_closed_form_Bps, "closed_form"};
  if (net.switch_count() == 0 && net.compute_count() <= 20) return exact_bisection(net);
  if (net.vertex_count() <= 18) return exact_bisection_with_switches(net);
  return metis_bisection(net);
}

}  // namespace toposweep::topology
