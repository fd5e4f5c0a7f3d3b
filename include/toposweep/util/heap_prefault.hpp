#pragma once
// Maps the heap's pages ahead of use, in bulk, for loops whose caches grow the heap (a sweep rank).
//
// On the machines here a page fault costs ~11 us (a paravirtualised kernel traps each one; 64 MiB
// touched page by page: 0.19 s), while madvise(MADV_POPULATE_WRITE) maps the same pages from
// inside the kernel at ~0.7 us each (64 MiB: 12 ms). A 1-rank sweep of perf-1024.ini took 11k
// faults in its loop, about 45 % of its evaluation time, and each extra rank took most of them
// again for its own caches. HeapPrefault makes glibc keep what it frees and take large blocks
// from the heap (not a fresh mmap each time), grow the heap in steps of `step_bytes` (at most
// 256 MiB), and maps each step as soon as populate() sees it. Elsewhere (no glibc, or a kernel
// before 5.14) it does nothing and faults stay as they were; results never depend on it.
#include <cstddef>

namespace toposweep::util {

class HeapPrefault {
 public:
  // Sets the allocator up as above, grows the heap by one step and maps it.
  explicit HeapPrefault(std::size_t step_bytes = std::size_t{64} << 20);
  HeapPrefault(const HeapPrefault&) = delete;
  HeapPrefault& operator=(const HeapPrefault&) = delete;
  // Maps what the heap grew by since the last call (a system call only when it grew).
  void populate();
  // Bytes mapped ahead so far (0 where unsupported).
  std::size_t populated_bytes() const { return populated_; }

 private:
  char* mapped_end_ = nullptr;  // the heap's end when last mapped
  std::size_t populated_ = 0;
};

}  // namespace toposweep::util
