#include "toposweep/collective/maxflow.hpp"

#include <algorithm>

namespace toposweep {

MaxFlow::MaxFlow(std::uint32_t vertices) {
  reset(vertices);
}

void MaxFlow::reset(std::uint32_t vertices) {
  n_ = vertices;
  edges_.clear();
  if (adj_.size() < vertices) adj_.resize(vertices);
  for (std::uint32_t v = 0; v < vertices; ++v) adj_[v].clear();
  level_.resize(vertices);
  next_.resize(vertices);
}

std::uint32_t MaxFlow::add_edge(std::uint32_t u, std::uint32_t v, double capacity) {
  const auto id = static_cast<std::uint32_t>(edges_.size());
  edges_.push_back({v, capacity, 0});
  edges_.push_back({u, 0, 0});
  adj_[u].push_back(id);
  adj_[v].push_back(id + 1);
  return id / 2;
}

void MaxFlow::set_capacity(std::uint32_t edge, double capacity) {
  edges_[2 * edge].cap = capacity;
}

bool MaxFlow::bfs(std::uint32_t s, std::uint32_t t) {
  std::fill(level_.begin(), level_.begin() + n_, -1);
  queue_.clear();
  queue_.push_back(s);
  level_[s] = 0;
  for (std::size_t head = 0; head < queue_.size(); ++head) {
    const std::uint32_t u = queue_[head];
    scans_ += adj_[u].size();
    for (std::uint32_t id : adj_[u]) {
      const Edge& e = edges_[id];
      if (level_[e.to] < 0 && residual(e) > eps_) {
        level_[e.to] = level_[u] + 1;
        if (e.to == t) return true;  // later levels cannot lie on a shortest path to t
        queue_.push_back(e.to);
      }
    }
  }
  return level_[t] >= 0;
}

double MaxFlow::dfs(std::uint32_t v, std::uint32_t t, double pushed) {
  if (v == t) return pushed;
  for (std::uint32_t& i = next_[v]; i < adj_[v].size(); ++i) {
    ++scans_;
    const std::uint32_t id = adj_[v][i];
    Edge& e = edges_[id];
    if (level_[e.to] != level_[v] + 1 || residual(e) <= eps_) continue;
    const double got = dfs(e.to, t, std::min(pushed, residual(e)));
    if (got > 0) {
      e.flow += got;
      edges_[id ^ 1].flow -= got;
      return got;
    }
  }
  return 0;
}

double MaxFlow::run(std::uint32_t s, std::uint32_t t, double limit) {
  double max_cap = 0;
  for (std::size_t i = 0; i < edges_.size(); ++i) {
    edges_[i].flow = 0;
    if (i % 2 == 0) max_cap = std::max(max_cap, edges_[i].cap);
  }
  // Residuals below this are rounding noise of sums of large capacities.
  eps_ = fixed_eps_ > 0 ? fixed_eps_ : max_cap * 1e-13;
  double total = 0;
  while (total < limit && bfs(s, t)) {
    std::fill(next_.begin(), next_.begin() + n_, 0);
    while (total < limit) {
      const double f = dfs(s, t, limit - total);
      if (f <= 0) break;
      total += f;
    }
  }
  return total;
}

std::vector<char> MaxFlow::source_side(std::uint32_t s) const {
  std::vector<char> seen(n_, 0);
  std::vector<std::uint32_t> stack{s};
  seen[s] = 1;
  while (!stack.empty()) {
    const std::uint32_t u = stack.back();
    stack.pop_back();
    for (std::uint32_t id : adj_[u]) {
      const Edge& e = edges_[id];
      if (!seen[e.to] && residual(e) > eps_) {
        seen[e.to] = 1;
        stack.push_back(e.to);
      }
    }
  }
  return seen;
}

}  // namespace toposweep
