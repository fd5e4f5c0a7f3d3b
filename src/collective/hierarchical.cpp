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

namespace {

// One pass of a chunk over one dimension in the chunked (ASTRA-sim) schedule.
struct ChunkPass {
  std::uint32_t dim = 0;
  double time_s = 0;
  double latency_s = 0;
};

}  // namespace

namespace {

// Bytes a reduce-scatter pass that moves `moved` bytes per member over n members reduces, as
// ASTRA-sim's implementations count them: a ring reduces each of its n-1 incoming messages
// (m/n each, moved = m(n-1)/n); direct reduces the n-1 messages of one round as one bundle of m/n;
// halving-doubling's first round is its local packet, not reduced, and rounds 2 .. log2 n reduce
// m/4, m/8, ..., m/n (m/2 - m/n in all).
double reduced_bytes(DimensionType type, double n, double moved) {
  if (n <= 1) return 0;
  const double m = moved * n / (n - 1);
  switch (type) {
    case DimensionType::Ring:
      return moved;
    case DimensionType::FullyConnected:
      return m / n;
    case DimensionType::Switch:
      return std::max(0.0, m / 2 - m / n);
  }
  return moved;
}

}  // namespace

ChunkedTime hierarchical_chunked_time(CollectiveOp op, const std::vector<Dimension>& dims,
                                      const std::vector<std::uint32_t>& group_sizes, double bytes,
                                      std::uint32_t chunks, double endpoint_delay_s, double reduction_Bps) {
  std::vector<std::uint32_t> active;
  double N = 1;
  for (std::uint32_t k = 0; k < group_sizes.size(); ++k)
    if (group_sizes[k] > 1) {
      active.push_back(k);
      N *= group_sizes[k];
    }
  ChunkedTime out;
  if (active.empty()) return out;
  const double C = std::max<std::uint32_t>(chunks, 1);
  // One pass moving `moved` bytes per member in `steps` steps, reducing or not.
  auto pass = [&](std::uint32_t k, double moved, double steps, bool reduces) {
    ChunkPass p;
    p.dim = k;
    p.latency_s = steps * (dims[k].latency_s + endpoint_delay_s);
    p.time_s = moved / dims[k].bandwidth_Bps + p.latency_s;
    if (reduces && reduction_Bps > 0)
      p.time_s += 3 * reduced_bytes(dims[k].type, group_sizes[k], moved) / reduction_Bps;
    return p;
  };
  auto steps_of = [&](std::uint32_t k) { return pass_steps(dims[k].type, group_sizes[k]); };
  std::vector<ChunkPass> passes;
  double m = bytes / C;  // a chunk's share of one member's buffer
  switch (op) {
    case CollectiveOp::AllReduce: {
      for (std::size_t i = 0; i + 1 < active.size(); ++i) {
        const double n = group_sizes[active[i]];
        passes.push_back(pass(active[i], m * (n - 1) / n, steps_of(active[i]), true));
        m /= n;
      }
      const std::uint32_t last = active.back();
      const double n = group_sizes[last];
      ChunkPass rs = pass(last, m * (n - 1) / n, steps_of(last), true);
      const ChunkPass ag = pass(last, m * (n - 1) / n, steps_of(last), false);
      rs.time_s += ag.time_s;
      rs.latency_s += ag.latency_s;
      passes.push_back(rs);
      for (std::size_t i = active.size() - 1; i-- > 0;) {
        const double nk = group_sizes[active[i]];
        m *= nk;
        passes.push_back(pass(active[i], m * (nk - 1) / nk, steps_of(active[i]), false));
      }
      break;
    }
    case CollectiveOp::ReduceScatter:
      for (std::uint32_t k : active) {
        const double n = group_sizes[k];
        passes.push_back(pass(k, m * (n - 1) / n, steps_of(k), true));
        m /= n;
      }
      break;
    case CollectiveOp::AllGather:
      m /= N;
      for (std::size_t i = active.size(); i-- > 0;) {
        const double n = group_sizes[active[i]];
        passes.push_back(pass(active[i], m * (n - 1), steps_of(active[i]), false));
        m *= n;
      }
      break;
    case CollectiveOp::AllToAll:
      for (std::uint32_t k : active) {
        const double n = group_sizes[k];
        passes.push_back(pass(k, m * (n - 1) / n, steps_of(k), false));
      }
      break;
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce:
      for (std::uint32_t k : active)
        passes.push_back(
            pass(k, m, pass_steps(DimensionType::Ring, group_sizes[k]), op == CollectiveOp::Reduce));
      break;
  }
  // Flow shop: chunk c's pass p starts when its pass p-1 is done and the pass's dimension is
  // free; a free dimension takes the pass that became ready first (ties: the earlier chunk).
  const std::size_t P = passes.size(), K = dims.size();
  const std::uint32_t chunk_count = static_cast<std::uint32_t>(C);
  std::vector<double> ready(chunk_count, 0.0), latency(chunk_count, 0.0), dim_free(K, 0.0);
  std::vector<std::size_t> next(chunk_count, 0);
  for (std::size_t done = 0; done < P * chunk_count; ++done) {
    // The (chunk, pass) that can start earliest; ties: ready first, then lower chunk.
    double best_start = 0, best_ready = 0;
    std::uint32_t best = chunk_count;
    for (std::uint32_t c = 0; c < chunk_count; ++c) {
      if (next[c] == P) continue;
      const double start = std::max(ready[c], dim_free[passes[next[c]].dim]);
      if (best == chunk_count || start < best_start || (start == best_start && ready[c] < best_ready)) {
        best = c;
        best_start = start;
        best_ready = ready[c];
      }
    }
    const ChunkPass& p = passes[next[best]];
    ready[best] = best_start + p.time_s;
    latency[best] += p.latency_s;
    dim_free[p.dim] = ready[best];
    ++next[best];
  }
  for (std::uint32_t c = 0; c < chunk_count; ++c)
    if (ready[c] >= out.time_s) {
      out.time_s = ready[c];
      out.latency_s = latency[c];
    }
  return out;
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
    out.why_not = "hierarchical: the dimensions hold " + std::to_string(product) +
                  " NPUs but the network has " + std::to_string(net.compute_count());
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
                  " members are not a sub-grid of the dimensions (their coordinates span " +
                  std::to_string(grid) + " positions)";
    out.where = "collective members";
    shape.clear();
  }
  return out;
}

std::vector<std::uint32_t> hierarchical_group_shape(const Network& net,
                                                    const std::vector<VertexId>& members) {
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
