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
# The sweep itself on the 1,024-GPU performance space (inputs/sweeps/perf-1024.ini), with 1 and 2
# ranks: the closing line's points/s (mpirun as root needs OMPI_ALLOW_RUN_AS_ROOT=1 and
# OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 in the environment).
case "perf_sweep" in *"$filter"*)
  echo "== perf_sweep (inputs/sweeps/perf-1024.ini)"
  tmp=$(mktemp -d)
  for n in 1 2; do
    mpirun -n "$n" --oversubscribe build/toposweep sweep --config inputs/sweeps/perf-1024.ini \
      --out "$tmp/perf-$n.h5" 2>&1 | grep 'points/s'
  done
  rm -rf "$tmp"
  ;;
esac
# The exact strategy search (issue 19's cases; about a minute).
case "strategy_search" in *"$filter"*)
  echo "== strategy_search (inputs/optimize/gpt3-175b-*.ini)"
  bash bench/strategy_search.sh
  ;;
esac
