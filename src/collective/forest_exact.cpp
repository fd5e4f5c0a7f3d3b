// Exact forest packing (see forest.hpp): integer capacities from the optimum, relays removed by
// splitting off, Edmonds' branching theorem on the receivers (branching.hpp), trees mapped back to
// paths of the original network.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "toposweep/collective/branching.hpp"
#include "toposweep/collective/forest.hpp"
#include "toposweep/collective/maxflow.hpp"

namespace toposweep {

namespace {

// Capacities in trees: arc e may carry c_e of the D trees, each tree carrying unit / k of its
// root's data. Whole numbers when the bandwidths are (B/s as integers): with g their gcd and the
// optimum x* = B / w, c_e = k b_e / x* = (b_e / g)(w / d) and k = (B / g) / d, d = gcd(B / g, w),
// so the critical cut is filled exactly. Otherwise c_e = b_e / x* and k = 1 with real
// multiplicities.
struct Scaled {
  std::uint64_t k = 1;
  bool integral = false;
  std::vector<double> cap;     // per original arc
  std::vector<double> demand;  // per vertex: k w_u
  double total = 0;            // D
};

constexpr double kRealSlack = 1e-10;

Scaled scale(const ArcGraph& g, const std::vector<std::uint32_t>& weight, const ForestOptimum& opt) {
  Scaled s;
  constexpr double kExact = 9007199254740992.0;  // 2^53: integers exact in a double
  auto whole = [&](double b) { return b >= 1 && b < kExact && b == std::floor(b); };
  bool integral = whole(opt.bandwidth_Bps);
  std::uint64_t gcd = 0;
  for (const Arc& a : g.arcs) {
    if (a.src == a.dst || a.bandwidth_Bps <= 0) continue;
    if (!whole(a.bandwidth_Bps)) integral = false;
    if (integral) gcd = std::gcd(gcd, static_cast<std::uint64_t>(a.bandwidth_Bps));
  }
  std::uint64_t W = 0;
  for (std::uint32_t w : weight) W += w;
  s.cap.assign(g.arcs.size(), 0);
  s.demand.assign(g.vertex_count, 0);
  if (integral && gcd > 0) {
    const auto M = static_cast<std::uint64_t>(opt.bandwidth_Bps) / gcd;
    const std::uint64_t d = std::gcd(M, opt.weight);
    const std::uint64_t k = M / d, per_gcd = opt.weight / d;
    // Keep every count (and every max-flow value) an exact double.
    double biggest = static_cast<double>(k) * static_cast<double>(W);
    for (const Arc& a : g.arcs)
      if (a.src != a.dst && a.bandwidth_Bps > 0)
        biggest =
            std::max(biggest, a.bandwidth_Bps / static_cast<double>(gcd) * static_cast<double>(per_gcd));
    if (biggest * static_cast<double>(g.arcs.size() + 1) < kExact / 1024) {
      s.k = k;
      s.integral = true;
      for (ArcId e = 0; e < g.arcs.size(); ++e) {
        const Arc& a = g.arcs[e];
        if (a.src != a.dst && a.bandwidth_Bps > 0)
          s.cap[e] = static_cast<double>(static_cast<std::uint64_t>(a.bandwidth_Bps) / gcd * per_gcd);
      }
      for (VertexId u = 0; u < g.vertex_count; ++u) s.demand[u] = static_cast<double>(k * weight[u]);
      s.total = static_cast<double>(k * W);
      return s;
    }
  }
  // Real capacities, widened by kRealSlack so that rounding in x* and in the max-flows cannot
  // turn the tight cut into a violated one; the trees then take up to that much longer.
  const double x = opt.rate_Bps() / (1 + kRealSlack);
  for (ArcId e = 0; e < g.arcs.size(); ++e)
    if (g.arcs[e].src != g.arcs[e].dst && g.arcs[e].bandwidth_Bps > 0) s.cap[e] = g.arcs[e].bandwidth_Bps / x;
  for (VertexId u = 0; u < g.vertex_count; ++u) s.demand[u] = weight[u];
  s.total = static_cast<double>(W);
  return s;
}

// An arc of the network being reduced: a path of original arcs with a capacity in trees.
struct PathArc {
  VertexId src = 0;
  VertexId dst = 0;
  double cap = 0;
  std::vector<ArcId> path;
};

// The network during splitting off, with the rooted-connectivity check: a super source s feeds
// every source u with its demand; each terminal must receive D.
class Reducer {
 public:
  Reducer(const ArcGraph& g, const Scaled& s, double tol, ExactForestStats* stats, std::uint64_t max_work)
      : V_(g.vertex_count), demand_(s.demand), D_(s.total), tol_(tol), stats_(stats), max_work_(max_work) {
    mf_.set_tolerance(tol_ / 100);
    for (ArcId e = 0; e < g.arcs.size(); ++e)
      if (s.cap[e] > tol_) arcs_.push_back(PathArc{g.arcs[e].src, g.arcs[e].dst, s.cap[e], {e}});
  }

  const std::vector<PathArc>& arcs() const { return arcs_; }
  // The work budget ran out: every later check fails.
  bool aborted() const { return max_work_ > 0 && stats_->work > max_work_; }

  double in_cap(VertexId z) const {
    double c = 0;
    for (const PathArc& a : arcs_)
      if (a.dst == z && a.src != z) c += a.cap;
    return c;
  }
  double out_cap(VertexId z) const {
    double c = 0;
    for (const PathArc& a : arcs_)
      if (a.src == z && a.dst != z) c += a.cap;
    return c;
  }

  // Max-flow from the super source to v on the current arcs, plus `extra` and with arcs
  // `lowered1`, `lowered2` reduced by `by` (a split being tried). 0 once the budget is spent.
  double connectivity(VertexId v, double limit, const PathArc* extra = nullptr, std::size_t lowered1 = kNone,
                      std::size_t lowered2 = kNone, double by = 0) {
    if (aborted()) return 0;
    mf_.reset(V_ + 1);
    for (std::size_t i = 0; i < arcs_.size(); ++i) {
      const PathArc& a = arcs_[i];
      if (a.src == a.dst) continue;
      const double c = a.cap - ((i == lowered1 || i == lowered2) ? by : 0);
      if (c > tol_) mf_.add_edge(a.src, a.dst, c);
    }
    if (extra && extra->src != extra->dst && extra->cap > tol_)
      mf_.add_edge(extra->src, extra->dst, extra->cap);
    for (VertexId u = 0; u < V_; ++u)
      if (demand_[u] > 0) mf_.add_edge(V_, u, demand_[u]);
    const std::uint64_t before = mf_.scans();
    const double f = mf_.run(V_, v, limit);
    ++stats_->max_flows;
    stats_->work += mf_.scans() - before;
    return f;
  }

  bool all_reach(const std::vector<VertexId>& terminals) {
    for (VertexId v : terminals)
      if (connectivity(v, D_) < D_ - tol_) return false;
    return true;
  }

  // Splits every arc into z off with an arc out of z: each pair (u -> z, z -> t) becomes u -> t by
  // the largest amount keeping every terminal's connectivity >= D. In- and out-capacity are made
  // equal first: in-capacity beyond the out-capacity pairs with a drop arc (no tree could use it),
  // out-capacity beyond the in-capacity with a dummy arc from nowhere (that capacity is deleted,
  // which may fail). False if some arc cannot be paired; the network is then left as it was.
  bool split_off(VertexId z, std::vector<VertexId> terminals) {
    const std::vector<PathArc> before = arcs_;
    if (!try_split_off(z, terminals)) {
      arcs_ = before;
      return false;
    }
    // Spent arcs go, so the checks of later relays build smaller networks.
    std::erase_if(arcs_, [&](const PathArc& a) { return a.cap <= tol_ || a.src == a.dst; });
    return true;
  }

 private:
  static constexpr std::size_t kNone = ~std::size_t{0};
  static constexpr std::size_t kVirtual = kNone - 1;  // the drop arc (out) or the dummy arc (in)

  bool try_split_off(VertexId z, std::vector<VertexId>& terminals) {
    const double excess = in_cap(z) - out_cap(z);
    double virtual_in = std::max(0.0, -excess), virtual_out = std::max(0.0, excess);
    // Slack of each terminal above D, refreshed whenever it is measured; every split lowers any
    // cut by at most its amount, so a terminal whose slack covers the amount needs no check.
    std::vector<double> slack(V_, 0);
    for (VertexId v : terminals) slack[v] = connectivity(v, std::numeric_limits<double>::infinity()) - D_;
    // A pair loses its amount on the sets (sink sides) holding z but neither u nor t, and on
    // those holding u and t but not z; a drop pair on sets holding z but not u, a dummy pair on
    // sets holding t but not z. A set found with no slack left therefore blocks every pair of
    // the same kind for the rest of this relay (slack never grows back).
    std::vector<std::vector<char>> tight;
    auto loses = [&](const std::vector<char>& X, std::size_t i, std::size_t o) {
      if (i == kVirtual) return !X[z] && X[arcs_[o].dst];
      const VertexId u = arcs_[i].src;
      if (o == kVirtual) return X[z] && !X[u];
      const VertexId t = arcs_[o].dst;
      return (X[z] && !X[u] && !X[t]) || (!X[z] && X[u] && X[t]);
    };
    std::vector<std::size_t> outs, ins;
    for (std::size_t i = 0; i < arcs_.size(); ++i) {
      if (arcs_[i].src == arcs_[i].dst || arcs_[i].cap <= tol_) continue;
      if (arcs_[i].src == z) outs.push_back(i);
      if (arcs_[i].dst == z) ins.push_back(i);
    }
    outs.push_back(kVirtual);
    ins.push_back(kVirtual);
    auto left = [&](std::size_t i, bool in) {
      return i == kVirtual ? (in ? virtual_in : virtual_out) : arcs_[i].cap;
    };
    for (std::size_t o : outs) {
      while (left(o, false) > tol_) {
        bool progress = false;
        for (std::size_t i : ins) {
          if (aborted()) return false;
          if (left(o, false) <= tol_) break;
          if (left(i, true) <= tol_ || (i == kVirtual && o == kVirtual)) continue;
          if (std::any_of(tight.begin(), tight.end(), [&](const auto& X) { return loses(X, i, o); }))
            continue;
          const bool real = i != kVirtual && o != kVirtual;
          const VertexId u = i == kVirtual ? z : arcs_[i].src, t = o == kVirtual ? z : arcs_[o].dst;
          double gamma = std::min(left(i, true), left(o, false));
          bool fell_short = false;
          for (int round = 0; round < 64 && gamma > tol_; ++round) {
            const PathArc merged{u, t, real && u != t ? gamma : 0, {}};
            bool short_now = false;
            for (std::size_t n = 0; n < terminals.size(); ++n) {
              const VertexId v = terminals[n];
              if (slack[v] >= gamma) continue;
              const double c = connectivity(v, std::numeric_limits<double>::infinity(), &merged,
                                            i == kVirtual ? kNone : i, o == kVirtual ? kNone : o, gamma);
              slack[v] = c - D_;
              if (c < D_ - tol_) {
                gamma -= D_ - c;  // the set fell short by exactly what it lost beyond its slack
                short_now = fell_short = true;
                last_cut_ = mf_.source_side(V_);
                std::swap(terminals[n], terminals[0]);  // the likeliest to fall short again
                break;
              }
            }
            if (!short_now) break;
          }
          if (fell_short) {
            std::vector<char> X(V_);
            for (VertexId v = 0; v < V_; ++v) X[v] = !last_cut_[v];
            tight.push_back(std::move(X));
          }
          if (gamma <= tol_) continue;
          for (VertexId v : terminals) slack[v] -= gamma;
          (i == kVirtual ? virtual_in : arcs_[i].cap) -= gamma;
          (o == kVirtual ? virtual_out : arcs_[o].cap) -= gamma;
          if (real && u != t) {
            PathArc merged{u, t, gamma, arcs_[i].path};
            merged.path.insert(merged.path.end(), arcs_[o].path.begin(), arcs_[o].path.end());
            arcs_.push_back(std::move(merged));
          }
          progress = true;
        }
        if (!progress) return false;
      }
    }
    for (const PathArc& a : arcs_)
      if ((a.src == z || a.dst == z) && a.src != a.dst && a.cap > tol_) return false;
    return true;
  }

  std::uint32_t V_;
  std::vector<PathArc> arcs_;
  std::vector<double> demand_;
  double D_;
  double tol_;
  ExactForestStats* stats_;
  std::uint64_t max_work_;
  MaxFlow mf_;
  std::vector<char> last_cut_;
};

}  // namespace

std::optional<ForestPacking> pack_forest_exact(const ArcGraph& g, const std::vector<std::uint32_t>& weight,
                                               const std::vector<VertexId>& receivers,
                                               const ForestOptimum& opt, double unit_bytes,
                                               ExactForestStats* stats, std::uint64_t max_work) {
  const std::uint32_t V = g.vertex_count;
  if (!(opt.rate_Bps() > 0)) return std::nullopt;
  std::vector<char> terminal(V, 0);
  for (VertexId v : receivers) terminal[v] = 1;
  const std::vector<char> receiver_mask = terminal;
  for (VertexId u = 0; u < V; ++u)
    if (weight[u] > 0 && !terminal[u]) return std::nullopt;  // sources are members
  const Scaled s = scale(g, weight, opt);
  ExactForestStats local;
  ExactForestStats& st = stats ? *stats : local;
  st = ExactForestStats{};
  st.trees_per_unit = s.k;
  // Counts are whole numbers when integral; real multiplicities get a relative tolerance.
  const double tol = s.integral ? 1e-6 : s.total * 1e-13;

  // Relays are split off one by one. One that cannot be (its out-capacity exceeds its
  // in-capacity and the bound needs the excess: a switch would have to copy data to several
  // ports) stays as a tree vertex, which copies; the splitting then starts over with it among
  // the terminals (every tree must reach it).
  std::optional<Reducer> net;
  std::vector<VertexId> terminals;
  for (int attempt = 0;; ++attempt) {
    net.emplace(g, s, tol, &st, max_work);
    terminals.clear();
    for (VertexId v = 0; v < V; ++v)
      if (terminal[v]) terminals.push_back(v);
    if (!net->all_reach(terminals)) return std::nullopt;  // a kept relay out of reach (or rounding)
    std::vector<VertexId> failed;
    st.relays_split = 0;
    for (VertexId z = 0; z < V; ++z) {
      if (terminal[z] || (net->in_cap(z) <= tol && net->out_cap(z) <= tol)) continue;
      if (net->split_off(z, terminals))
        ++st.relays_split;
      else
        failed.push_back(z);
      if (net->aborted()) return std::nullopt;
    }
    if (failed.empty()) break;
    if (attempt == 3) return std::nullopt;
    for (VertexId z : failed) terminal[z] = 1;
  }
  for (VertexId z = 0; z < V; ++z) st.relays_kept += terminal[z] && !receiver_mask[z];

  // Edmonds on the terminals alone.
  std::vector<std::uint32_t> compact(V, 0);
  for (std::size_t i = 0; i < terminals.size(); ++i) compact[terminals[i]] = static_cast<std::uint32_t>(i);
  std::vector<PackArc> arcs;
  std::vector<std::size_t> origin;
  for (std::size_t i = 0; i < net->arcs().size(); ++i) {
    const PathArc& a = net->arcs()[i];
    if (a.cap <= tol || a.src == a.dst || !terminal[a.src] || !terminal[a.dst]) continue;
    arcs.push_back(PackArc{compact[a.src], compact[a.dst], a.cap});
    origin.push_back(i);
  }
  std::vector<double> demand(terminals.size(), 0);
  for (std::size_t i = 0; i < terminals.size(); ++i) demand[i] = s.demand[terminals[i]];
  BranchingStats bstats;
  const std::uint64_t left = max_work == 0 ? 0 : max_work - std::min(max_work, st.work) + 1;
  const auto trees =
      pack_arborescences(static_cast<std::uint32_t>(terminals.size()), arcs, demand, tol, &bstats, left);
  st.max_flows += bstats.max_flows;
  st.work += bstats.work;
  if (!trees) return std::nullopt;

  // Back to the original arcs. Paths through relays may meet at a relay within one tree: it
  // keeps its first entry and forwards from there (the tree's arcs come parents first, so that
  // entry is already in place).
  ForestPacking pack;
  pack.trees_per_unit = static_cast<std::uint32_t>(std::min<std::uint64_t>(s.k, ~0u));
  pack.complete = true;
  // Each root's trees carry its data in proportion to their multiplicities (whose sum may fall
  // short of k w_u by dropped rounding remainders with real capacities).
  std::vector<double> built(terminals.size(), 0);
  for (const PackedTree& t : *trees) built[t.root] += t.multiplicity;
  std::vector<char> entered(V, 0);
  for (const PackedTree& t : *trees) {
    const VertexId root = terminals[t.root];
    Arborescence out{root, {}, unit_bytes * weight[root] * t.multiplicity / built[t.root]};
    std::fill(entered.begin(), entered.end(), 0);
    entered[out.root] = 1;
    for (std::uint32_t a : t.arcs)
      for (ArcId e : net->arcs()[origin[a]].path) {
        if (entered[g.arcs[e].dst]) continue;
        entered[g.arcs[e].dst] = 1;
        out.arcs.push_back(e);
      }
    pack.trees.push_back(std::move(out));
  }
  std::vector<double> load(g.arcs.size(), 0);
  for (const Arborescence& t : pack.trees)
    for (ArcId e : t.arcs) load[e] += t.bytes;
  for (ArcId e = 0; e < g.arcs.size(); ++e)
    if (load[e] > 0) pack.time_s = std::max(pack.time_s, load[e] / g.arcs[e].bandwidth_Bps);
  st.distinct_trees = pack.trees.size();
  return pack;
}

}  // namespace toposweep
