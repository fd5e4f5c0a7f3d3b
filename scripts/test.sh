#!/usr/bin/env bash
# The README's test command (and what CI runs): install dependencies, build with warnings as
# errors, run every test (unit, CLI, MPI, Slurm, analysis), then build the unit tests once more
# with AddressSanitizer + UndefinedBehaviorSanitizer and run them.
# Then the MPI tests once more against MPICH (scripts/test-mpich.sh).
# TOPOSWEEP_SKIP_SANITIZERS=1 skips the sanitizer build, TOPOSWEEP_SKIP_MPICH=1 the MPICH one
# (for quick local runs).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

bash scripts/install-deps.sh

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export MPLBACKEND=Agg

echo "== build (Release, -Werror)"
BUILD_DIR=build bash scripts/build.sh -DTOPOSWEEP_WERROR=ON -DTOPOSWEEP_SANITIZE=OFF
echo "== tests"
status=0
(cd build && ctest --output-on-failure --timeout 900) || status=$?

if [ "${TOPOSWEEP_SKIP_MPICH:-0}" != 1 ]; then
  echo "== the MPI tests against MPICH (scripts/test-mpich.sh)"
  bash scripts/test-mpich.sh || status=$?
fi

if [ "${TOPOSWEEP_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== unit tests under AddressSanitizer + UndefinedBehaviorSanitizer"
  BUILD_DIR=build-asan bash scripts/build.sh -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTOPOSWEEP_WERROR=ON \
    -DTOPOSWEEP_SANITIZE=ON -DTOPOSWEEP_BUILD_BENCH=OFF
  # Leak detection is off: OpenMPI's dlclose'd plugins and Boost 1.74's blossom matching leave
  # process-lifetime allocations that LeakSanitizer cannot attribute or suppress by name.
  # Out-of-bounds, use-after-free and undefined behaviour are still checked.
  (cd build-asan && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -L unit --timeout 900) || status=$?
fi

echo "== test.sh finished in $(( $(date +%s) - start )) s, status $status"
exit $status
