// Dragonfly (kind = dragonfly): router, port and link counts and the global-link arrangement
// against closed forms derived here; hop statistics against BFS over all pairs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "topology_test_helpers.hpp"
#include "toposweep/topology/families.hpp"
#include "toposweep/topology/metrics.hpp"
#include "toposweep/topology/spec.hpp"

namespace toposweep::topology {
namespace {

DragonflySpec dragonfly(std::uint32_t groups, std::uint32_t a, std::uint32_t p, std::uint32_t h) {
  DragonflySpec s;
  s.groups = groups;
  s.routers = a;
  s.terminals = p;
  s.global_links = h;
  s.link_bandwidth_Bps = 25e9;  // 200 Gb/s Slingshot port (HPE Slingshot 200 Gb/s switch datasheet)
  return s;
}

TEST(Dragonfly, CountsAndGlobalArrangementMatchClosedForms) {
  int built = 0;
  for (std::uint32_t a : {1u, 2u, 3u, 4u, 6u})
    for (std::uint32_t p : {1u, 2u, 3u})
      for (std::uint32_t h : {1u, 2u, 3u})
        for (std::uint32_t groups : {0u, 2u, 3u, 4u, 5u, 7u}) {
          const std::uint32_t g = groups == 0 ? a * h + 1 : groups;
          if ((a * h) % (g - 1) != 0) {
            EXPECT_THROW(build_dragonfly(dragonfly(groups, a, p, h)), InvalidDesign);
            continue;
          }
          SCOPED_TRACE(testing::Message() << "g=" << g << " a=" << a << " p=" << p << " h=" << h);
          const Network net = build_dragonfly(dragonfly(groups, a, p, h));
          EXPECT_EQ(net.compute_count(), g * a * p);
          EXPECT_EQ(net.switch_count(), g * a);
          // Links: g a p terminal + g a(a-1)/2 local + g a h / 2 global, two ports each.
          const std::uint64_t links = std::uint64_t{g} * a * p + g * a * (a - 1) / 2 + g * a * h / 2;
          EXPECT_EQ(port_stats(net).total_ports, 2 * links);
          // Every router: p terminal + (a-1) local + h global ports; every pair of groups joined by
          // a h / (g-1) global links (counted one direction).
          std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> between;
          for (VertexId r = net.compute_count(); r < net.vertex_count(); ++r) {
            std::uint32_t ports = 0;
            for (ArcId id : net.out_arcs(r)) {
              const Arc& arc = net.arc(id);
              ports += arc_ports(net, arc);
              if (!net.is_switch(arc.dst)) continue;
              const std::uint32_t gi = (arc.src - net.compute_count()) / a,
                                  gj = (arc.dst - net.compute_count()) / a;
              if (gi < gj) between[{gi, gj}] += arc_ports(net, arc);
            }
            EXPECT_EQ(ports, p + (a - 1) + h);
          }
          EXPECT_EQ(between.size(), std::size_t{g} * (g - 1) / 2);
          for (const auto& [pair, n] : between) EXPECT_EQ(n, a * h / (g - 1));
          ++built;
        }
  EXPECT_GT(built, 60);
}

TEST(Dragonfly, HopsAgreeWithExhaustiveSearchAndBalancedDiameterIsFive) {
  // Balanced (g = a h + 1, one link per pair of groups): any two routers are at most local, global,
  // local apart, and some pair needs all three: 5 hops between servers.
  for (std::uint32_t a : {2u, 3u, 4u})
    for (std::uint32_t h : {1u, 2u}) {
      const Network net = build_dragonfly(dragonfly(0, a, 2, h));
      SCOPED_TRACE(testing::Message() << "a=" << a << " h=" << h);
      const auto d = test::all_pairs_hops(net);
      std::uint32_t diameter = 0;
      double sum = 0;
      const std::uint32_t C = net.compute_count();
      for (std::uint32_t s = 0; s < C; ++s)
        for (std::uint32_t t = 0; t < C; ++t)
          if (s != t) diameter = std::max(diameter, d[s][t]), sum += d[s][t];
      const HopStats hs = hop_stats(net);
      EXPECT_EQ(diameter, 5u);
      EXPECT_EQ(hs.diameter, 5u);
      EXPECT_NEAR(hs.mean_hops, sum / (double(C) * (C - 1)), 1e-12);
      EXPECT_EQ(d[0][1], 2u);  // two servers of one router
      EXPECT_EQ(d[0][2], 3u);  // neighbouring routers of one group
    }
}

TEST(Dragonfly, ConfigReadsItsKeysAndChecksServers) {
  const Config c = test::topology_config({{"topology.kind", "dragonfly"},
                                          {"topology.routers_per_group", "4"},
                                          {"topology.terminals_per_router", "2"},
                                          {"topology.global_links_per_router", "2"}});
  const Network net = build_network(topology_spec_from_config(c));
  EXPECT_EQ(net.info().kind, "dragonfly");
  EXPECT_EQ(net.compute_count(), 9u * 4 * 2);  // 4 x 2 + 1 = 9 groups
  const Config bad = test::topology_config({{"topology.kind", "dragonfly"}, {"topology.servers", "16"}});
  EXPECT_THROW(topology_spec_from_config(bad), InvalidDesign);
}

TEST(Dragonfly, RoutingKeyIsCarriedAndDragonflyOnly) {
  // topology.routing: minimal by default, valiant when asked, on the built network's info (what
  // collective routing reads); a different value, or the key on any other family, is bad input
  // that names the key.
  const auto built = [](std::initializer_list<std::pair<const char*, const char*>> kv) {
    return build_network(topology_spec_from_config(test::topology_config(kv)));
  };
  EXPECT_EQ(built({{"topology.kind", "dragonfly"}}).info().routing, "minimal");
  EXPECT_EQ(built({{"topology.kind", "dragonfly"}, {"topology.routing", "minimal"}}).info().routing,
            "minimal");
  EXPECT_EQ(built({{"topology.kind", "dragonfly"}, {"topology.routing", "valiant"}}).info().routing,
            "valiant");
  EXPECT_EQ(built({{"topology.kind", "fattree"}, {"topology.servers", "16"}}).info().routing, "");
  for (const char* kind : {"fattree", "switch", "rail", "torus"}) {
    SCOPED_TRACE(kind);
    const std::string text = test::bad_input_text([&] {
      topology_spec_from_config(
          test::topology_config({{"topology.kind", kind}, {"topology.routing", "valiant"}}));
    });
    EXPECT_NE(text.find("topology.routing"), std::string::npos) << text;
    EXPECT_NE(text.find("dragonfly"), std::string::npos) << text;
  }
  // minimal is every family's routing: accepted when written out (a sweep row's replay does).
  for (const char* kind : {"fattree", "switch", "rail", "topoopt"})
    EXPECT_NO_THROW(topology_spec_from_config(
        test::topology_config({{"topology.kind", kind}, {"topology.routing", "minimal"}})))
        << kind;
  const std::string text = test::bad_input_text([] {
    test::topology_config({{"topology.kind", "dragonfly"}, {"topology.routing", "ugal"}});
  });
  EXPECT_NE(text.find("topology.routing"), std::string::npos) << text;
}

}  // namespace
}  // namespace toposweep::topology
