#pragma once
// Small networks for the collective tests, built directly with NetworkBuilder.
#include <cstdint>
#include <vector>

#include "toposweep/topology/network.hpp"

namespace toposweep::testnet {

// Bidirectional ring 0-1-...-(p-1)-0.
inline Network ring(std::uint32_t p, double bw, double lat, std::uint32_t gpus = 1, double intra = 0) {
  NetworkBuilder b(p, gpus, intra);
  // Two nodes share one link (not two parallel ones).
  for (std::uint32_t i = 0; i < (p == 2 ? 1 : p); ++i) b.add_link(i, (i + 1) % p, bw, lat);
  b.info().kind = "ring";
  return std::move(b).build();
}

// p compute nodes on one switch (vertex p).
inline Network star(std::uint32_t p, double bw, double lat) {
  NetworkBuilder b(p);
  const VertexId sw = b.add_switches(1);
  for (std::uint32_t i = 0; i < p; ++i) b.add_link(i, sw, bw, lat);
  b.info().kind = "switch";
  return std::move(b).build();
}

inline Network complete(std::uint32_t p, double bw, double lat) {
  NetworkBuilder b(p);
  for (std::uint32_t i = 0; i < p; ++i)
    for (std::uint32_t j = i + 1; j < p; ++j) b.add_link(i, j, bw, lat);
  b.info().kind = "complete";
  return std::move(b).build();
}

// TopoOpt-shaped circulant with a bandwidth per stride: for every (s, bw), links i <-> i+s mod n.
inline Network circulant(std::uint32_t n, const std::vector<std::pair<std::uint32_t, double>>& strides,
                         double lat) {
  NetworkBuilder b(n);
  for (const auto& [s, bw] : strides) {
    for (std::uint32_t i = 0; i < n; ++i) b.add_link(i, (i + s) % n, bw, lat);
    b.info().strides.push_back(s);
  }
  b.info().kind = "topoopt";
  b.info().degree = static_cast<std::uint32_t>(2 * strides.size());
  return std::move(b).build();
}

// The same with every stride at `bw`.
inline Network circulant(std::uint32_t n, const std::vector<std::uint32_t>& strides, double bw, double lat) {
  std::vector<std::pair<std::uint32_t, double>> with_bw;
  for (std::uint32_t s : strides) with_bw.emplace_back(s, bw);
  return circulant(n, with_bw, lat);
}

// Multi-dimensional network: Ring dims get a bidirectional ring, FullyConnected all pairs,
// Switch dims one switch per line; every link at the dimension's bandwidth and latency.
inline Network multidim(const std::vector<Dimension>& dims) {
  std::uint32_t n = 1;
  for (const auto& d : dims) n *= d.size;
  NetworkBuilder b(n);
  std::uint32_t stride = 1;
  for (const auto& d : dims) {
    for (std::uint32_t v = 0; v < n; ++v) {
      const std::uint32_t c = (v / stride) % d.size;
      if (c != 0) continue;  // v is the first member of its line
      std::vector<VertexId> line;
      for (std::uint32_t i = 0; i < d.size; ++i) line.push_back(v + i * stride);
      if (d.type == DimensionType::Ring) {
        if (d.size == 2)
          b.add_link(line[0], line[1], d.bandwidth_Bps, d.latency_s);
        else
          for (std::uint32_t i = 0; i < d.size; ++i)
            b.add_link(line[i], line[(i + 1) % d.size], d.bandwidth_Bps, d.latency_s);
      } else if (d.type == DimensionType::FullyConnected) {
        for (std::uint32_t i = 0; i < d.size; ++i)
          for (std::uint32_t j = i + 1; j < d.size; ++j)
            b.add_link(line[i], line[j], d.bandwidth_Bps, d.latency_s);
      } else {
        const VertexId sw = b.add_switches(1);
        for (VertexId x : line) b.add_link(x, sw, d.bandwidth_Bps, d.latency_s);
      }
    }
    stride *= d.size;
  }
  b.info().kind = "multidim";
  b.info().dims = dims;
  return std::move(b).build();
}

// Three-tier k-ary fat-tree (Al-Fares et al.): k pods of k/2 edge and k/2 aggregation switches,
// (k/2)^2 cores; host h sits on edge h / (k/2); aggregation switch j of every pod joins cores
// j*(k/2) .. j*(k/2)+k/2-1. Vertex ids: hosts, then edges, then aggregations, then cores, each
// pod by pod.
inline Network fat_tree(std::uint32_t k, double bw, double lat) {
  const std::uint32_t half = k / 2, hosts = k * half * half;
  NetworkBuilder b(hosts);
  const VertexId edge0 = b.add_switches(k * half);
  const VertexId agg0 = b.add_switches(k * half);
  const VertexId core0 = b.add_switches(half * half);
  for (std::uint32_t h = 0; h < hosts; ++h) b.add_link(h, edge0 + h / half, bw, lat);
  for (std::uint32_t pod = 0; pod < k; ++pod)
    for (std::uint32_t e = 0; e < half; ++e)
      for (std::uint32_t a = 0; a < half; ++a) {
        b.add_link(edge0 + pod * half + e, agg0 + pod * half + a, bw, lat);
        b.add_link(agg0 + pod * half + a, core0 + a * half + e, bw, lat);  // e doubles as core index
      }
  b.info().kind = "fattree";
  return std::move(b).build();
}

// DGX-A100-like boxes (the fabric of ForestColl's A100 evaluation): 8 GPUs per box on one
// NVSwitch at 300 GB/s each way; every GPU's 25 GB/s NIC on one of two InfiniBand switches shared
// by all boxes, even GPUs on the first, odd GPUs on the second. Vertex ids: GPUs box by box, then
// the NVSwitches, then the two IB switches.
inline Network dgx_a100(std::uint32_t boxes, double lat = 0) {
  NetworkBuilder b(8 * boxes);
  const VertexId nvswitch0 = b.add_switches(boxes);
  const VertexId ib0 = b.add_switches(2);
  for (std::uint32_t g = 0; g < 8 * boxes; ++g) {
    b.add_link(g, nvswitch0 + g / 8, 300e9, lat);
    b.add_link(g, ib0 + g % 2, 25e9, lat);
  }
  b.info().kind = "dgx_a100";
  return std::move(b).build();
}

// MI250-like boxes: 16 GCDs per box joined by xGMI links of 50 GB/s each way (the hybrid mesh of
// an 8 x MI250 node: two GCDs of a package share 4 links, the rest 1 or 2, 7 links per GCD, as
// modelled in ForestColl's evaluation), and every GCD's 16 GB/s NIC on one switch shared by all
// boxes. Vertex ids: GCDs box by box, then the switch.
inline Network mi250(std::uint32_t boxes, double lat = 0) {
  struct XgmiLink {
    std::uint32_t a, b, links;
  };
  static constexpr XgmiLink kMesh[] = {
      {0, 1, 4},   {0, 4, 2},   {0, 8, 1},   {1, 5, 1},   {1, 9, 1},   {1, 10, 1},  {2, 3, 4},
      {2, 6, 1},   {2, 9, 1},   {2, 10, 1},  {3, 7, 2},   {3, 11, 1},  {4, 5, 4},   {4, 6, 1},
      {5, 6, 1},   {5, 7, 1},   {6, 7, 4},   {8, 9, 4},   {8, 12, 2},  {9, 13, 1},  {10, 11, 4},
      {10, 14, 1}, {11, 15, 2}, {12, 13, 4}, {12, 14, 1}, {13, 14, 1}, {13, 15, 1}, {14, 15, 4}};
  NetworkBuilder b(16 * boxes);
  const VertexId sw = b.add_switches(1);
  for (std::uint32_t box = 0; box < boxes; ++box) {
    for (const XgmiLink& l : kMesh) b.add_link(16 * box + l.a, 16 * box + l.b, 50e9 * l.links, lat);
    for (std::uint32_t g = 0; g < 16; ++g) b.add_link(16 * box + g, sw, 16e9, lat);
  }
  b.info().kind = "mi250";
  return std::move(b).build();
}

inline std::vector<VertexId> iota_nodes(std::uint32_t p) {
  std::vector<VertexId> v(p);
  for (std::uint32_t i = 0; i < p; ++i) v[i] = i;
  return v;
}

}  // namespace toposweep::testnet
