#pragma once
// Makes the heap's pages cheap to fault in, for loops whose caches grow the heap (a sweep rank).
//
// On the machines here a 4 KiB page fault costs ~11 us (a paravirtualised kernel traps each one;
// 64 MiB touched page by page: 0.19 s). A 1-rank sweep of perf-1024.ini took 11k faults in its
// loop, about 45 % of its evaluation time, and each extra rank took most of them again for its own
// caches; and its caches are spread over tens of MiB, so its loop also spends much of its time in
// TLB misses. HeapPrefault makes glibc keep what it frees and take large blocks from the heap (not
// a fresh mmap each time), grows the heap in steps of `step_bytes` (at most 256 MiB), and prepares
// each step as soon as populate() sees it:
// - where the kernel offers transparent huge pages (/sys/kernel/mm/transparent_hugepage/enabled
//   is `always` or `madvise`), it asks for them (madvise(MADV_HUGEPAGE)): a first touch then maps
//   2 MiB in one fault, and only the parts the loop touches get mapped;
// - otherwise it maps the step at once with madvise(MADV_POPULATE_WRITE) (~0.7 us a page).
// Mapping a whole step of huge pages ahead was tried and is slower: on these VMs a fresh huge
// page can cost a hypervisor fault of up to tens of ms, paid even for parts never used.
// Elsewhere (no glibc, or a kernel before 5.14) it does nothing and faults stay as they were;
// results never depend on it.
#include <cstddef>

namespace toposweep::util {

class HeapPrefault {
 public:
  // Sets the allocator up as above, grows the heap by one step and prepares it.
  explicit HeapPrefault(std::size_t step_bytes = std::size_t{64} << 20);
  HeapPrefault(const HeapPrefault&) = delete;
  HeapPrefault& operator=(const HeapPrefault&) = delete;
  // Prepares what the heap grew by since the last call (a system call only when it grew).
  void populate();
  // Bytes prepared so far, in huge pages or mapped ahead (0 where unsupported).
  std::size_t prepared_bytes() const { return prepared_; }
  // Whether the heap is in huge pages (else mapped ahead, or left alone).
  bool huge_pages() const { return huge_; }

 private:
  char* mapped_end_ = nullptr;  // the heap's end when last prepared
  std::size_t prepared_ = 0;
  bool huge_ = false;
};

}  // namespace toposweep::util
