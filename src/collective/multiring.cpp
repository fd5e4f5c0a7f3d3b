#include "toposweep/collective/multiring.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <string>

#include "toposweep/collective/schedule.hpp"
#include "toposweep/util/error.hpp"

namespace toposweep {

std::vector<std::vector<VertexId>> serving_stride_rings(const Network& net,
                                                        const std::vector<VertexId>& members,
                                                        std::vector<std::uint32_t>* strides_out) {
  std::vector<std::vector<VertexId>> rings;
  const std::uint32_t n = net.compute_count();
  if (members.size() < 2 || n == 0) return rings;
  const std::set<VertexId> member_set(members.begin(), members.end());
  std::set<std::uint32_t> links;  // min(s, n - s): a stride and its inverse are the same links
  for (std::uint32_t s : net.info().strides) {
    s %= n;
    if (s == 0) continue;
    const std::uint32_t link = std::min(s, n - s);
    if (!links.insert(link).second) continue;
    std::vector<VertexId> ring;
    ring.reserve(members.size());
    VertexId x = members[0];
    bool ok = true;
    do {
      if (!member_set.count(x) || ring.size() >= members.size()) {
        ok = false;
        break;
      }
      ring.push_back(x);
      const VertexId next = static_cast<VertexId>((static_cast<std::uint64_t>(x) + s) % n);
      if (!direct_arc(net, x, next) || !direct_arc(net, next, x)) {
        ok = false;
        break;
      }
      x = next;
    } while (x != members[0]);
    if (!ok || ring.size() != members.size()) continue;
    if (strides_out) strides_out->push_back(link);
    std::vector<VertexId> reverse(ring.rbegin(), ring.rend());
    rings.push_back(std::move(ring));
    rings.push_back(std::move(reverse));
  }
  return rings;
}

std::vector<std::vector<VertexId>> stride_walk_orders(const Network& net,
                                                      const std::vector<VertexId>& members,
                                                      std::vector<std::uint32_t>* strides_out) {
  std::vector<std::vector<VertexId>> orders;
  const std::uint32_t n = net.compute_count();
  if (members.size() < 2 || n == 0) return orders;
  std::set<std::uint32_t> links;
  std::vector<std::uint32_t> position(n);
  for (std::uint32_t s : net.info().strides) {
    s %= n;
    if (s == 0) continue;
    if (!links.insert(std::min(s, n - s)).second) continue;
    // Walk x -> x + s from members[0]; when gcd(s, n) > 1 the walk covers one coset, so the
    // next cosets follow in order of their offset from members[0].
    std::vector<char> seen(n, 0);
    std::uint32_t next_position = 0;
    for (std::uint32_t offset = 0; offset < n; ++offset) {
      VertexId x = static_cast<VertexId>((static_cast<std::uint64_t>(members[0]) + offset) % n);
      if (seen[x]) continue;
      while (!seen[x]) {
        seen[x] = 1;
        position[x] = next_position++;
        x = static_cast<VertexId>((static_cast<std::uint64_t>(x) + s) % n);
      }
    }
    std::vector<VertexId> order = members;
    std::sort(order.begin(), order.end(), [&](VertexId a, VertexId b) { return position[a] < position[b]; });
    if (strides_out) strides_out->push_back(std::min(s, n - s));
    orders.push_back(std::move(order));
  }
  return orders;
}

namespace {

// Bandwidth and latency time of one ring step (one byte split over the rings by `shares`),
// transfers routed and loads summed per arc by phase_cost, so rings that share links pay for it.
PhaseCost ring_step_cost(RouteCache& routes, const std::vector<std::vector<VertexId>>& rings,
                         const std::vector<double>& shares) {
  Phase step;
  step.routing = Routing::Spread;
  for (std::size_t r = 0; r < rings.size(); ++r)
    for (std::size_t i = 0; i < rings[r].size(); ++i)
      step.transfers.push_back({rings[r][i], rings[r][(i + 1) % rings[r].size()], shares[r]});
  return phase_cost(routes, step);
}

bool cheaper(const PhaseCost& a, const PhaseCost& b) {
  const double tol = 1e-9 * std::max(a.bandwidth_s, b.bandwidth_s);
  if (a.bandwidth_s < b.bandwidth_s - tol) return true;
  if (a.bandwidth_s > b.bandwidth_s + tol) return false;
  return a.latency_s < b.latency_s;
}

// No stride cycles through exactly the members (a job's sub-group): candidate ring sets, each
// routed over the network's own links, and the cheapest one wins. Candidates: the members'
// order as given, one way and both ways (so never slower than the plain ring), each stride's
// walk order both ways (consecutive members then sit a stride apart where possible), and the
// walk orders of the first 2, 3, ... strides together (a long stride's walk can pile its
// wrap-arounds onto a few arcs, so using every stride is not always best).
MultiRing subgroup_multiring(const Network& net, RouteCache& routes, const std::vector<VertexId>& members) {
  auto both_ways = [](const std::vector<VertexId>& order) {
    return std::vector<std::vector<VertexId>>{order, std::vector<VertexId>(order.rbegin(), order.rend())};
  };
  std::vector<std::uint32_t> strides;
  const auto walks = stride_walk_orders(net, members, &strides);
  std::vector<std::pair<std::vector<std::vector<VertexId>>, std::vector<std::uint32_t>>> candidates;
  candidates.push_back({{members}, {}});
  candidates.push_back({both_ways(members), {}});
  std::vector<std::vector<VertexId>> prefix;
  for (std::size_t i = 0; i < walks.size(); ++i) {
    candidates.push_back({both_ways(walks[i]), {strides[i]}});
    for (auto& ring : both_ways(walks[i])) prefix.push_back(std::move(ring));
    if (i > 0)
      candidates.push_back({prefix, std::vector<std::uint32_t>(strides.begin(), strides.begin() + i + 1)});
  }
  MultiRing best;
  best.routed = true;
  PhaseCost best_cost;
  for (auto& [rings, used] : candidates) {
    const std::vector<double> shares(rings.size(), 1.0 / static_cast<double>(rings.size()));
    const PhaseCost cost = ring_step_cost(routes, rings, shares);
    if (best.rings.empty() || cheaper(cost, best_cost)) {
      best.rings = rings;
      best.shares = shares;
      best.strides = used;
      best_cost = cost;
    }
  }
  return best;
}

}  // namespace

MultiRing multiring(const Network& net, RouteCache& routes, const std::vector<VertexId>& members) {
  if (net.info().strides.empty())
    throw BadInput("multiring needs a network with ring strides (topology.kind = topoopt)",
                   "collective.algorithm");
  MultiRing mr;
  mr.rings = serving_stride_rings(net, members, &mr.strides);
  if (mr.rings.empty()) return subgroup_multiring(net, routes, members);
  double total = 0;
  for (const auto& ring : mr.rings) {
    double bottleneck = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < ring.size(); ++i)
      bottleneck =
          std::min(bottleneck, net.arc(*direct_arc(net, ring[i], ring[(i + 1) % ring.size()])).bandwidth_Bps);
    mr.shares.push_back(bottleneck);
    total += bottleneck;
  }
  for (double& s : mr.shares) s /= total;
  return mr;
}

}  // namespace toposweep
