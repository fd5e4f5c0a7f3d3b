// HeapPrefault: once it has prepared the heap, touching freshly allocated heap memory costs few
// page faults (huge pages: one per 2 MiB; mapped ahead: none), and populate() prepares what the
// heap grew by. Counted with getrusage's minor faults. Where the allocator is not glibc's brk heap
// (AddressSanitizer) or the kernel has no MADV_POPULATE_WRITE, nothing is prepared and the test
// is skipped; so it is when the kernel had no free huge page to give (its fallback counter rose).
#include "toposweep/util/heap_prefault.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace toposweep::util {
namespace {

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Faults where the kernel wanted a huge page and gave small ones (/proc/vmstat).
long huge_page_fallbacks() {
  std::ifstream in("/proc/vmstat");
  std::string key;
  long value = 0;
  while (in >> key >> value)
    if (key == "thp_fault_fallback") return value;
  return 0;
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

TEST(HeapPrefault, PreparesTheHeapSoNewAllocationsFaultRarely) {
  const long fallbacks = huge_page_fallbacks();
  HeapPrefault heap(std::size_t{16} << 20);
  if (heap.prepared_bytes() == 0) GTEST_SKIP() << "no brk heap to prepare (sanitizer) or an old kernel";
  EXPECT_GE(heap.prepared_bytes(), std::size_t{16} << 20);
  std::vector<void*> keep;
  // With huge pages, the 2 MiB stretch holding the heap's old end already has small pages and
  // keeps faulting page by page (up to 512); the rest takes huge ones.
  const long stretch = heap.huge_pages() ? 512 : 0;
  // 8 MiB is 2,048 small pages: page by page that many faults; prepared, a handful (four or five
  // huge pages, or malloc's own) besides that stretch.
  const long first = faults_touching(std::size_t{8} << 20, keep);
  if (heap.huge_pages() && huge_page_fallbacks() > fallbacks) {
    for (void* p : keep) std::free(p);
    GTEST_SKIP() << "the kernel had no free huge page";
  }
  EXPECT_LT(first, 64 + stretch);
  // Past the prepared step the heap grows by another step, which faults page by page until
  // populate() prepares it.
  const std::size_t before = heap.prepared_bytes();
  faults_touching(std::size_t{16} << 20, keep);
  heap.populate();
  EXPECT_GE(heap.prepared_bytes(), before + (std::size_t{16} << 20));
  // Likewise the stretch where the touching above stopped.
  EXPECT_LT(faults_touching(std::size_t{8} << 20, keep), 64 + stretch);
  for (void* p : keep) std::free(p);
}

}  // namespace
}  // namespace toposweep::util
