#include "toposweep/util/heap_prefault.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace toposweep::util {

#if defined(__GLIBC__) && defined(MADV_POPULATE_WRITE)

namespace {
constexpr std::uintptr_t kPage = 4096;
char* page_down(void* p) {
  return reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(p) & ~(kPage - 1));
}
}  // namespace

HeapPrefault::HeapPrefault(std::size_t step_bytes) {
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
  // EINVAL (an old kernel) or ENOMEM: the pages fault in on first use instead.
  if (madvise(mapped_end_, static_cast<std::size_t>(end - mapped_end_), MADV_POPULATE_WRITE) == 0)
    populated_ += static_cast<std::size_t>(end - mapped_end_);
  mapped_end_ = end;
}

#else

HeapPrefault::HeapPrefault(std::size_t) {}
void HeapPrefault::populate() {}

#endif

}  // namespace toposweep::util
