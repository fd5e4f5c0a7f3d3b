#include "toposweep/collective/hierarchical.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "toposweep/util/error.hpp"

namespace toposweep {

namespace {

// Latency steps of one reduce-scatter or all-gather pass over n members of a dimension.
double pass_steps(DimensionType type, std::uint32_t n) {
  switch (type) {
    case DimensionType::Ring:
      return n - 1.0;
    case DimensionType::FullyConnected:
      return 1.0;
    case DimensionType::Switch:
      return std::ceil(std::log2(static_cast<double>(n)));
  }
  return n - 1.0;
}

}  // namespace

HierarchicalTime hierarchical_time(CollectiveOp op, const std::vector<Dimension>& dims,
                                   const std::vector<std::uint32_t>& group_sizes, double bytes) {
  HierarchicalTime h;
  const std::size_t K = dims.size();
  std::vector<std::size_t> order(K);
  for (std::size_t k = 0; k < K; ++k) order[k] = k;
  double N = 1;
  for (std::uint32_t n : group_sizes) N *= n;
  double m = bytes;
  if (op == CollectiveOp::AllGather) {
    std::reverse(order.begin(), order.end());
    m = bytes / N;  // each member's contribution; grows by n_k per dimension
  }
  for (std::size_t k : order) {
    const std::uint32_t n = group_sizes[k];
    if (n <= 1) continue;
    const double nk = n;
    DimensionPhase ph;
    ph.dim = static_cast<std::uint32_t>(k);
    ph.group_size = n;
    double passes = 1;
    switch (op) {
      case CollectiveOp::AllReduce:
        ph.bytes = 2 * m * (nk - 1) / nk;
        m /= nk;
        passes = 2;
        break;
      case CollectiveOp::ReduceScatter:
        ph.bytes = m * (nk - 1) / nk;
        m /= nk;
        break;
      case CollectiveOp::AllGather:
        ph.bytes = m * (nk - 1);
        m *= nk;
        break;
      case CollectiveOp::AllToAll:
        ph.bytes = m * (nk - 1) / nk;
        break;
      case CollectiveOp::Broadcast:
      case CollectiveOp::Reduce:
        ph.bytes = m;
        break;  // pipelined chain along the dimension
    }
    const double steps = (op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce)
                             ? pass_steps(DimensionType::Ring, n)
                             : passes * pass_steps(dims[k].type, n);
    ph.latency_s = steps * dims[k].latency_s;
    ph.time_s = ph.bytes / dims[k].bandwidth_Bps + ph.latency_s;
    h.sequential_s += ph.time_s;
    h.sequential_latency_s += ph.latency_s;
    if (ph.time_s > h.pipelined_s) {
      h.pipelined_s = ph.time_s;
      h.pipelined_latency_s = ph.latency_s;
    }
    h.phases.push_back(ph);
  }
  return h;
}

std::vector<std::uint32_t> dimension_coordinates(const std::vector<Dimension>& dims, VertexId v) {
  std::vector<std::uint32_t> c(dims.size());
  for (std::size_t k = 0; k < dims.size(); ++k) {
    c[k] = v % dims[k].size;
    v /= dims[k].size;
  }
  return c;
}

GroupShape group_shape(const Network& net, const std::vector<VertexId>& members) {
  GroupShape out;
  const auto& dims = net.info().dims;
  if (dims.empty()) {
    out.why_not = "hierarchical needs a multidim network (topology.kind = multidim)";
    out.where = "collective.algorithm";
    return out;
  }
  std::uint64_t product = 1;
  for (const auto& d : dims) product *= d.size;
  if (product != net.compute_count()) {
    out.why_not = "hierarchical: the dimensions hold " + std::to_string(product) + " NPUs but the network has " +
                  std::to_string(net.compute_count());
    out.where = "topology.dims";
    return out;
  }
  std::vector<std::uint32_t>& shape = out.shape;
  shape.assign(dims.size(), 0);
  if (members.size() == product) {  // distinct compute nodes, all of them: the whole grid
    for (std::size_t k = 0; k < dims.size(); ++k) shape[k] = dims[k].size;
    return out;
  }
  std::vector<std::vector<char>> used(dims.size());
  for (std::size_t k = 0; k < dims.size(); ++k) used[k].assign(dims[k].size, 0);
  for (VertexId v : members) {
    for (std::size_t k = 0; k < dims.size(); ++k) {
      used[k][v % dims[k].size] = 1;
      v /= dims[k].size;
    }
  }
  std::uint64_t grid = 1;
  for (std::size_t k = 0; k < dims.size(); ++k)
    grid *= shape[k] = static_cast<std::uint32_t>(std::count(used[k].begin(), used[k].end(), 1));
  // Members are distinct, so they fill the product of their coordinate sets iff the counts match.
  if (grid != members.size()) {
    out.why_not = "hierarchical: the " + std::to_string(members.size()) +
                  " members are not a sub-grid of the dimensions (their coordinates span " + std::to_string(grid) +
                  " positions)";
    out.where = "collective members";
    shape.clear();
  }
  return out;
}

std::vector<std::uint32_t> hierarchical_group_shape(const Network& net, const std::vector<VertexId>& members) {
  GroupShape g = group_shape(net, members);
  if (g.shape.empty()) throw BadInput(g.why_not, g.where);
  return std::move(g.shape);
}

std::vector<std::vector<VertexId>> dimension_lines(const Network& net, const std::vector<VertexId>& members,
                                                   std::uint32_t k) {
  const auto& dims = net.info().dims;
  std::map<std::vector<std::uint32_t>, std::vector<std::pair<std::uint32_t, VertexId>>> lines;
  for (VertexId v : members) {
    auto c = dimension_coordinates(dims, v);
    const std::uint32_t ck = c[k];
    c[k] = 0;
    lines[c].emplace_back(ck, v);
  }
  std::vector<std::vector<VertexId>> out;
  for (auto& [key, line] : lines) {
    std::sort(line.begin(), line.end());
    std::vector<VertexId> l;
    for (const auto& [ck, v] : line) l.push_back(v);
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace toposweep
