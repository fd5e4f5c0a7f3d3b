#include "toposweep/collective/multiring.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <string>

#include "toposweep/util/error.hpp"
#include "toposweep/util/strings.hpp"

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

MultiRing multiring(const Network& net, RouteCache& routes, const std::vector<VertexId>& members) {
  (void)routes;
  if (net.info().kind != "topoopt" || net.info().strides.empty())
    throw BadInput("multiring needs a topoopt network with ring strides (topology.kind = topoopt)",
                   "collective.algorithm");
  MultiRing mr;
  mr.rings = serving_stride_rings(net, members, &mr.strides);
  if (mr.rings.empty()) {
    std::vector<std::string> s;
    for (auto x : net.info().strides) s.push_back(std::to_string(x));
    throw BadInput("none of the ring strides {" + join(s, ",") + "} forms a ring over the " +
                       std::to_string(members.size()) + " members",
                   "topology.strides");
  }
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
