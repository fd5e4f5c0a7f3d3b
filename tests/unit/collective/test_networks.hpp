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

// TopoOpt-shaped circulant: for every stride s, links i <-> i+s mod n.
inline Network circulant(std::uint32_t n, const std::vector<std::uint32_t>& strides, double bw, double lat) {
  NetworkBuilder b(n);
  for (std::uint32_t s : strides)
    for (std::uint32_t i = 0; i < n; ++i)
      b.add_arc(i, (i + s) % n, bw, lat), b.add_arc((i + s) % n, i, bw, lat);
  b.info().kind = "topoopt";
  b.info().strides = strides;
  b.info().degree = static_cast<std::uint32_t>(2 * strides.size());
  return std::move(b).build();
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

inline std::vector<VertexId> iota_nodes(std::uint32_t p) {
  std::vector<VertexId> v(p);
  for (std::uint32_t i = 0; i < p; ++i) v[i] = i;
  return v;
}

}  // namespace toposweep::testnet
