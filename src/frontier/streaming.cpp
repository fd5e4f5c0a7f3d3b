#include "toposweep/frontier/streaming.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace toposweep::frontier {
namespace {

// a dominates b: no worse everywhere, strictly better somewhere.
bool dominates(const double* a, const double* b, std::size_t d) {
  bool better = false;
  for (std::size_t k = 0; k < d; ++k) {
    if (a[k] > b[k]) return false;
    if (a[k] < b[k]) better = true;
  }
  return better;
}

}  // namespace

bool StreamingFrontier::offer(std::uint64_t id, std::span<const double> v) {
  if (v.size() != dims_) throw std::invalid_argument("StreamingFrontier::offer: wrong number of objectives");
  for (double x : v)
    if (std::isnan(x)) return false;
  const std::size_t n = ids_.size();
  for (std::size_t i = 0; i < n; ++i)
    if (dominates(values_.data() + i * dims_, v.data(), dims_)) return false;
  // Compact the rows the newcomer dominates away, in place.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double* row = values_.data() + i * dims_;
    if (dominates(v.data(), row, dims_)) continue;
    if (kept != i) {
      ids_[kept] = ids_[i];
      std::copy(row, row + dims_, values_.data() + kept * dims_);
    }
    ++kept;
  }
  ids_.resize(kept);
  values_.resize(kept * dims_);
  ids_.push_back(id);
  values_.insert(values_.end(), v.begin(), v.end());
  return true;
}

}  // namespace toposweep::frontier
