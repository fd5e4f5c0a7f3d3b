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
# The sweep itself on the 1,024-GPU performance space (inputs/sweeps/perf-1024.ini, 18 networks)
# and its cold-network widening (perf-1024-wide.ini, 162 networks) with 1 and 2 ranks, and what the
# machine's two cores allow (bench/sweep_scaling.sh: the closing lines' points/s, medians of 5
# rounds).
case "perf_sweep" in *"$filter"*)
  echo "== perf_sweep (inputs/sweeps/perf-1024.ini)"
  bash bench/sweep_scaling.sh 5
  echo "== perf_sweep_wide (inputs/sweeps/perf-1024-wide.ini)"
  bash bench/sweep_scaling.sh 5 inputs/sweeps/perf-1024-wide.ini
  echo "== perf_sweep_moe (inputs/sweeps/perf-moe-1024.ini: Mixtral 8x7B, ep 1-8, fattree/rail/switch)"
  bash bench/sweep_scaling.sh 5 inputs/sweeps/perf-moe-1024.ini
  ;;
esac
# The exact strategy search (issue 19's cases; about a minute).
case "strategy_search" in *"$filter"*)
  echo "== strategy_search (inputs/optimize/gpt3-175b-*.ini)"
  bash bench/strategy_search.sh
  ;;
esac
# A sweep whose every point runs the strategy search (a few seconds).
case "optimize_sweep" in *"$filter"*)
  echo "== optimize_sweep (inputs/sweeps/perf-optimize.ini: 8 points, point.optimize = strategy)"
  bash bench/optimize_sweep.sh
  ;;
esac
# The Chakra trace import at issue 30's scale (1,024 ranks, 1,003,456 nodes; about 10 s with the export).
case "chakra_import" in *"$filter"*)
  echo "== chakra_import (GPT-3 175B on 1,024 A100, exported and read back)"
  bash bench/chakra_import.sh
  ;;
esac
# Valiant routing on a 1,056-server dragonfly against minimal (issue 34; a few seconds).
case "dragonfly_valiant" in *"$filter"*)
  echo "== dragonfly_valiant (All-to-All over a = 8, p = 4, h = 4, minimal and valiant)"
  bash bench/dragonfly_valiant.sh
  ;;
esac
