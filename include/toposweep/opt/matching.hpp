#pragma once
// Maximum-weight matching on an undirected graph (Edmonds' blossom algorithm, via Boost.Graph):
// TopoOpt places model-parallel links by repeated matching on the MP demand.
#include <cstdint>
#include <utility>
#include <vector>

namespace toposweep::opt {

struct WeightedEdge {
  std::uint32_t u = 0;
  std::uint32_t v = 0;
  double weight = 0;
};

// Pairs (u < v) of a matching of largest total weight (not necessarily of largest size; edges of
// weight <= 0 are never used). Parallel edges keep the heaviest; self-loops are ignored.
std::vector<std::pair<std::uint32_t, std::uint32_t>> maximum_weight_matching(
    std::uint32_t vertices, const std::vector<WeightedEdge>& edges);

}  // namespace toposweep::opt
