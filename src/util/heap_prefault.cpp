#include "toposweep/util/heap_prefault.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace toposweep::util {

#if defined(__GLIBC__) && defined(MADV_POPULATE_WRITE) && defined(MADV_HUGEPAGE)

namespace {
constexpr std::uintptr_t kPage = 4096;
char* page_down(void* p) {
  return reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(p) & ~(kPage - 1));
}

// Whether a region advised MADV_HUGEPAGE gets huge pages: the system's setting is "always" or
// "madvise" (the file reads e.g. "always [madvise] never").
bool huge_pages_offered() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(in, line)) return false;
  return line.find("[always]") != std::string::npos || line.find("[madvise]") != std::string::npos;
}
}  // namespace

HeapPrefault::HeapPrefault(std::size_t step_bytes) : huge_(huge_pages_offered()) {
  const int step = static_cast<int>(std::min<std::size_t>(step_bytes, std::size_t{256} << 20));
  // Blocks up to 32 MiB (glibc's largest mmap threshold on 64-bit) come from the heap; the top is
  // given back only past 4 steps; every growth of the heap takes a step more than it needs.
  mallopt(M_MMAP_THRESHOLD, std::min(step, 32 << 20));
  mallopt(M_TRIM_THRESHOLD, 4 * step);
  mallopt(M_TOP_PAD, step);
  mapped_end_ = page_down(sbrk(0));
  // Grow the heap now: unless its top already has half a step (at most 16 MiB) free, this takes a
  // step more from the system; the block goes back to the top, which keeps it (below the trim).
  // (volatile: a compiler may drop a malloc/free pair whose block is never used.)
  void* volatile block = std::malloc(static_cast<std::size_t>(std::min(step / 2, 16 << 20)));
  std::free(block);
  populate();
}

void HeapPrefault::populate() {
  char* end = page_down(sbrk(0));
  if (end <= mapped_end_) return;
  const auto bytes = static_cast<std::size_t>(end - mapped_end_);
  // Huge pages where offered (a kernel that refuses the advice: map ahead instead). EINVAL (an
  // old kernel) or ENOMEM: the pages fault in on first use instead.
  if (huge_ && madvise(mapped_end_, bytes, MADV_HUGEPAGE) != 0) huge_ = false;
  if (huge_ || madvise(mapped_end_, bytes, MADV_POPULATE_WRITE) == 0) prepared_ += bytes;
  mapped_end_ = end;
}

#else

HeapPrefault::HeapPrefault(std::size_t) {}
void HeapPrefault::populate() {}

#endif

}  // namespace toposweep::util
