#include "toposweep/collective/routing.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <set>
#include <string>
#include <tuple>

#include "toposweep/util/error.hpp"

namespace toposweep {

namespace {
constexpr std::uint32_t kUnreached = std::numeric_limits<std::uint32_t>::max();
}

std::optional<ArcId> direct_arc(const Network& net, VertexId src, VertexId dst) {
  const auto out = net.out_arcs(src);
  // Out-arcs of a vertex are sorted by destination (NetworkBuilder sorts by (src, dst)).
  auto it =
      std::lower_bound(out.begin(), out.end(), dst, [&](ArcId a, VertexId d) { return net.arc(a).dst < d; });
  std::optional<ArcId> best;
  for (; it != out.end() && net.arc(*it).dst == dst; ++it)
    if (!best || net.arc(*it).bandwidth_Bps > net.arc(*best).bandwidth_Bps) best = *it;
  return best;
}

std::span<const ArcId> parallel_arcs(const Network& net, VertexId src, VertexId dst) {
  const auto out = net.out_arcs(src);
  auto by_dst = [&](ArcId a, VertexId d) { return net.arc(a).dst < d; };
  const auto first = std::lower_bound(out.begin(), out.end(), dst, by_dst);
  auto last = first;
  while (last != out.end() && net.arc(*last).dst == dst) ++last;
  return out.subspan(static_cast<std::size_t>(first - out.begin()), static_cast<std::size_t>(last - first));
}

double path_latency(const Network& net, std::span<const ArcId> path) {
  double s = 0;
  for (ArcId a : path) s += net.arc(a).latency_s;
  return s;
}

PathSums path_sums(const Network& net, std::span<const ArcId> path) {
  PathSums s;
  s.hops = static_cast<std::uint32_t>(path.size());
  for (ArcId a : path) {
    s.latency_s += net.arc(a).latency_s;
    s.narrowest_Bps = std::min(s.narrowest_Bps, net.arc(a).bandwidth_Bps);
  }
  return s;
}

RouteCache::RouteCache(const Network& net, std::shared_ptr<HopDistances> distances)
    : net_(&net), dist_to_(distances ? std::move(distances) : std::make_shared<HopDistances>()) {
  const TopologyInfo& info = net.info();
  if (info.routing == "valiant" && info.dragonfly_routers > 0 && info.dragonfly_terminals > 0 &&
      net.switch_count() / info.dragonfly_routers >= 3) {
    valiant_groups_ = net.switch_count() / info.dragonfly_routers;
    group_routers_ = info.dragonfly_routers;
    group_servers_ = info.dragonfly_routers * info.dragonfly_terminals;
  }
}

std::uint32_t RouteCache::group_of(VertexId v) const {
  return net_->is_switch(v) ? (v - net_->compute_count()) / group_routers_ : v / group_servers_;
}

std::uint32_t RouteCache::intermediate_groups(VertexId src, VertexId dst) const {
  return valiant_groups_ != 0 && group_of(src) != group_of(dst) ? valiant_groups_ - 2 : 0;
}

std::uint32_t RouteCache::intermediate_group(VertexId src, VertexId dst, std::uint32_t t) const {
  const std::uint32_t i = group_of(src), j = group_of(dst), lo = std::min(i, j), hi = std::max(i, j);
  std::uint32_t k = t;
  if (k >= lo) ++k;
  if (k >= hi) ++k;
  return k;
}

namespace {
// Breadth-first search backwards from the vertices in `queue` (their dist already 0): every
// vertex's hop count to the nearest of them.
void hops_back_from(const Network& net, std::vector<VertexId>& queue, std::vector<std::uint32_t>& dist) {
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const VertexId u = queue[head];
    for (ArcId a : net.in_arcs(u)) {
      const VertexId v = net.arc(a).src;
      if (dist[v] == kUnreached) {
        dist[v] = dist[u] + 1;
        queue.push_back(v);
      }
    }
  }
}
}  // namespace

const std::vector<std::uint32_t>& RouteCache::distances_to_group(std::uint32_t k) {
  const Network& net = *net_;
  if (group_dist_.size() != valiant_groups_) group_dist_.resize(valiant_groups_);
  std::vector<std::uint32_t>& dist = group_dist_.at(k);
  if (!dist.empty()) return dist;
  // One breadth-first search backwards from all the routers of group k at once.
  dist.assign(net.vertex_count(), kUnreached);
  std::vector<VertexId> queue;
  for (std::uint32_t r = 0; r < group_routers_; ++r) {
    const VertexId v = net.compute_count() + k * group_routers_ + r;
    dist[v] = 0;
    queue.push_back(v);
  }
  hops_back_from(net, queue, dist);
  return dist;
}

void RouteCache::ensure_scratch() {
  // Allocated on the first search only: closed-form plans never route and stay allocation-free.
  if (!fwd_stamp_.empty()) return;
  const std::uint32_t V = net_->vertex_count();
  fwd_stamp_.assign(V, 0);
  bwd_stamp_.assign(V, 0);
  fwd_parent_.assign(V, 0);
  bwd_parent_.assign(V, 0);
  fwd_depth_.assign(V, 0);
  bwd_depth_.assign(V, 0);
}

std::optional<std::vector<ArcId>> RouteCache::shortest_path(VertexId src, VertexId dst) {
  const Network& net = *net_;
  if (src == dst) return std::vector<ArcId>{};
  if (auto a = direct_arc(net, src, dst)) return std::vector<ArcId>{*a};
  ArcId meet_arc = 0;
  const std::uint32_t best_len = bidirectional_search(src, dst, meet_arc);
  if (best_len == kUnreached) return std::nullopt;
  std::vector<ArcId> path;
  path.reserve(best_len);
  for (VertexId v = net.arc(meet_arc).src; v != src; v = net.arc(fwd_parent_[v]).src)
    path.push_back(fwd_parent_[v]);
  std::reverse(path.begin(), path.end());
  path.push_back(meet_arc);
  for (VertexId v = net.arc(meet_arc).dst; v != dst; v = net.arc(bwd_parent_[v]).dst)
    path.push_back(bwd_parent_[v]);
  return path;
}

bool RouteCache::rotation_symmetric() {
  if (rotation_symmetric_) return *rotation_symmetric_;
  const Network& net = *net_;
  const std::uint32_t n = net.compute_count();
  bool symmetric = n >= 2 && net.switch_count() == 0;
  for (ArcId a = 0; symmetric && a < net.arc_count(); ++a) {
    const Arc& x = net.arc(a);
    const auto image = parallel_arcs(net, (x.src + 1) % n, (x.dst + 1) % n);
    // Parallel arcs are merged by the builders; compare the lists arc by arc.
    const auto here = parallel_arcs(net, x.src, x.dst);
    symmetric = image.size() == here.size();
    for (std::size_t i = 0; symmetric && i < here.size(); ++i)
      symmetric = net.arc(image[i]).bandwidth_Bps == net.arc(here[i]).bandwidth_Bps &&
                  net.arc(image[i]).latency_s == net.arc(here[i]).latency_s;
  }
  rotation_symmetric_ = symmetric;
  return symmetric;
}

std::optional<PathSums> RouteCache::path_sums(VertexId src, VertexId dst) {
  if (!tree_) tree_ = TreePaths::of(*net_);
  if (*tree_ && !net_->is_switch(src) && !net_->is_switch(dst)) return (*tree_)->sums(src, dst);
  if (!uniform_arcs_) {
    bool uniform = true;
    for (ArcId a = 1; uniform && a < net_->arc_count(); ++a)
      uniform = net_->arc(a).bandwidth_Bps == net_->arc(0).bandwidth_Bps &&
                net_->arc(a).latency_s == net_->arc(0).latency_s;
    uniform_arcs_ = uniform;
  }
  if (*uniform_arcs_ && net_->arc_count() > 0 && rotation_symmetric()) {
    // Every shortest path has the hop count's sums: the same latency added once per hop, one
    // bandwidth (the additions and minima path_sums(net, path) makes, in its order).
    const std::uint32_t n = net_->compute_count();
    const std::uint32_t hops = distances_to(0)[(src + n - dst) % n];
    if (hops == kUnreached) return std::nullopt;
    PathSums s;
    s.hops = hops;
    for (std::uint32_t i = 0; i < hops; ++i) {
      s.latency_s += net_->arc(0).latency_s;
      s.narrowest_Bps = std::min(s.narrowest_Bps, net_->arc(0).bandwidth_Bps);
    }
    return s;
  }
  const auto path = shortest_path(src, dst);
  if (!path) return std::nullopt;
  return toposweep::path_sums(*net_, *path);
}

std::uint32_t RouteCache::bidirectional_search(VertexId src, VertexId dst, ArcId& meet_arc) {
  const Network& net = *net_;
  ensure_scratch();
  ++epoch_;
  if (epoch_ == 0) {  // wrapped: stale stamps could alias, so clear once every 2^32 queries
    std::fill(fwd_stamp_.begin(), fwd_stamp_.end(), 0);
    std::fill(bwd_stamp_.begin(), bwd_stamp_.end(), 0);
    epoch_ = 1;
  }
  fwd_stamp_[src] = epoch_;
  fwd_depth_[src] = 0;
  bwd_stamp_[dst] = epoch_;
  bwd_depth_[dst] = 0;
  frontier_a_.assign(1, src);  // forward frontier
  frontier_b_.assign(1, dst);  // backward frontier
  std::uint32_t best_len = kUnreached;
  meet_arc = 0;
  while (!frontier_a_.empty() && !frontier_b_.empty() && best_len == kUnreached) {
    // Expand the cheaper side one whole level; the first level that makes contact holds a
    // shortest path, found as the minimum over all contacts of that level.
    std::size_t fwd_work = 0, bwd_work = 0;
    for (VertexId v : frontier_a_) fwd_work += net.out_arcs(v).size();
    for (VertexId v : frontier_b_) bwd_work += net.in_arcs(v).size();
    next_.clear();
    if (fwd_work <= bwd_work) {
      for (VertexId u : frontier_a_) {
        for (ArcId a : net.out_arcs(u)) {
          const VertexId v = net.arc(a).dst;
          if (bwd_stamp_[v] == epoch_) {
            const std::uint32_t len = fwd_depth_[u] + 1 + bwd_depth_[v];
            if (len < best_len) best_len = len, meet_arc = a;
          }
          if (fwd_stamp_[v] != epoch_) {
            fwd_stamp_[v] = epoch_;
            fwd_parent_[v] = a;
            fwd_depth_[v] = fwd_depth_[u] + 1;
            next_.push_back(v);
          }
        }
      }
      frontier_a_.swap(next_);
    } else {
      for (VertexId u : frontier_b_) {
        for (ArcId a : net.in_arcs(u)) {
          const VertexId v = net.arc(a).src;
          if (fwd_stamp_[v] == epoch_) {
            const std::uint32_t len = fwd_depth_[v] + 1 + bwd_depth_[u];
            if (len < best_len) best_len = len, meet_arc = a;
          }
          if (bwd_stamp_[v] != epoch_) {
            bwd_stamp_[v] = epoch_;
            bwd_parent_[v] = a;
            bwd_depth_[v] = bwd_depth_[u] + 1;
            next_.push_back(v);
          }
        }
      }
      frontier_b_.swap(next_);
    }
  }
  return best_len;
}

std::optional<std::vector<ArcId>> RouteCache::spread_path(VertexId src, VertexId dst,
                                                          std::span<const double> arc_busy_s) {
  const Network& net = *net_;
  if (src == dst) return std::vector<ArcId>{};
  // An out-arc of a vertex i hops down a shortest path stays on one exactly when its head is
  // L - i - 1 hops from dst (it is then i + 1 hops from src, no fewer).
  const std::vector<std::uint32_t>& dist = distances_to(dst);
  const std::uint32_t L = dist[src];
  if (L == kUnreached) return std::nullopt;
  // Walk from src, at each vertex taking the next hop whose arc is least busy so far; ties go
  // to the first candidate from a (src, dst)-hashed offset, so idle fabrics still spread.
  std::uint64_t h = (static_cast<std::uint64_t>(src) << 32) ^ dst;
  h ^= h >> 33, h *= 0xff51afd7ed558ccdULL, h ^= h >> 33, h *= 0xc4ceb9fe1a85ec53ULL, h ^= h >> 33;
  std::vector<ArcId> path;
  path.reserve(L);
  std::vector<ArcId>& candidates = candidates_;
  VertexId u = src;
  for (std::uint32_t i = 0; i < L; ++i) {
    candidates.clear();
    for (ArcId a : net.out_arcs(u))
      if (dist[net.arc(a).dst] == L - i - 1) candidates.push_back(a);
    const std::size_t start = static_cast<std::size_t>(h % candidates.size());
    h = h / candidates.size() + (h % candidates.size()) * 0x9e3779b97f4a7c15ULL;
    ArcId best = candidates[start];
    for (std::size_t k = 1; k < candidates.size(); ++k) {
      const ArcId a = candidates[(start + k) % candidates.size()];
      if (arc_busy_s[a] < arc_busy_s[best]) best = a;
    }
    path.push_back(best);
    u = net.arc(best).dst;
  }
  return path;
}

void RouteCache::split_walk(VertexId src, const std::vector<std::uint32_t>& dist, double share,
                            double latency) {
  const Network& net = *net_;
  const std::uint32_t L = dist[src];
  if (split_stamp_.size() != net.vertex_count()) {
    split_stamp_.assign(net.vertex_count(), 0);
    split_share_.assign(net.vertex_count(), 0.0);
    split_latency_.assign(net.vertex_count(), 0.0);
    split_epoch_ = 0;
  }
  if (++split_epoch_ == 0) {  // wrapped: clear the stamps once every 2^32 transfers
    std::fill(split_stamp_.begin(), split_stamp_.end(), 0);
    split_epoch_ = 1;
  }
  // One level of the shortest-path DAG at a time: every vertex i hops from src passes its share
  // on, split evenly over its arcs towards the vertices L - i - 1 hops from the target.
  std::vector<VertexId>& level = frontier_a_;
  std::vector<VertexId>& next = next_;
  level.assign(1, src);
  split_stamp_[src] = split_epoch_;
  split_share_[src] = share;
  split_latency_[src] = latency;
  for (std::uint32_t i = 0; i < L; ++i) {
    next.clear();
    for (VertexId u : level) {
      std::uint32_t hops = 0;
      for (ArcId a : net.out_arcs(u))
        if (dist[net.arc(a).dst] == L - i - 1) ++hops;
      const double part = split_share_[u] / hops;
      for (ArcId a : net.out_arcs(u)) {
        const Arc& arc = net.arc(a);
        if (dist[arc.dst] != L - i - 1) continue;
        split_arcs_.emplace_back(a, part);
        if (split_stamp_[arc.dst] != split_epoch_) {
          split_stamp_[arc.dst] = split_epoch_;
          split_share_[arc.dst] = 0.0;
          split_latency_[arc.dst] = 0.0;
          next.push_back(arc.dst);
        }
        split_share_[arc.dst] += part;
        split_latency_[arc.dst] = std::max(split_latency_[arc.dst], split_latency_[u] + arc.latency_s);
      }
    }
    level.swap(next);
  }
}

std::optional<double> RouteCache::ecmp_split(VertexId src, VertexId dst, double bytes,
                                             std::span<double> arc_bytes, std::vector<ArcId>& touched) {
  if (src == dst) return 0.0;
  const auto apply = [&](const std::vector<std::pair<ArcId, double>>& shares) {
    for (const auto& [a, share] : shares) {
      if (arc_bytes[a] == 0) touched.push_back(a);
      arc_bytes[a] += bytes * share;
    }
  };
  const std::uint64_t key = (static_cast<std::uint64_t>(src) << 32) | dst;
  if (const auto it = split_memo_.find(key); it != split_memo_.end()) {
    apply(it->second.arcs);
    return it->second.latency;
  }
  const std::vector<std::uint32_t>& dist = distances_to(dst);
  if (dist[src] == kUnreached) return std::nullopt;
  split_arcs_.clear();
  double latency = 0;
  const std::uint32_t K = intermediate_groups(src, dst);
  if (K == 0) {
    split_walk(src, dist, 1.0, 0.0);
    latency = split_latency_[dst];
  }
  // Valiant: 1/K of the transfer to each intermediate group, then on from each router where its
  // share entered that group.
  std::vector<std::tuple<VertexId, double, double>> entries;
  for (std::uint32_t t = 0; t < K; ++t) {
    const std::vector<std::uint32_t>& to_k = distances_to_group(intermediate_group(src, dst, t));
    if (to_k[src] == kUnreached) return std::nullopt;
    split_walk(src, to_k, 1.0 / K, 0.0);
    entries.clear();
    for (VertexId e : frontier_a_) entries.emplace_back(e, split_share_[e], split_latency_[e]);
    for (const auto& [e, share, arrival] : entries) {
      if (dist[e] == kUnreached) return std::nullopt;
      split_walk(e, dist, share, arrival);
      latency = std::max(latency, split_latency_[dst]);
    }
  }
  apply(split_arcs_);
  if (split_memo_arcs_ + split_arcs_.size() <= kMaxSplitMemoArcs) {
    split_memo_arcs_ += split_arcs_.size();
    split_memo_.emplace(key, EcmpShares{split_arcs_, latency});
  }
  return latency;
}

const RouteCache::Leg1* RouteCache::leg1(VertexId src, std::uint32_t k, Leg1& scratch) {
  const std::uint64_t key = (static_cast<std::uint64_t>(src) << 32) | k;
  if (const auto it = leg1_memo_.find(key); it != leg1_memo_.end()) return &it->second;
  const std::vector<std::uint32_t>& to_k = distances_to_group(k);
  if (to_k[src] == kUnreached) return nullptr;
  split_arcs_.clear();
  split_walk(src, to_k, 1.0, 0.0);
  scratch.arcs = split_arcs_;
  scratch.entries.clear();
  for (VertexId e : frontier_a_) scratch.entries.emplace_back(e, split_share_[e], split_latency_[e]);
  if (leg_memo_arcs_ + scratch.arcs.size() > kMaxSplitMemoArcs) return &scratch;
  leg_memo_arcs_ += scratch.arcs.size() + scratch.entries.size();
  return &leg1_memo_.emplace(key, scratch).first->second;
}

const RouteCache::EcmpShares* RouteCache::leg2(VertexId entry, VertexId dst,
                                               const std::vector<std::uint32_t>& dist, EcmpShares& scratch) {
  const std::uint64_t key = (static_cast<std::uint64_t>(entry) << 32) | dst;
  if (const auto it = leg2_memo_.find(key); it != leg2_memo_.end()) return &it->second;
  if (dist[entry] == kUnreached) return nullptr;
  split_arcs_.clear();
  split_walk(entry, dist, 1.0, 0.0);
  scratch.arcs = split_arcs_;
  scratch.latency = split_latency_[dst];
  if (leg_memo_arcs_ + scratch.arcs.size() > kMaxSplitMemoArcs) return &scratch;
  leg_memo_arcs_ += scratch.arcs.size();
  return &leg2_memo_.emplace(key, scratch).first->second;
}

RouteCache::ValiantSplit RouteCache::valiant_split(std::span<const PairBytes> transfers,
                                                   std::span<double> arc_bytes, std::vector<ArcId>& touched) {
  ValiantSplit out;
  if (transfers.empty()) return out;
  const std::uint32_t G = valiant_groups_;
  const double K = static_cast<double>(G) - 2;
  const std::size_t n = transfers.size();
  // The loads go into a staging array first, so that an unreachable transfer adds nothing.
  std::vector<std::pair<ArcId, double>> loads;
  // The distinct sources in first-appearance order.
  std::vector<std::uint32_t> source_index(net_->compute_count(), kUnreached);
  std::vector<VertexId> sources;
  for (const PairBytes& t : transfers)
    if (source_index[t.src] == kUnreached) {
      source_index[t.src] = static_cast<std::uint32_t>(sources.size());
      sources.push_back(t.src);
    }
  // Each source's leg-1 entries, flat: those towards group k at offsets [off(s, k), off(s, k + 1)).
  std::vector<std::size_t> offsets(sources.size() * (G + 1), 0);
  std::vector<VertexId> entry_router;
  std::vector<double> entry_share, entry_arrival;
  Leg1 scratch;
  // Per source, the bytes it sends to each group: leg 1 towards k carries 1/K of every transfer
  // whose groups are not k.
  std::vector<double> to_group(G, 0.0);
  std::vector<std::uint32_t> sent_to;  // the groups a source sends to, in increasing order
  std::vector<std::vector<std::size_t>> by_source(sources.size());
  for (std::size_t i = 0; i < n; ++i) by_source[source_index[transfers[i].src]].push_back(i);
  for (std::size_t si = 0; si < sources.size(); ++si) {
    const VertexId s = sources[si];
    const std::uint32_t gi = group_of(s);
    sent_to.clear();
    for (std::size_t i : by_source[si]) {
      const std::uint32_t j = group_of(transfers[i].dst);
      if (to_group[j] == 0) sent_to.push_back(j);
      to_group[j] += transfers[i].bytes;
    }
    std::sort(sent_to.begin(), sent_to.end());
    std::size_t* off = &offsets[si * (G + 1)];
    for (std::uint32_t k = 0; k < G; ++k) {
      off[k] = entry_router.size();
      if (k == gi) continue;
      double bytes = 0;
      for (std::uint32_t j : sent_to)
        if (j != k) bytes += to_group[j];
      if (bytes == 0) continue;
      const Leg1* leg = leg1(s, k, scratch);
      if (!leg) {
        for (std::size_t i : by_source[si])
          if (group_of(transfers[i].dst) != k) {
            out.unreachable = i;
            return out;
          }
        continue;
      }
      for (const auto& [a, share] : leg->arcs) loads.emplace_back(a, bytes / K * share);
      for (const auto& [e, share, arrival] : leg->entries) {
        entry_router.push_back(e);
        entry_share.push_back(share);
        entry_arrival.push_back(arrival);
      }
    }
    off[G] = entry_router.size();
    for (std::uint32_t j : sent_to) to_group[j] = 0;
  }
  // Leg 2, one destination at a time: the shares entering each router of every intermediate
  // group (and each transfer's slowest leg pair: the entry's arrival plus the walk's latency from
  // there), then one walk from each of those routers.
  std::vector<std::vector<std::size_t>> by_dest;
  std::vector<std::uint32_t> dest_index(net_->compute_count(), kUnreached);
  std::vector<VertexId> dests;
  for (std::size_t i = 0; i < n; ++i) {
    const VertexId d = transfers[i].dst;
    if (dest_index[d] == kUnreached) {
      dest_index[d] = static_cast<std::uint32_t>(dests.size());
      dests.push_back(d);
      by_dest.emplace_back();
    }
    by_dest[dest_index[d]].push_back(i);
  }
  const std::uint32_t V = net_->vertex_count();
  std::vector<double> entering(V, 0.0), leg2_latency(V, 0.0);
  std::vector<const EcmpShares*> leg2_of(V, nullptr);
  std::vector<std::uint32_t> seen(V, kUnreached);  // the destination index an entry was last seen for
  std::vector<VertexId> entries;
  std::deque<EcmpShares> unkept;  // leg-2 walks past the memo's budget, kept for this call
  EcmpShares scratch2;
  for (std::size_t di = 0; di < dests.size(); ++di) {
    const VertexId d = dests[di];
    const std::uint32_t gj = group_of(d);
    const std::vector<std::uint32_t>& dist = distances_to(d);
    entries.clear();
    unkept.clear();
    for (std::size_t i : by_dest[di]) {
      const PairBytes& t = transfers[i];
      const std::size_t* off = &offsets[std::size_t{source_index[t.src]} * (G + 1)];
      // Every intermediate group but the destination's (the source's has no entries).
      for (const auto& [lo, hi] : {std::pair{off[0], off[gj]}, std::pair{off[gj + 1], off[G]}})
        for (std::size_t x = lo; x < hi; ++x) {
          const VertexId e = entry_router[x];
          if (seen[e] != di) {
            seen[e] = static_cast<std::uint32_t>(di);
            const EcmpShares* leg = leg2(e, d, dist, scratch2);
            if (!leg) {
              out.unreachable = i;
              return out;
            }
            if (leg == &scratch2) leg = &unkept.emplace_back(scratch2);
            leg2_of[e] = leg;
            leg2_latency[e] = leg->latency;
            entering[e] = 0;
            entries.push_back(e);
          }
          entering[e] += t.bytes * entry_share[x];
          out.latency = std::max(out.latency, entry_arrival[x] + leg2_latency[e]);
        }
    }
    for (VertexId e : entries)
      for (const auto& [a, share] : leg2_of[e]->arcs) loads.emplace_back(a, entering[e] / K * share);
  }
  for (const auto& [a, b] : loads) {
    if (arc_bytes[a] == 0) touched.push_back(a);
    arc_bytes[a] += b;
  }
  return out;
}

namespace {
std::uint64_t mix64(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

VertexId RouteCache::hashed_walk(VertexId u, const std::vector<std::uint32_t>& dist, std::uint64_t flow,
                                 std::vector<ArcId>& path) {
  const Network& net = *net_;
  for (std::uint32_t left = dist[u]; left > 0; --left) {
    candidates_.clear();
    for (ArcId a : net.out_arcs(u))
      if (dist[net.arc(a).dst] == left - 1) candidates_.push_back(a);
    const ArcId pick = candidates_[mix64(flow ^ (static_cast<std::uint64_t>(u) * 0xc2b2ae3d27d4eb4fULL)) %
                                   candidates_.size()];
    path.push_back(pick);
    u = net.arc(pick).dst;
  }
  return u;
}

std::optional<std::vector<ArcId>> RouteCache::hashed_path(VertexId src, VertexId dst) {
  if (src == dst) return std::vector<ArcId>{};
  const std::vector<std::uint32_t>& dist = distances_to(dst);
  const std::uint32_t L = dist[src];
  if (L == kUnreached) return std::nullopt;
  const std::uint64_t flow = mix64((static_cast<std::uint64_t>(src) << 32) | dst);
  std::vector<ArcId> path;
  path.reserve(L);
  VertexId u = src;
  if (const std::uint32_t K = intermediate_groups(src, dst); K > 0) {
    // Valiant: the flow's intermediate group from its own hash, reached first.
    const std::uint32_t k = intermediate_group(src, dst, static_cast<std::uint32_t>(mix64(~flow) % K));
    const std::vector<std::uint32_t>& to_k = distances_to_group(k);
    if (to_k[src] == kUnreached) return std::nullopt;
    u = hashed_walk(src, to_k, flow, path);
    if (dist[u] == kUnreached) return std::nullopt;
  }
  hashed_walk(u, dist, flow, path);
  return path;
}

const std::vector<std::uint32_t>& RouteCache::distances_to(VertexId dst) {
  const Network& net = *net_;
  HopDistances& all = *dist_to_;
  if (all.size() != net.vertex_count()) all.resize(net.vertex_count());
  std::vector<std::uint32_t>& dist = all[dst];
  if (!dist.empty()) return dist;
  if (dst != 0 && rotation_symmetric()) {
    // The rotation by dst maps 0 to dst and is an automorphism: d(v, dst) = d(v - dst, 0).
    const std::vector<std::uint32_t>& base = distances_to(0);
    const std::uint32_t n = net.compute_count();
    dist.resize(n);
    for (VertexId v = 0; v < n; ++v) dist[v] = base[(v + n - dst) % n];
    return dist;
  }
  // A compute node that only switches reach (every Clos family's servers): d(v, dst) = 1 +
  // min over its in-neighbours w of d(v, w), and its few in-neighbours are shared by every server
  // under them, so the searches run once per switch instead of once per server (a 2,048-server
  // rail fabric: 270 searches instead of 2,048, and a pass over the vertices per server).
  if (!net.is_switch(dst) && net.switch_count() > 0) {
    std::vector<VertexId> above;
    bool switches_only = !net.in_arcs(dst).empty();
    for (ArcId a : net.in_arcs(dst)) {
      const VertexId w = net.arc(a).src;
      switches_only = switches_only && net.is_switch(w);
      if (std::find(above.begin(), above.end(), w) == above.end()) above.push_back(w);
    }
    if (switches_only) {
      // Servers under the same switches share every distance but their own (a rail block's
      // servers: one pass for the block instead of one per server).
      std::sort(above.begin(), above.end());
      auto [it, fresh] = under_switches_.try_emplace(above);
      if (fresh) {
        std::vector<const std::vector<std::uint32_t>*> from;
        for (VertexId w : above) from.push_back(&distances_to(w));  // `all` is never resized again
        std::vector<std::uint32_t>& under = it->second;
        under.assign(net.vertex_count(), kUnreached);
        for (VertexId v = 0; v < net.vertex_count(); ++v) {
          std::uint32_t least = kUnreached;
          for (const auto* d : from) least = std::min(least, (*d)[v]);
          if (least != kUnreached) under[v] = least + 1;
        }
      }
      std::vector<std::uint32_t>& out = all[dst];
      out = it->second;
      out[dst] = 0;
      return out;
    }
  }
  dist.assign(net.vertex_count(), kUnreached);
  std::vector<VertexId> queue{dst};
  dist[dst] = 0;
  hops_back_from(net, queue, dist);
  return dist;
}

const std::vector<WeightedPath>& RouteCache::ecmp_paths(VertexId src, VertexId dst) {
  const auto key = std::make_pair(src, dst);
  auto it = ecmp_.find(key);
  if (it != ecmp_.end()) return it->second;
  const Network& net = *net_;
  const std::vector<std::uint32_t>& dist = distances_to(dst);
  if (dist[src] == kUnreached)
    throw BadInput("vertex " + std::to_string(dst) + " is unreachable from vertex " + std::to_string(src),
                   "routing");
  std::vector<WeightedPath> paths;
  if (src == dst) {
    paths.push_back(WeightedPath{{}, 1.0});
  } else {
    // Depth-first enumeration of the shortest-path DAG towards the target of `d` (dst, or a
    // Valiant intermediate group), calling at_end where it is reached (paths are at most the
    // diameter long, so recursion depth is small). At most `cap` paths from `first` on.
    std::vector<ArcId> path;
    std::size_t first = 0, cap = kMaxEcmpPaths;
    auto visit = [&](auto&& self, const std::vector<std::uint32_t>& d, VertexId v, double fraction,
                     auto&& at_end) -> void {
      if (paths.size() >= first + cap) return;
      if (d[v] == 0) {
        at_end(v, fraction);
        return;
      }
      std::uint32_t hops = 0;
      for (ArcId a : net.out_arcs(v))
        if (d[net.arc(a).dst] + 1 == d[v]) ++hops;
      for (ArcId a : net.out_arcs(v)) {
        if (d[net.arc(a).dst] + 1 != d[v]) continue;
        path.push_back(a);
        self(self, d, net.arc(a).dst, fraction / hops, at_end);
        path.pop_back();
      }
    };
    const auto keep = [&](VertexId, double fraction) { paths.push_back(WeightedPath{path, fraction}); };
    // Rescales the paths from `first` on so that their fractions sum to `want`.
    const auto rescale = [&](double want) {
      double total = 0;
      for (std::size_t i = first; i < paths.size(); ++i) total += paths[i].fraction;
      if (total < want)
        for (std::size_t i = first; i < paths.size(); ++i)
          paths[i].fraction = paths[i].fraction / total * want;
    };
    const std::uint32_t K = intermediate_groups(src, dst);
    if (K == 0) {
      visit(visit, dist, src, 1.0, keep);
      double total = 0;
      for (const auto& p : paths) total += p.fraction;
      if (total < 1.0)
        for (auto& p : paths) p.fraction /= total;
    }
    // Valiant: per intermediate group, its leg-1 paths each continued by the leg-2 paths from
    // the router where it entered the group.
    cap = std::max<std::size_t>(1, kMaxEcmpPaths / std::max<std::uint32_t>(K, 1));
    for (std::uint32_t t = 0; t < K; ++t) {
      const std::vector<std::uint32_t>& to_k = distances_to_group(intermediate_group(src, dst, t));
      if (to_k[src] == kUnreached)
        throw BadInput("group " + std::to_string(intermediate_group(src, dst, t)) +
                           " is unreachable from vertex " + std::to_string(src),
                       "routing");
      first = paths.size();
      visit(visit, to_k, src, 1.0 / K,
            [&](VertexId e, double fraction) { visit(visit, dist, e, fraction, keep); });
      rescale(1.0 / K);
    }
  }
  return ecmp_.emplace(key, std::move(paths)).first->second;
}

std::vector<Flow> RouteCache::ecmp_flows(VertexId src, VertexId dst, double bytes, std::uint32_t stage) {
  std::vector<Flow> flows;
  for (const WeightedPath& p : ecmp_paths(src, dst))
    if (!p.arcs.empty()) flows.push_back(Flow{p.arcs, bytes * p.fraction, stage});
  return flows;
}

namespace {

// BFS by hop count avoiding blocked arcs and vertices; deterministic (arc id order).
std::optional<std::vector<ArcId>> bfs_path(const Network& net, VertexId src, VertexId dst,
                                           const std::vector<char>& blocked_vertex,
                                           const std::set<ArcId>& blocked_arc) {
  std::vector<std::uint32_t> parent(net.vertex_count(), kUnreached);
  std::vector<char> seen(net.vertex_count(), 0);
  std::vector<VertexId> queue{src};
  seen[src] = 1;
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const VertexId u = queue[head];
    if (u == dst) break;
    for (ArcId a : net.out_arcs(u)) {
      const VertexId v = net.arc(a).dst;
      if (seen[v] || blocked_vertex[v] || blocked_arc.count(a)) continue;
      seen[v] = 1;
      parent[v] = a;
      queue.push_back(v);
    }
  }
  if (!seen[dst]) return std::nullopt;
  std::vector<ArcId> path;
  for (VertexId v = dst; v != src; v = net.arc(parent[v]).src) path.push_back(parent[v]);
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace

std::vector<std::vector<ArcId>> k_shortest_paths(const Network& net, VertexId src, VertexId dst,
                                                 std::uint32_t k) {
  std::vector<std::vector<ArcId>> found;
  if (src == dst || k == 0) return found;
  std::vector<char> no_vertex(net.vertex_count(), 0);
  auto first = bfs_path(net, src, dst, no_vertex, {});
  if (!first) return found;
  found.push_back(std::move(*first));
  // Candidates ordered by (length, arc sequence) so ties break deterministically.
  std::set<std::pair<std::size_t, std::vector<ArcId>>> candidates;
  while (found.size() < k) {
    const std::vector<ArcId>& last = found.back();
    for (std::size_t i = 0; i < last.size(); ++i) {
      const VertexId spur = net.arc(last[i]).src;
      const std::vector<ArcId> root(last.begin(), last.begin() + static_cast<std::ptrdiff_t>(i));
      std::set<ArcId> blocked_arc;
      for (const auto& p : found)
        if (p.size() > i && std::equal(root.begin(), root.end(), p.begin())) blocked_arc.insert(p[i]);
      std::vector<char> blocked_vertex(net.vertex_count(), 0);
      for (ArcId a : root) blocked_vertex[net.arc(a).src] = 1;
      auto spur_path = bfs_path(net, spur, dst, blocked_vertex, blocked_arc);
      if (!spur_path) continue;
      std::vector<ArcId> total = root;
      total.insert(total.end(), spur_path->begin(), spur_path->end());
      if (std::find(found.begin(), found.end(), total) == found.end())
        candidates.emplace(total.size(), std::move(total));
    }
    if (candidates.empty()) break;
    found.push_back(candidates.begin()->second);
    candidates.erase(candidates.begin());
  }
  return found;
}

}  // namespace toposweep
