#pragma once
// The min-heap of per-arc fair shares that FlowNetwork's progressive filling pops from: entries
// (share, arc) ordered by share, then by arc id. Shares are non-negative doubles, whose bit
// patterns order like the values, so an entry is one 128-bit integer (share bits above the arc
// id) and comparing two is one branch-free integer comparison. The filling pops ties in share
// often (symmetric networks), which makes the two-field comparison of a generic heap mispredict.
#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

#include "toposweep/topology/network.hpp"

namespace toposweep::sim {

class ShareHeap {
 public:
  using Key = unsigned __int128;
  struct Entry {
    double share;
    ArcId arc;
  };

  void clear() { keys_.clear(); }
  bool empty() const { return keys_.empty(); }
  std::size_t size() const { return keys_.size(); }
  // Adds an entry without restoring the heap order; call heapify() before the next pop().
  void append(double share, ArcId arc) { keys_.push_back(key_of(share, arc)); }
  void heapify() {
    for (std::size_t i = keys_.size() / 2; i-- > 0;) sift_down(i, keys_[i]);
  }
  void push(double share, ArcId arc) {
    std::size_t i = keys_.size();
    const Key k = key_of(share, arc);
    keys_.push_back(k);
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!(k < keys_[parent])) break;
      keys_[i] = keys_[parent];
      i = parent;
    }
    keys_[i] = k;
  }
  // The entries as stored (a heap once heapify() ran), to save and restore the whole heap.
  const std::vector<Key>& keys() const { return keys_; }
  void assign(const std::vector<Key>& keys) { keys_ = keys; }
  // Removes and returns the smallest entry (the heap must not be empty).
  Entry pop() {
    const Key top = keys_.front();
    const Key last = keys_.back();
    keys_.pop_back();
    if (!keys_.empty()) sift_down(0, last);
    return {std::bit_cast<double>(static_cast<std::uint64_t>(top >> 32)), static_cast<ArcId>(top)};
  }

 private:
  static Key key_of(double share, ArcId arc) {
    // +0.0 for -0.0, so that a zero share keeps the smallest bit pattern.
    return Key{std::bit_cast<std::uint64_t>(share + 0.0)} << 32 | arc;
  }
  // Places k at hole i or below, moving smaller children up.
  void sift_down(std::size_t i, Key k) {
    const std::size_t n = keys_.size();
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n) child += keys_[child + 1] < keys_[child] ? 1 : 0;
      if (!(keys_[child] < k)) break;
      keys_[i] = keys_[child];
      i = child;
    }
    keys_[i] = k;
  }

  std::vector<Key> keys_;
};

}  // namespace toposweep::sim
