#pragma once
// Helpers shared by the topology tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "toposweep/topology/config_keys.hpp"
#include "toposweep/topology/families.hpp"
#include "toposweep/topology/metrics.hpp"
#include "toposweep/topology/network.hpp"
#include "toposweep/util/config.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep::test {

// A Config with the registry defaults of the topology module plus `kv` (origin "test").
inline Config topology_config(std::initializer_list<std::pair<const char*, const char*>> kv) {
  Config c;
  for (const auto& [k, v] : kv) c.set(k, v, "test");
  validate_and_default(c, KeyRegistry(topology::config_keys()));
  return c;
}

// "what | where" of the BadInput `f` throws, or "no error".
template <class F>
std::string bad_input_text(F&& f) {
  try {
    f();
  } catch (const BadInput& e) {
    return std::string(e.what()) + " | " + e.where();
  }
  return "no error";
}

// Ring distances from 0 summed: R(a) = sum_{i<a} min(i, a-i).
inline double ring_distance_sum(unsigned a) {
  double s = 0;
  for (unsigned i = 0; i < a; ++i) s += std::min(i, a - i);
  return s;
}

// A fat-tree spec: `servers` servers of `degree` ports, `tiers` tiers of radix `radix` (0: the
// smallest that fits), leaves oversubscribed down:up, every link at bw and lat.
inline topology::FatTreeSpec fattree_spec(std::uint32_t servers, std::uint32_t degree, std::uint32_t tiers,
                                          std::uint32_t radix, double oversubscription, double bw,
                                          double lat) {
  topology::FatTreeSpec f;
  f.servers = servers;
  f.degree = degree;
  f.tiers = tiers;
  f.radix = radix;
  f.oversubscription = oversubscription;
  f.link_bandwidth_Bps = bw;
  f.link_latency_s = lat;
  return f;
}

// Hop distance between every pair of compute nodes by BFS from each (switches relay).
inline std::vector<std::vector<std::uint32_t>> all_pairs_hops(const Network& net) {
  const std::uint32_t V = net.vertex_count(), C = net.compute_count();
  std::vector<std::vector<std::uint32_t>> d(C, std::vector<std::uint32_t>(C, UINT32_MAX));
  for (VertexId s = 0; s < C; ++s) {
    std::vector<std::uint32_t> dist(V, UINT32_MAX);
    std::queue<VertexId> q;
    dist[s] = 0;
    q.push(s);
    while (!q.empty()) {
      const VertexId u = q.front();
      q.pop();
      for (ArcId a : net.out_arcs(u))
        if (dist[net.arc(a).dst] == UINT32_MAX) dist[net.arc(a).dst] = dist[u] + 1, q.push(net.arc(a).dst);
    }
    for (VertexId t = 0; t < C; ++t) d[s][t] = dist[t];
  }
  return d;
}

// Minimum over vertex bipartitions holding floor(C/2) compute nodes on side 1 of the smaller
// side's outgoing bandwidth: the definition of bisection_bandwidth, by enumeration (small
// networks only: 2^V cuts).
inline double brute_force_bisection(const Network& net) {
  const std::uint32_t V = net.vertex_count(), C = net.compute_count();
  double best = std::numeric_limits<double>::infinity();
  for (std::uint64_t mask = 0; mask < (std::uint64_t{1} << V); ++mask) {
    std::uint32_t ones = 0;
    for (std::uint32_t v = 0; v < C; ++v) ones += (mask >> v) & 1u;
    if (ones != C / 2) continue;
    double out[2] = {0, 0};
    for (const Arc& a : net.arcs()) {
      const int sa = (mask >> a.src) & 1u, sb = (mask >> a.dst) & 1u;
      if (sa != sb) out[sa] += a.bandwidth_Bps;
    }
    best = std::min(best, std::min(out[0], out[1]));
  }
  return best;
}

// The network's bisection against the enumeration: equal to `closed_form_Bps` by the closed form
// where one is given (> 0), else found by METIS or search and never below the true minimum.
inline void expect_bisection(const Network& net, double closed_form_Bps) {
  const double exact = brute_force_bisection(net);
  const topology::Bisection b = topology::bisection_bandwidth(net);
  if (closed_form_Bps > 0) {
    EXPECT_EQ(b.method, "closed_form");
    EXPECT_NEAR(b.bandwidth_Bps, closed_form_Bps, 1e-6);
    EXPECT_NEAR(exact, closed_form_Bps, 1e-6);
  } else {
    EXPECT_NE(b.method, "closed_form");
    EXPECT_GE(b.bandwidth_Bps, exact - 1e-6);
  }
}

// A rail fabric of servers of 8 GPUs, every NIC at `nic_Bps` with 1 us links.
inline topology::RailSpec rail_spec(std::uint32_t servers, std::uint32_t rails, std::uint32_t planes,
                                    std::uint32_t radix, bool spine, double oversubscription, double nic_Bps,
                                    std::uint32_t tiers = 2) {
  topology::RailSpec s;
  s.servers = servers;
  s.rails = rails;
  s.planes = planes;
  s.radix = radix;
  s.tiers = tiers;
  s.spine = spine;
  s.oversubscription = oversubscription;
  s.link_bandwidth_Bps = nic_Bps;
  s.link_latency_s = 1e-6;
  s.server.gpus = 8;
  return s;
}

}  // namespace toposweep::test
