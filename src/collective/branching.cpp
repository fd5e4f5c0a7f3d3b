// Capacitated arborescence packing (see branching.hpp).
//
// The check behind every step: with a super source s and, per unfinished tree i (vertex set X_i,
// multiplicity C_i), a group node g_i fed by s -> g_i of capacity C_i and feeding every vertex of
// X_i, Edmonds' condition is "every vertex v receives D = sum C_i". Letting mu copies of tree j
// take arc x -> y lowers that arc by mu and forks j into mu copies spanning X_j + y and C_j - mu
// copies spanning X_j; the only sets whose in-capacity drops are those holding y, so one flow to
// y decides it (the fork is modelled by an extra arc g_j -> y of capacity mu).
#include "toposweep/collective/branching.hpp"

#include <algorithm>
#include <numeric>

#include "toposweep/collective/maxflow.hpp"

namespace toposweep {

namespace {

struct Partial {
  std::uint32_t root = 0;
  std::vector<std::uint32_t> arcs;   // tree arcs in growth order
  std::vector<std::uint32_t> order;  // tree vertices in growth order (breadth first)
  std::vector<char> in;              // membership
  double mult = 0;
  std::size_t head = 0;  // next vertex of `order` whose out-arcs are tried
  // Tight sets met while growing (sink sides of cuts with no slack left): an arc entering one
  // from outside cannot join the tree. Slack never grows back, so they stay tight, also for forks.
  std::vector<std::vector<std::uint64_t>> tight;
};

bool holds(const std::vector<std::uint64_t>& set, std::uint32_t v) {
  return set[v / 64] >> (v % 64) & 1;
}

class Packer {
 public:
  Packer(std::uint32_t n, const std::vector<PackArc>& arcs, double tol, BranchingStats* stats,
         std::uint64_t max_work)
      : n_(n), arcs_(arcs), out_(n), tol_(tol), stats_(stats), max_work_(max_work) {
    mf_.set_tolerance(tol_ / 100);
    for (std::uint32_t a = 0; a < arcs_.size(); ++a)
      if (arcs_[a].src != arcs_[a].dst) out_[arcs_[a].src].push_back(a);
  }

  std::optional<std::vector<PackedTree>> run(const std::vector<double>& demand) {
    for (std::uint32_t u = 0; u < n_; ++u) {
      if (demand[u] <= tol_) continue;
      Partial p;
      p.root = u;
      p.order = {u};
      p.in.assign(n_, 0);
      p.in[u] = 1;
      p.mult = demand[u];
      D_ += demand[u];
      trees_.push_back(std::move(p));
      active_.push_back(static_cast<std::uint32_t>(trees_.size() - 1));
    }
    std::vector<PackedTree> done;
    if (D_ <= tol_) return done;
    for (std::uint32_t v = 0; v < n_; ++v) {
      build(kNone, 0, 0, 0);
      if (flow(v) < D_ - tol_) return std::nullopt;
    }
    // Trees are finished one at a time, the latest fork next: it shares most of its vertices with
    // the tree just finished, and few unfinished trees keep the check network small.
    std::vector<std::uint32_t> stack(active_.rbegin(), active_.rend());
    while (!stack.empty()) {
      const std::uint32_t j = stack.back();
      stack.pop_back();
      if (!grow(j, stack)) return std::nullopt;
      Partial& t = trees_[j];
      D_ -= t.mult;
      done.push_back(PackedTree{t.root, std::move(t.arcs), t.mult});
      t = Partial{};
      active_.erase(std::find(active_.begin(), active_.end(), j));
    }
    return done;
  }

 private:
  static constexpr std::uint32_t kNone = ~0u;

  // The check network; when `tree` != kNone, tree `tree` tries `mu` copies of arc `arc` into y.
  void build(std::uint32_t tree, std::uint32_t arc, std::uint32_t y, double mu) {
    const auto s = n_;
    mf_.reset(n_ + 1 + static_cast<std::uint32_t>(active_.size()));
    const double big = 2 * D_ + 1;  // exceeds every cut that matters (flows stop at D)
    arc_edge_ = group_edge_ = kNone;
    for (std::uint32_t a = 0; a < arcs_.size(); ++a) {
      const PackArc& e = arcs_[a];
      if (e.src == e.dst) continue;
      if (tree != kNone && a == arc)
        arc_edge_ = mf_.add_edge(e.src, e.dst, std::max(0.0, e.cap - mu));
      else if (e.cap > tol_)
        mf_.add_edge(e.src, e.dst, e.cap);
    }
    for (std::uint32_t i = 0; i < active_.size(); ++i) {
      const Partial& p = trees_[active_[i]];
      const std::uint32_t g = n_ + 1 + i;
      mf_.add_edge(s, g, p.mult);
      for (std::uint32_t v : p.order) mf_.add_edge(g, v, big);
      if (active_[i] == tree) group_edge_ = mf_.add_edge(g, y, mu);
    }
  }

  double flow(std::uint32_t v) {
    const std::uint64_t before = mf_.scans();
    const double f = mf_.run(n_, v, D_);
    work_ += mf_.scans() - before;
    if (stats_) ++stats_->max_flows, stats_->work += mf_.scans() - before;
    return f;
  }
  bool over_budget() const { return max_work_ > 0 && work_ > max_work_; }

  // Largest mu <= mu0 for which tree j may take arc a (0: none). A cut to y falling short at mu
  // lost exactly mu (it held y but not x, and met the tree), so its slack at zero is known and
  // becomes the next mu (Dinkelbach); cuts are finitely many and the steps shrink mu.
  // A cut that fell short is remembered in `cut_` (its sink side): after the tree takes the
  // returned amount it has no slack left.
  double admissible(std::uint32_t j, std::uint32_t a, double mu0) {
    const std::uint32_t y = arcs_[a].dst;
    double mu = mu0;
    cut_found_ = false;
    build(j, a, y, mu);
    for (int round = 0; round < 64; ++round) {
      const double f = flow(y);
      if (f >= D_ - tol_) return mu;
      const std::vector<char> source = mf_.source_side(n_);
      cut_.assign((n_ + 63) / 64, 0);
      for (std::uint32_t v = 0; v < n_; ++v)
        if (!source[v]) cut_[v / 64] |= std::uint64_t{1} << (v % 64);
      cut_found_ = true;
      mu -= D_ - f;
      if (mu <= tol_) return 0;
      mf_.set_capacity(arc_edge_, std::max(0.0, arcs_[a].cap - mu));
      mf_.set_capacity(group_edge_, mu);
    }
    return 0;
  }

  bool grow(std::uint32_t j, std::vector<std::uint32_t>& stack) {
    std::vector<std::uint32_t> candidates;
    while (trees_[j].order.size() < n_) {
      if (trees_[j].head >= trees_[j].order.size()) return false;  // Edmonds' condition broken (rounding)
      if (over_budget()) return false;
      const std::uint32_t x = trees_[j].order[trees_[j].head];
      candidates.clear();
      for (std::uint32_t a : out_[x])
        if (arcs_[a].cap > tol_ && !trees_[j].in[arcs_[a].dst]) candidates.push_back(a);
      // Widest first: an arc that can carry every copy keeps the tree whole.
      std::stable_sort(candidates.begin(), candidates.end(),
                       [&](std::uint32_t a, std::uint32_t b) { return arcs_[a].cap > arcs_[b].cap; });
      for (std::uint32_t a : candidates) {
        const std::uint32_t y = arcs_[a].dst;
        if (trees_[j].in[y] || arcs_[a].cap <= tol_) continue;
        bool blocked = false;
        for (const auto& set : trees_[j].tight)
          if (holds(set, y) && !holds(set, x)) blocked = true;
        if (blocked) continue;
        const double mult = trees_[j].mult;
        double mu = admissible(j, a, std::min(mult, arcs_[a].cap));
        if (cut_found_) trees_[j].tight.push_back(cut_);
        if (mu <= tol_) {
          if (stats_) ++stats_->rejected;
          continue;
        }
        if (mu < mult - 10 * tol_) {
          // Fork: the other copies stay as they were and continue later from this vertex.
          Partial rest = trees_[j];
          rest.mult = mult - mu;
          trees_.push_back(std::move(rest));
          active_.push_back(static_cast<std::uint32_t>(trees_.size() - 1));
          stack.push_back(active_.back());
        } else {
          // A rounding remainder is dropped rather than forced through (which would overdraw
          // the cut that limited mu); dropping copies never lowers any slack.
          D_ -= mult - mu;
        }
        Partial& t = trees_[j];
        t.mult = mu;
        arcs_[a].cap -= mu;
        t.arcs.push_back(a);
        t.in[y] = 1;
        t.order.push_back(y);
      }
      ++trees_[j].head;
    }
    return true;
  }

  std::uint32_t n_;
  std::vector<PackArc> arcs_;  // residual capacities
  std::vector<std::vector<std::uint32_t>> out_;
  double tol_;
  BranchingStats* stats_;
  std::uint64_t max_work_;
  std::uint64_t work_ = 0;
  std::vector<Partial> trees_;
  std::vector<std::uint32_t> active_;  // unfinished trees, the one being grown first
  double D_ = 0;                       // copies still to build
  MaxFlow mf_;
  std::uint32_t arc_edge_ = kNone, group_edge_ = kNone;
  std::vector<std::uint64_t> cut_;
  bool cut_found_ = false;
};

}  // namespace

std::optional<std::vector<PackedTree>> pack_arborescences(std::uint32_t n, const std::vector<PackArc>& arcs,
                                                          const std::vector<double>& demand, double tol,
                                                          BranchingStats* stats, std::uint64_t max_work) {
  Packer packer(n, arcs, tol, stats, max_work);
  return packer.run(demand);
}

}  // namespace toposweep
