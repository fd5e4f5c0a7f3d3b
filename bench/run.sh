#!/usr/bin/env bash
# Builds (Release) and runs every benchmark program, printing their figures.
# Usage: bash bench/run.sh [FILTER]   e.g. bash bench/run.sh topology
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build} bash scripts/build.sh > /dev/null
filter=${1:-}
for b in build/bench/bench_*; do
  [ -x "$b" ] || continue
  case "$(basename "$b")" in *"$filter"*) ;; *) continue ;; esac
  echo "== $(basename "$b")"
  "$b" --benchmark_counters_tabular=true
done
