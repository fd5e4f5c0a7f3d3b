#!/usr/bin/env bash
# The README's main job: install, build (Release), run the example sweep on the local cores under
# mpirun, write HDF5, print its Pareto frontier, and write the analysis report.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
# Only what this job runs: the tool (tests and benchmarks are built by scripts/test.sh).
BUILD_TARGETS=toposweep bash scripts/build.sh

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export MPLBACKEND=Agg

out_dir=${OUT_DIR:-results}
mkdir -p "$out_dir"
ranks=${RANKS:-$(nproc)}
# A fresh run each time: the previous result and its journal are replaced, not resumed.
rm -f "$out_dir/quickstart.h5" "$out_dir/quickstart.h5".*

echo "== sweep: inputs/sweeps/quickstart.ini on $ranks ranks"
mpirun -n "$ranks" build/toposweep sweep --config inputs/sweeps/quickstart.ini --out "$out_dir/quickstart.h5"
echo "== results: $out_dir/quickstart.h5"
echo "== Pareto frontier (cost vs iteration time)"
build/toposweep frontier "$out_dir/quickstart.h5" --objectives cost_usd,iteration_time_s --group-by topology.kind
echo "== analysis report"
/usr/bin/python3 -m analysis.report "$out_dir/quickstart.h5" --out "$out_dir/report"
echo "== report: $out_dir/report/summary.md"
