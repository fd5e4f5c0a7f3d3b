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
rm -f build*/Testing/Temporary/LastTestsFailed.log  # a failed stage names its own failures, not an older run's
status=0
summary=()
# stage NAME STATUS [BUILD_DIR]: remembers how a stage ended and which of its tests failed, so that
# the last lines of the log (all CI shows) say what went wrong.
stage() {
  local failed=""
  if [ "$2" != 0 ] && [ -n "${3:-}" ] && [ -s "$3/Testing/Temporary/LastTestsFailed.log" ]; then
    failed=" (failed: $(cut -d: -f2 "$3/Testing/Temporary/LastTestsFailed.log" | tr '\n' ' ' | sed 's/ $//'))"
  fi
  summary+=("$1: status $2$failed")
  [ "$2" = 0 ] || status=$2
}
rc=0
(cd build && ctest --output-on-failure --timeout 900) || rc=$?
stage "tests (Release)" $rc build

if [ "${TOPOSWEEP_SKIP_MPICH:-0}" != 1 ]; then
  echo "== the MPI tests against MPICH (scripts/test-mpich.sh)"
  rc=0
  bash scripts/test-mpich.sh || rc=$?
  stage "MPI tests on MPICH" $rc build-mpich
fi

if [ "${TOPOSWEEP_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== unit tests under AddressSanitizer + UndefinedBehaviorSanitizer"
  rc=0
  BUILD_DIR=build-asan bash scripts/build.sh -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTOPOSWEEP_WERROR=ON \
    -DTOPOSWEEP_SANITIZE=ON -DTOPOSWEEP_BUILD_BENCH=OFF
  # Leak detection is off: OpenMPI's dlclose'd plugins and Boost 1.74's blossom matching leave
  # process-lifetime allocations that LeakSanitizer cannot attribute or suppress by name.
  # Out-of-bounds, use-after-free and undefined behaviour are still checked.
  (cd build-asan && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -L unit --timeout 900) || rc=$?
  stage "unit tests (ASan + UBSan)" $rc build-asan
fi

for line in "${summary[@]}"; do echo "== $line"; done
echo "== test.sh finished in $(( $(date +%s) - start )) s, status $status"
exit $status
