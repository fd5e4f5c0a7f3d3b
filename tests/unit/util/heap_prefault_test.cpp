// HeapPrefault: after it has mapped the heap ahead, touching freshly allocated heap memory costs
// (almost) no page faults, and populate() maps what the heap grew by. Counted with getrusage's
// minor faults. Where the allocator is not glibc's brk heap (AddressSanitizer) or the kernel has
// no MADV_POPULATE_WRITE, nothing is mapped and the test is skipped.
#include "toposweep/util/heap_prefault.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace toposweep::util {
namespace {

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Faults taken by allocating `bytes` in 64 KiB blocks and writing every byte.
long faults_touching(std::size_t bytes, std::vector<void*>& keep) {
  const long before = minor_faults();
  for (std::size_t done = 0; done < bytes; done += 64 << 10) {
    void* p = std::malloc(64 << 10);
    std::memset(p, 1, 64 << 10);
    keep.push_back(p);
  }
  return minor_faults() - before;
}

TEST(HeapPrefault, MapsTheHeapAheadSoNewAllocationsDoNotFault) {
  HeapPrefault heap(std::size_t{16} << 20);
  if (heap.populated_bytes() == 0) GTEST_SKIP() << "no brk heap to map ahead (sanitizer) or an old kernel";
  EXPECT_GE(heap.populated_bytes(), std::size_t{16} << 20);
  std::vector<void*> keep;
  // 8 MiB is 2,048 pages: page by page that many faults; mapped ahead, a handful (malloc's own).
  EXPECT_LT(faults_touching(std::size_t{8} << 20, keep), 64);
  // Past the mapped step the heap grows by another step, which faults until populate() maps it.
  const std::size_t before = heap.populated_bytes();
  faults_touching(std::size_t{16} << 20, keep);
  heap.populate();
  EXPECT_GE(heap.populated_bytes(), before + (std::size_t{16} << 20));
  EXPECT_LT(faults_touching(std::size_t{8} << 20, keep), 64);
  for (void* p : keep) std::free(p);
}

}  // namespace
}  // namespace toposweep::util
