// The toposweep executable: everything lives in the library; this only dispatches.
#include "toposweep/cli/command.hpp"

#ifdef __GLIBC__
#include <malloc.h>
#endif

int main(int argc, char** argv) {
#ifdef __GLIBC__
  // Task graphs of big pipelines are tens of MiB, built and dropped once per simulated strategy.
  // glibc's defaults map each from the kernel and give it back when freed (munmap, then page
  // faults to zero it again): in an exhaustive strategy search that was 45 % of the run in the
  // kernel (docs/optimizers.md). Keep freed memory for reuse instead.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  return toposweep::cli::run_main(argc, argv);
}
