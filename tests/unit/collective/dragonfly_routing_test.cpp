// Dragonfly routing (topology.routing = minimal | valiant; collective/routing.hpp): the paths and
// splits of RouteCache against an exhaustive search written here (a BFS per vertex and every
// shortest path enumerated), and uniform All-to-All (direct) against closed forms derived below.
//
// Layout of build_dragonfly (docs/topology.md): g groups of a routers, p servers per router;
// server s sits in group s / (a p), router C + r (C = g a p servers) in group r / a.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "toposweep/collective/config_keys.hpp"
#include "toposweep/collective/options.hpp"
#include "toposweep/collective/plan.hpp"
#include "toposweep/collective/routing.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/topology/config_keys.hpp"
#include "toposweep/util/config.hpp"

namespace toposweep {
namespace {

constexpr double kLinkBps = 25e9;  // 200 Gb/s

Network dragonfly(std::uint32_t a, std::uint32_t p, std::uint32_t h, const std::string& routing,
                  const std::string& latency = "0s", std::uint32_t groups = 0) {
  KeyRegistry registry(topology::config_keys());
  registry.add(collective::config_keys());
  Config c;
  c.set("topology.kind", "dragonfly", "test");
  c.set("topology.routers_per_group", std::to_string(a), "test");
  c.set("topology.terminals_per_router", std::to_string(p), "test");
  c.set("topology.global_links_per_router", std::to_string(h), "test");
  c.set("topology.link_bandwidth", "200Gbps", "test");
  c.set("topology.link_latency", latency, "test");
  c.set("server.gpus", "1", "test");
  if (groups) c.set("topology.groups", std::to_string(groups), "test");
  if (!routing.empty()) c.set("topology.routing", routing, "test");
  validate_and_default(c, registry);
  return network_from_config(c);
}

CollectiveRequest alltoall(const Network& net, double bytes) {
  CollectiveRequest r;
  r.op = CollectiveOp::AllToAll;
  r.bytes = bytes;
  r.gpus_per_node = net.gpus_per_node();
  for (VertexId v = 0; v < net.compute_count(); ++v) r.nodes.push_back(v);
  return r;
}

// The exhaustive search: hop distances by a forward BFS from every vertex, and every shortest
// path from a vertex to a set of vertices enumerated, with the share per-hop ECMP gives it (at
// every vertex, one over its out-arcs that stay on a shortest path to the set).
struct Search {
  const Network& net;
  std::uint32_t a, p;
  std::vector<std::vector<std::uint32_t>> d;  // d[u][v]: hops u -> v

  Search(const Network& n, std::uint32_t a_, std::uint32_t p_) : net(n), a(a_), p(p_) {
    const std::uint32_t V = net.vertex_count();
    d.assign(V, std::vector<std::uint32_t>(V, UINT32_MAX));
    for (VertexId s = 0; s < V; ++s) {
      std::vector<VertexId> queue{s};
      d[s][s] = 0;
      for (std::size_t i = 0; i < queue.size(); ++i)
        for (ArcId arc : net.out_arcs(queue[i])) {
          const VertexId v = net.arc(arc).dst;
          if (d[s][v] == UINT32_MAX) d[s][v] = d[s][queue[i]] + 1, queue.push_back(v);
        }
    }
  }
  std::uint32_t groups() const { return net.switch_count() / a; }
  std::uint32_t group(VertexId v) const {
    return net.is_switch(v) ? (v - net.compute_count()) / a : v / (a * p);
  }
  std::vector<VertexId> routers(std::uint32_t k) const {
    std::vector<VertexId> r;
    for (std::uint32_t i = 0; i < a; ++i) r.push_back(net.compute_count() + k * a + i);
    return r;
  }
  std::uint32_t to_set(VertexId u, const std::vector<VertexId>& T) const {
    std::uint32_t m = UINT32_MAX;
    for (VertexId t : T) m = std::min(m, d[u][t]);
    return m;
  }
  // Every shortest path u -> T (ending at its first vertex in T), with its per-hop ECMP share
  // times `share`, appended to `out` after `prefix`.
  void paths_to(VertexId u, const std::vector<VertexId>& T, double share, std::vector<ArcId>& prefix,
                std::map<std::vector<ArcId>, double>& out) const {
    const std::uint32_t L = to_set(u, T);
    const auto walk = [&](auto&& self, VertexId v, std::uint32_t depth, double f) -> void {
      if (depth == L) {
        if (std::find(T.begin(), T.end(), v) != T.end()) out[prefix] += f;
        return;
      }
      std::uint32_t next = 0;  // out-arcs of v on a shortest path to T
      for (ArcId arc : net.out_arcs(v))
        if (to_set(net.arc(arc).dst, T) + 1 == to_set(v, T)) ++next;
      for (ArcId arc : net.out_arcs(v)) {
        const VertexId w = net.arc(arc).dst;
        if (d[u][w] != depth + 1) continue;  // all walks that move one BFS layer outwards
        prefix.push_back(arc);
        self(self, w, depth + 1, next > 0 ? f / next : 0.0);
        prefix.pop_back();
      }
    };
    walk(walk, u, 0, share);
  }
  // Minimal: every shortest path src -> dst.
  std::map<std::vector<ArcId>, double> minimal(VertexId src, VertexId dst) const {
    std::map<std::vector<ArcId>, double> out;
    std::vector<ArcId> prefix;
    paths_to(src, {dst}, 1.0, prefix, out);
    return out;
  }
  // Valiant between groups: for every group k other than src's and dst's (1/(g-2) each), every
  // shortest path to a router of k, continued by every shortest path from that router to dst.
  std::map<std::vector<ArcId>, double> valiant(VertexId src, VertexId dst) const {
    const std::uint32_t g = groups(), gs = group(src), gd = group(dst);
    if (g < 3 || gs == gd) return minimal(src, dst);
    std::map<std::vector<ArcId>, double> out;
    for (std::uint32_t k = 0; k < g; ++k) {
      if (k == gs || k == gd) continue;
      std::map<std::vector<ArcId>, double> leg1;
      std::vector<ArcId> prefix;
      paths_to(src, routers(k), 1.0 / (g - 2), prefix, leg1);
      for (const auto& [path, f] : leg1) {
        std::vector<ArcId> whole = path;
        paths_to(net.arc(path.back()).dst, {dst}, f, whole, out);
      }
    }
    return out;
  }
};

std::map<std::vector<ArcId>, double> as_map(const std::vector<WeightedPath>& paths) {
  std::map<std::vector<ArcId>, double> m;
  for (const auto& wp : paths) m[wp.arcs] += wp.fraction;
  return m;
}

void expect_same_paths(const std::map<std::vector<ArcId>, double>& got,
                       const std::map<std::vector<ArcId>, double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (auto g = got.begin(), w = want.begin(); g != got.end(); ++g, ++w) {
    EXPECT_EQ(g->first, w->first);
    EXPECT_NEAR(g->second, w->second, 1e-12);
  }
}

struct Size {
  std::uint32_t a, p, h;
};

TEST(DragonflyRouting, PathsMatchExhaustiveSearch) {
  // Minimal: ecmp_paths are every shortest path, each with its per-hop share; Valiant: exactly
  // the concatenations of a shortest path to an intermediate group k (k != i, j) with a shortest
  // path on from where it entered k, 1/(g-2) per k. hashed_path picks one of them.
  for (const Size s : {Size{2, 1, 1}, Size{3, 1, 1}, Size{2, 2, 2}, Size{1, 2, 3}}) {
    SCOPED_TRACE(testing::Message() << "a=" << s.a << " p=" << s.p << " h=" << s.h);
    for (const std::string routing : {"minimal", "valiant"}) {
      SCOPED_TRACE(routing);
      const Network net = dragonfly(s.a, s.p, s.h, routing);
      ASSERT_EQ(net.info().routing, routing);
      const Search search(net, s.a, s.p);
      RouteCache routes(net);
      std::uint32_t between_groups = 0;
      for (VertexId src = 0; src < net.compute_count(); ++src)
        for (VertexId dst = 0; dst < net.compute_count(); ++dst) {
          if (src == dst) continue;
          const bool valiant = routing == "valiant";
          const auto want = valiant ? search.valiant(src, dst) : search.minimal(src, dst);
          expect_same_paths(as_map(routes.ecmp_paths(src, dst)), want);
          const auto hashed = routes.hashed_path(src, dst);
          ASSERT_TRUE(hashed.has_value());
          EXPECT_TRUE(want.count(*hashed)) << src << " -> " << dst;
          between_groups += search.group(src) != search.group(dst);
          EXPECT_EQ(routes.intermediate_groups(src, dst),
                    valiant && search.group(src) != search.group(dst) ? search.groups() - 2 : 0u);
          std::vector<std::uint32_t> others, got;  // the groups other than src's and dst's
          for (std::uint32_t k = 0; k < search.groups(); ++k)
            if (k != search.group(src) && k != search.group(dst)) others.push_back(k);
          for (std::uint32_t t = 0; t < routes.intermediate_groups(src, dst); ++t)
            got.push_back(routes.intermediate_group(src, dst, t));
          if (routes.intermediate_groups(src, dst) > 0) {
            EXPECT_EQ(got, others);
          }
        }
      EXPECT_GT(between_groups, 0u);
    }
  }
}

TEST(DragonflyRouting, SplitLoadsMatchExhaustiveSearch) {
  // ecmp_split (the analytical expected load) puts on every arc the sum of the shares of the
  // exhaustive search's paths through it.
  for (const Size s : {Size{2, 1, 1}, Size{2, 2, 2}}) {
    for (const std::string routing : {"minimal", "valiant"}) {
      SCOPED_TRACE(testing::Message() << "a=" << s.a << " p=" << s.p << " h=" << s.h << " " << routing);
      const Network net = dragonfly(s.a, s.p, s.h, routing, "1us");
      const Search search(net, s.a, s.p);
      RouteCache routes(net);
      for (VertexId src = 0; src < net.compute_count(); ++src)
        for (VertexId dst = 0; dst < net.compute_count(); ++dst) {
          if (src == dst) continue;
          const auto want = routing == "valiant" ? search.valiant(src, dst) : search.minimal(src, dst);
          std::vector<double> expected(net.arc_count(), 0.0);
          std::size_t longest = 0;
          for (const auto& [path, f] : want) {
            for (ArcId arc : path) expected[arc] += 3.0 * f;
            longest = std::max(longest, path.size());
          }
          for (int twice = 0; twice < 2; ++twice) {  // computed, then replayed from the memo
            std::vector<double> load(net.arc_count(), 0.0);
            std::vector<ArcId> touched;
            const auto latency = routes.ecmp_split(src, dst, 3.0, load, touched);
            ASSERT_TRUE(latency.has_value());
            EXPECT_NEAR(*latency, longest * 1e-6, 1e-15);
            for (ArcId arc = 0; arc < net.arc_count(); ++arc) EXPECT_NEAR(load[arc], expected[arc], 1e-12);
          }
        }
    }
  }
}

// Uniform All-to-All, direct: n = g a p servers, each sending S/n to every other server, on a
// balanced dragonfly (g = a h + 1, one global link per ordered pair of groups). All links have
// bandwidth B and latency lambda; the time is the busiest link's load / B plus the latency of the
// longest path used.
//
// a = 1 (one router per group, the routers fully connected by global links, n = g p):
// - every server's link to its router carries everything it sends, (n - 1) S/n, and the link
//   back everything it receives, the same;
// - minimal: the only shortest path between servers of groups i != j is server, router i,
//   router j, server (3 hops; any other route takes a second global link). The global arc i -> j
//   carries exactly the p x p server pairs of (i, j): p^2 S/n.
//   T_min = max(p^2, n - 1) S/(n B) + 3 lambda.
// - valiant (g >= 3): the pair (i, j) goes i -> k -> j through each of the g - 2 other groups k,
//   1/(g-2) of it each, and never over i -> j itself. The arc i -> j carries first legs (traffic
//   from i to the g - 2 groups d != i, j, each pair of groups p^2 S/n, 1/(g-2) of it via k = j):
//   p^2 S/n; and second legs (traffic to j from the g - 2 groups s != i, j via k = i): p^2 S/n.
//   2 p^2 S/n in all: Valiant doubles the global load. Paths: server, router i, router k,
//   router j, server (4 hops).
//   T_val = max(2 p^2, n - 1) S/(n B) + 4 lambda.
TEST(DragonflyRouting, AllToAllOneRouterPerGroupClosedForms) {
  const double S = 1e9, lambda = 1e-6;
  int checked = 0;
  for (std::uint32_t p : {1u, 2u, 3u, 4u, 6u})
    for (std::uint32_t h : {2u, 3u, 5u}) {
      const double g = h + 1, n = g * p;
      SCOPED_TRACE(testing::Message() << "a=1 p=" << p << " h=" << h);
      const Network minimal = dragonfly(1, p, h, "", "1us");  // the default: minimal
      const Network valiant = dragonfly(1, p, h, "valiant", "1us");
      const double t_min = plan_collective(minimal, alltoall(minimal, S), "direct").time_s;
      const double t_val = plan_collective(valiant, alltoall(valiant, S), "direct").time_s;
      const double want_min = std::max(double(p) * p, n - 1) * S / (n * kLinkBps) + 3 * lambda;
      const double want_val = std::max(2.0 * p * p, n - 1) * S / (n * kLinkBps) + 4 * lambda;
      EXPECT_NEAR(t_min, want_min, 1e-12 * want_min);
      EXPECT_NEAR(t_val, want_val, 1e-12 * want_val);
      ++checked;
    }
  EXPECT_EQ(checked, 15);
}

// a >= 2. Shortest paths by hop count (minimal routing, what the tool has always done) are not
// only local-global-local here: a path over two global links ties whenever its end routers save
// the local hops. Example a = 2, h = 1 (g = 3; router r of group i links to group i + r + 1,
// arriving at router 1 - r): from router 1 of group 0 to router 0 of group 1, local-global-local
// is R(0,1) -> R(0,0) -> R(1,1) -> R(1,0), 3 router hops, and so is R(0,1) -> R(2,0) -> R(2,1) ->
// R(1,0), global-local-global through group 2. So the busiest global link carries more than its own pair of
// groups, (a p)^2 S/n, and no simple closed form holds; the exhaustive search gives the per-arc loads (each
// pair's paths and per-hop shares, summed), and two bounds hold whatever the ties:
// - minimal: every byte between groups crosses at least one of the g(g-1) global arcs, so the
//   busiest carries at least the mean, g(g-1) (a p)^2 S/n / (g(g-1)) = (a p)^2 S/n;
// - valiant: every such byte crosses at least two (into k, out of k): at least 2 (a p)^2 S/n.
TEST(DragonflyRouting, AllToAllLoadsMatchExhaustiveSearchAndBounds) {
  const double S = 1e9;
  for (const Size s : {Size{2, 1, 1}, Size{2, 4, 1}, Size{3, 2, 1}, Size{2, 2, 2}, Size{4, 2, 1}}) {
    for (const std::string routing : {"minimal", "valiant"}) {
      SCOPED_TRACE(testing::Message() << "a=" << s.a << " p=" << s.p << " h=" << s.h << " " << routing);
      const Network net = dragonfly(s.a, s.p, s.h, routing);
      const Search search(net, s.a, s.p);
      const std::uint32_t n = net.compute_count();
      ASSERT_EQ(n, (s.a * s.h + 1) * s.a * s.p);
      std::vector<double> load(net.arc_count(), 0.0);
      for (VertexId src = 0; src < n; ++src)
        for (VertexId dst = 0; dst < n; ++dst) {
          if (src == dst) continue;
          const auto paths = routing == "valiant" ? search.valiant(src, dst) : search.minimal(src, dst);
          for (const auto& [path, f] : paths)
            for (ArcId arc : path) load[arc] += f * S / n;
        }
      double busiest = 0, busiest_global = 0;
      for (ArcId arc = 0; arc < net.arc_count(); ++arc) {
        busiest = std::max(busiest, load[arc]);
        const Arc& x = net.arc(arc);
        if (net.is_switch(x.src) && net.is_switch(x.dst) && search.group(x.src) != search.group(x.dst))
          busiest_global = std::max(busiest_global, load[arc]);
      }
      const double t = plan_collective(net, alltoall(net, S), "direct").time_s;
      EXPECT_NEAR(t, busiest / kLinkBps, 1e-12 * t);
      const double pair = double(s.a) * s.p * s.a * s.p * S / n;  // (a p)^2 S/n
      EXPECT_GE(busiest_global, (routing == "valiant" ? 2 : 1) * pair * (1 - 1e-12));
    }
  }
}

TEST(DragonflyRouting, MinimalIsTheDefaultBitForBit) {
  // topology.routing = minimal is what a dragonfly without the key does: the same time and the
  // same flows, to the bit.
  for (const Size s : {Size{2, 2, 1}, Size{4, 2, 2}}) {
    const Network plain = dragonfly(s.a, s.p, s.h, "", "1us");
    const Network minimal = dragonfly(s.a, s.p, s.h, "minimal", "1us");
    EXPECT_EQ(plain.info().routing, "minimal");
    CollectiveOptions o;
    o.with_flows = true;
    for (const char* algorithm : {"direct", "ring"}) {
      CollectiveRequest r = alltoall(plain, 1e9);
      if (std::string(algorithm) == "ring") r.op = CollectiveOp::AllReduce;
      const auto a = plan_collective(plain, r, algorithm, o);
      const auto b = plan_collective(minimal, r, algorithm, o);
      EXPECT_EQ(a.time_s, b.time_s);
      ASSERT_EQ(a.flows.size(), b.flows.size());
      for (std::size_t i = 0; i < a.flows.size(); ++i) {
        EXPECT_EQ(a.flows[i].path, b.flows[i].path);
        EXPECT_EQ(a.flows[i].bytes, b.flows[i].bytes);
      }
    }
  }
}

// valiant_split (a phase's Valiant transfers at once: leg 1 per source and intermediate group,
// leg 2 per entry router and destination) gives every arc the load, and the phase the latency,
// that ecmp_split gives transfer by transfer (the per-pair reference, one walk per transfer and
// intermediate group, itself checked against the exhaustive search above), up to floating-point
// rounding: for every pair between groups with S/n each (a direct All-to-All), and for a sparse
// set with unequal sizes and repeated sources and destinations; computed, then from its memo. The
// balanced sizes have one global link per pair of groups; g = 3 with a = h = 2 has two (leg 1
// enters an intermediate group at two routers), g = 5 with a = 4, h = 2 two as well.
TEST(DragonflyRouting, ValiantSplitOfAPhaseEqualsTheSplitOfEachTransfer) {
  struct Case {
    Size size;
    std::uint32_t groups;
  };
  for (const auto [s, groups] :
       {Case{{2, 1, 1}, 0}, Case{{2, 2, 2}, 0}, Case{{3, 2, 1}, 0}, Case{{4, 2, 1}, 0}, Case{{2, 3, 3}, 0},
        Case{{2, 2, 2}, 3}, Case{{4, 1, 2}, 5}}) {
    SCOPED_TRACE(testing::Message() << "a=" << s.a << " p=" << s.p << " h=" << s.h << " g=" << groups);
    const Network net = dragonfly(s.a, s.p, s.h, "valiant", "1us", groups);
    const std::uint32_t n = net.compute_count();
    RouteCache reference_routes(net);
    std::vector<std::vector<PairBytes>> sets(2);
    std::uint64_t x = 12345;
    for (VertexId src = 0; src < n; ++src)
      for (VertexId dst = 0; dst < n; ++dst) {
        if (src == dst || reference_routes.intermediate_groups(src, dst) == 0) continue;
        sets[0].push_back({src, dst, 1e9 / n});
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        if ((x >> 33) % 3 == 0) sets[1].push_back({src, dst, 1e6 * double(1 + (x >> 40) % 1000)});
      }
    ASSERT_FALSE(sets[0].empty());
    RouteCache routes(net);
    for (const auto& set : sets) {
      std::vector<double> want(net.arc_count(), 0.0);
      std::vector<ArcId> want_touched;
      double want_latency = 0;
      for (const PairBytes& t : set) {
        const auto latency = reference_routes.ecmp_split(t.src, t.dst, t.bytes, want, want_touched);
        ASSERT_TRUE(latency.has_value());
        want_latency = std::max(want_latency, *latency);
      }
      double busiest = 0;
      for (double w : want) busiest = std::max(busiest, w);
      for (int twice = 0; twice < 2; ++twice) {
        std::vector<double> got(net.arc_count(), 0.0);
        std::vector<ArcId> touched;
        const RouteCache::ValiantSplit v = routes.valiant_split(set, got, touched);
        EXPECT_FALSE(v.unreachable.has_value());
        EXPECT_NEAR(v.latency, want_latency, 1e-15);
        std::sort(touched.begin(), touched.end());
        std::sort(want_touched.begin(), want_touched.end());
        EXPECT_EQ(touched, want_touched);
        for (ArcId arc = 0; arc < net.arc_count(); ++arc) EXPECT_NEAR(got[arc], want[arc], 1e-12 * busiest);
      }
    }
  }
}

TEST(DragonflyRouting, TwoGroupsAndOneGroupStayMinimal) {
  // Valiant needs an intermediate group: with g = 2 (a = 1, h = 1) every pair routes minimally,
  // and inside one group traffic never leaves it.
  const Network two = dragonfly(1, 3, 1, "valiant");
  RouteCache routes(two);
  for (VertexId s = 0; s < two.compute_count(); ++s)
    for (VertexId t = 0; t < two.compute_count(); ++t) EXPECT_EQ(routes.intermediate_groups(s, t), 0u);
  const Network net = dragonfly(2, 2, 2, "valiant");
  const Search search(net, 2, 2);
  RouteCache r2(net);
  for (VertexId s = 0; s < 4; ++s)  // group 0: servers 0-3
    for (VertexId t = 0; t < 4; ++t) {
      if (s == t) continue;
      EXPECT_EQ(r2.intermediate_groups(s, t), 0u);
      expect_same_paths(as_map(r2.ecmp_paths(s, t)), search.minimal(s, t));
    }
}

}  // namespace
}  // namespace toposweep
