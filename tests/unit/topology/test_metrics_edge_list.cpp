// Metrics against closed forms, and the edge-list file format (round trip, errors).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "topology_test_helpers.hpp"
#include "toposweep/topology/build.hpp"
#include "toposweep/topology/config_keys.hpp"
#include "toposweep/topology/edge_list.hpp"
#include "toposweep/topology/families.hpp"
#include "toposweep/topology/metrics.hpp"

namespace toposweep::topology {
namespace {

using ::testing::HasSubstr;

// Write and read back: the copy has the same arcs but no family info (not vertex-transitive,
// no closed forms), so metrics on it take the general code paths.
Network round_trip(const Network& n) {
  std::stringstream ss;
  write_edge_list(ss, n);
  EdgeListOptions o;
  o.server.gpus = n.gpus_per_node();
  o.server.intra_bandwidth_Bps = n.intra_bandwidth_Bps();
  return read_edge_list(ss, "roundtrip", o);
}

void expect_same_graph(const Network& a, const Network& b) {
  ASSERT_EQ(a.compute_count(), b.compute_count());
  ASSERT_EQ(a.switch_count(), b.switch_count());
  ASSERT_EQ(a.arc_count(), b.arc_count());
  for (ArcId i = 0; i < a.arc_count(); ++i) {
    EXPECT_EQ(a.arc(i).src, b.arc(i).src);
    EXPECT_EQ(a.arc(i).dst, b.arc(i).dst);
    EXPECT_EQ(a.arc(i).bandwidth_Bps, b.arc(i).bandwidth_Bps);  // exact
    EXPECT_EQ(a.arc(i).latency_s, b.arc(i).latency_s);
  }
}

TEST(HopStats, RingsMatchClosedForms) {
  for (std::uint32_t n = 3; n <= 41; ++n) {
    TopoOptSpec s;
    s.servers = n;
    s.degree = 2;
    s.link_bandwidth_Bps = 1e9;
    s.strides = {1};
    const Network ring = build_topoopt(s);
    // C_n: diameter floor(n/2); mean = sum_i min(i, n-i) / (n-1) = n^2/4/(n-1) (n even), (n+1)/4 (odd).
    const double mean = n % 2 == 0 ? double(n) * n / 4 / (n - 1) : (n + 1) / 4.0;
    for (const Network* net : {&ring}) {
      const HopStats h = hop_stats(*net);
      EXPECT_EQ(h.diameter, n / 2) << n;
      EXPECT_NEAR(h.mean_hops, mean, 1e-12) << n;
      EXPECT_TRUE(h.connected());
    }
    const HopStats general = hop_stats(round_trip(ring));  // all-pairs bit-parallel BFS
    EXPECT_EQ(general.diameter, n / 2);
    EXPECT_NEAR(general.mean_hops, mean, 1e-12);
  }
}

TEST(HopStats, TorusAllPairsAgreesWithClosedForm) {
  // 8 x 6 x 5 = 240 nodes: several 64-source batches in the general path.
  TorusSpec s;
  s.dims = {8, 6, 5};
  s.link_bandwidth_Bps = 1e9;
  const Network t = round_trip(build_torus(s));
  const HopStats h = hop_stats(t);
  EXPECT_EQ(h.diameter, 4u + 3u + 2u);
  const double sum =
      30 * test::ring_distance_sum(8) + 40 * test::ring_distance_sum(6) + 48 * test::ring_distance_sum(5);
  EXPECT_NEAR(h.mean_hops, sum / 239, 1e-12);
}

TEST(HopStats, DisconnectedPairsAreCounted) {
  TopoOptSpec s;
  s.servers = 8;
  s.degree = 2;
  s.link_bandwidth_Bps = 1e9;
  s.strides = {2};  // two 4-cycles
  const Network n = build_topoopt(s);
  const HopStats h = hop_stats(round_trip(n));
  EXPECT_EQ(h.unreachable_pairs, 8u * 4);
  EXPECT_EQ(h.diameter, 2u);
  EXPECT_FALSE(is_connected(n));
}

TEST(Bisection, ExactEnumerationMatchesClosedForms) {
  // Ring of 10: 2 links cut; torus 4x4: 2 links per line of the cut dimension x 4 lines.
  TopoOptSpec r;
  r.servers = 10;
  r.degree = 2;
  r.link_bandwidth_Bps = 1e9;
  r.strides = {1};
  const Network ring = build_topoopt(r);
  EXPECT_EQ(bisection_bandwidth(ring).method, "closed_form");
  EXPECT_DOUBLE_EQ(bisection_bandwidth(ring).bandwidth_Bps, 2e9);
  const Bisection exact_ring = bisection_bandwidth(round_trip(ring));
  EXPECT_EQ(exact_ring.method, "exact");
  EXPECT_DOUBLE_EQ(exact_ring.bandwidth_Bps, 2e9);

  TorusSpec t;
  t.dims = {4, 4};
  t.link_bandwidth_Bps = 1e9;
  const Network torus = build_torus(t);
  EXPECT_DOUBLE_EQ(bisection_bandwidth(torus).bandwidth_Bps, 8e9);
  const Bisection exact_torus = bisection_bandwidth(round_trip(torus));
  EXPECT_EQ(exact_torus.method, "exact");
  EXPECT_DOUBLE_EQ(exact_torus.bandwidth_Bps, 8e9);
}

TEST(Bisection, ExactWithSwitchesOnSmallNetworks) {
  // Star of 5 servers on one switch, 1 GB/s links: the best split puts 2 servers alone, cut
  // 2 GB/s (the switch may sit on either side). Plus a 0-1 shortcut at 3 GB/s, splitting
  // {0,1} from the rest is no better than splitting {2,3}: still 2 GB/s.
  std::string text = "switch 5\n";
  for (int v = 0; v < 5; ++v) text += std::to_string(v) + " 5 1GB/s\n5 " + std::to_string(v) + " 1GB/s\n";
  std::istringstream in(text + "0 1 3GB/s\n1 0 3GB/s\n");
  const Bisection b = bisection_bandwidth(read_edge_list(in, "star", {}));
  EXPECT_EQ(b.method, "exact");
  EXPECT_DOUBLE_EQ(b.bandwidth_Bps, 2e9);
}

TEST(Bisection, MetisEstimateIsAnUpperBoundAndFindsTheTorusCut) {
  TorusSpec t;
  t.dims = {8, 8};
  t.link_bandwidth_Bps = 1e9;
  const Bisection m = bisection_bandwidth(round_trip(build_torus(t)));
  EXPECT_EQ(m.method, "metis_estimate");
  EXPECT_GE(m.bandwidth_Bps, 16e9 * (1 - 1e-12));  // the exact bisection: 2 x 8 links
  EXPECT_LE(m.bandwidth_Bps, 24e9);
  // Switch networks go to METIS when no closed form is known; a 3-tier tree with half-empty
  // leaves: 12 servers on radix-4 leaves (2 down) -> 6 leaves.
  FatTreeSpec f;
  f.servers = 12;
  f.tiers = 3;
  f.radix = 4;
  f.link_bandwidth_Bps = 1e9;
  const Bisection fb = bisection_bandwidth(build_fattree(f));
  EXPECT_EQ(fb.method, "closed_form");
  EXPECT_DOUBLE_EQ(fb.bandwidth_Bps, 6e9);
  f.servers = 11;  // odd: no closed form, METIS; at least the 5 servers' links on the small side
  const Bisection odd = bisection_bandwidth(build_fattree(f));
  EXPECT_EQ(odd.method, "metis_estimate");
  EXPECT_GE(odd.bandwidth_Bps, 5e9);
  EXPECT_LE(odd.bandwidth_Bps, 6e9);
}

TEST(EdgeList, RoundTripEveryFamily) {
  using test::topology_config;
  for (const auto& kv : std::vector<std::vector<std::pair<const char*, const char*>>>{
           {{"topology.kind", "switch"}},
           {{"topology.kind", "fattree"}, {"topology.servers", "30"}, {"topology.oversubscription", "2"}},
           {{"topology.kind", "topoopt"},
            {"topology.servers", "20"},
            {"topology.degree", "6"},
            {"topology.link_bandwidth", "12.3Gbps"}},
           {{"topology.kind", "multidim"},
            {"topology.dims", "ring:4,fc:3,switch:5"},
            {"topology.dim_bandwidth", "7GB/s,1.1GB/s,3GB/s"},
            {"topology.dim_latency", "0.7us"}},
           {{"topology.kind", "torus"}, {"topology.dims", "3,4"}},
           {{"topology.kind", "expander"}, {"topology.servers", "30"}, {"topology.degree", "3"}},
           {{"topology.kind", "rail"}, {"topology.servers", "12"}, {"topology.planes", "2"}},
           {{"topology.kind", "rail"}, {"topology.servers", "12"}, {"topology.spine", "none"}},
           {{"topology.kind", "dragonfly"}, {"topology.routers_per_group", "3"}}}) {
    Config c;
    for (const auto& [k, v] : kv) c.set(k, v, "test");
    validate_and_default(c, KeyRegistry(config_keys()));
    const Network original = network_from_config(c);
    const std::string path = ::testing::TempDir() + "/topo_roundtrip.txt";
    {
      std::ofstream out(path);
      write_edge_list(out, original);
    }
    c.set("topology.kind", "file", "test");
    c.set("topology.file", path, "test");
    const Network back = network_from_config(c);
    SCOPED_TRACE(original.info().kind);
    expect_same_graph(original, back);
    EXPECT_EQ(back.info().kind, "file");
    std::remove(path.c_str());
  }
}

TEST(EdgeList, SwitchesAreRelabelledAfterComputeNodes) {
  std::istringstream in("# a star\nswitch 0\n0 1 1GB/s\n1 0 1GB/s\n0 2 1GB/s 2us\n2 0 1GB/s\n");
  EdgeListOptions o;
  o.default_latency_s = 1e-6;
  const Network n = read_edge_list(in, "star", o);
  EXPECT_EQ(n.compute_count(), 2u);
  EXPECT_EQ(n.switch_count(), 1u);
  // old 1 -> 0, old 2 -> 1, switch 0 -> 2
  EXPECT_EQ(n.arc(0).src, 0u);
  EXPECT_EQ(n.arc(0).dst, 2u);
  EXPECT_DOUBLE_EQ(n.arc(0).latency_s, 1e-6);
  EXPECT_DOUBLE_EQ(n.arc(n.out_arcs(2)[1]).latency_s, 2e-6);
}

TEST(EdgeList, GpusPerNodeLineSaysWhatEveryComputeNodeIs) {
  const std::string gpu_graph =
      "# 3 GPUs on a switch\ngpus_per_node 1\nswitch 3\n0 3 1GB/s\n3 0 1GB/s\n"
      "1 3 1GB/s\n3 1 1GB/s\n2 3 1GB/s\n3 2 1GB/s\n";
  EdgeListOptions o;
  o.server.gpus = 4;  // server.gpus's default: the file's line wins over it
  {
    std::istringstream in(gpu_graph);
    const Network n = read_edge_list(in, "g.topo", o);
    EXPECT_EQ(n.gpus_per_node(), 1u);
    EXPECT_EQ(n.gpu_count(), 3u);
  }
  {
    std::istringstream in("0 1 1GB/s\n1 0 1GB/s\n");  // no line: server.gpus, as before
    EXPECT_EQ(read_edge_list(in, "g.topo", o).gpu_count(), 8u);
  }
  auto err = [&](const std::string& text, bool given) {
    return test::bad_input_text([&] {
      std::istringstream in(text);
      EdgeListOptions opt = o;
      opt.gpus_given = given;
      read_edge_list(in, "g.topo", opt);
    });
  };
  EXPECT_EQ(err(gpu_graph, true),
            "the file declares gpus_per_node 1 but server.gpus = 4 (drop one of them) | g.topo:2");
  o.server.gpus = 1;
  EXPECT_EQ(err(gpu_graph, true), "no error");  // the user's server.gpus agrees
  EXPECT_THAT(err("gpus_per_node 0\n0 1 1GB/s\n", false), HasSubstr("g.topo:1"));
  EXPECT_THAT(err("gpus_per_node 2.5\n0 1 1GB/s\n", false), HasSubstr("whole number"));
  EXPECT_THAT(err("gpus_per_node\n0 1 1GB/s\n", false), HasSubstr("g.topo:1"));
  EXPECT_THAT(err("gpus_per_node 2\ngpus_per_node 2\n0 1 1GB/s\n", false),
              HasSubstr("declared twice | g.topo:2"));
}

TEST(EdgeList, ErrorsNameFileAndLine) {
  auto err = [](const std::string& text) {
    return test::bad_input_text([&] {
      std::istringstream in(text);
      read_edge_list(in, "t.topo", {});
    });
  };
  EXPECT_THAT(err("0 1 1GB/s\n0 x 1GB/s\n"), HasSubstr("t.topo:2"));
  EXPECT_THAT(err("0 1 25\n"), HasSubstr("t.topo:1"));         // bare number bandwidth
  EXPECT_THAT(err("\n\n0 1 0GB/s\n"), HasSubstr("t.topo:3"));  // zero bandwidth
  EXPECT_THAT(err("0 1 -1GB/s\n"), HasSubstr("t.topo:1"));
  EXPECT_THAT(err("0 1\n"), HasSubstr("t.topo:1"));
  EXPECT_THAT(err("0 1 1GB/s 1us extra\n"), HasSubstr("t.topo:1"));
  EXPECT_THAT(err("0 0 1GB/s\n"), HasSubstr("self-loop"));
  EXPECT_THAT(err("switch\n"), HasSubstr("t.topo:1"));
  EXPECT_THAT(err("# nothing\n"), HasSubstr("no links"));
  EXPECT_THAT(err("0 1 1GB/s\n1 0 1GB/s\n"), "no error");
}

}  // namespace
}  // namespace toposweep::topology
