#!/usr/bin/env bash
# Submits a sweep as a job array of N slices (jobs/sweep-array.sbatch) and a merge job
# (jobs/sweep-merge.sbatch) that runs when every slice has succeeded (afterok).
#
#   jobs/submit-array.sh N [extra sbatch options for the slices...]
#   SPACE=big.ini OUT=results/big.h5 jobs/submit-array.sh 64 --time=02:00:00 --ntasks=4
#
# The parameters of both scripts (SPACE, OUT, SLICE_DIR, TOPOSWEEP, LAUNCHER, SWEEP_ARGS, REPORT,
# ...) are read from the environment, as sbatch exports it to the jobs. Prints the two job ids:
# "ARRAY_ID MERGE_ID".
set -euo pipefail

if [ $# -lt 1 ] || ! [[ "$1" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 N [sbatch options for the slice jobs...]   (N = number of slices, >= 1)" >&2
  exit 2
fi
slices=$1
shift
jobs_dir=$(cd "$(dirname "$0")" && pwd)
export SLICES=$slices

array=$(sbatch --parsable --array="0-$((slices - 1))" "$@" "$jobs_dir/sweep-array.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes "$jobs_dir/sweep-merge.sbatch")
merge=${merge%%;*}
echo "submit-array: slices: job array $array (0-$((slices - 1))); merge: job $merge (after all slices succeed)" >&2
echo "$array $merge"
