#!/usr/bin/env bash
# Configures and builds toposweep (Release) into build/ (or $BUILD_DIR). Extra arguments go to
# cmake's configure step, e.g. scripts/build.sh -DTOPOSWEEP_SANITIZE=ON. $BUILD_TARGETS (space
# separated, e.g. "toposweep") builds only those targets; by default everything (tests, benchmarks).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@" > "$build_dir.configure.log" 2>&1 \
  || { cat "$build_dir.configure.log"; exit 1; }
rm -f "$build_dir.configure.log"
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build_dir" -j "$jobs" "${targets[@]}"
