#!/usr/bin/env bash
# End-to-end test of the jobs/ scripts against a real one-node Slurm (scripts/slurm-up.sh):
#   1. jobs/sweep.sbatch (srun --mpi=pmix, 2 ranks) on a small space; the result equals a run
#      without Slurm, and the analysis report is written;
#   2. jobs/submit-array.sh: 3 slices (2 ranks each, mpirun inside the allocation) + the merge
#      job; the merged file equals the single run;
#   3. jobs/sweep-long.sbatch with a 2-minute limit and a signal 60 s before it, on a space of
#      deliberately slow synthetic points (~65 s of work): the first run is interrupted (exit 3),
#      chained runs resume, and the final file equals an uninterrupted run.
# Every daemon started is stopped by PID in the EXIT trap. Exit 77 (CTest SKIP) only when this
# machine cannot run Slurm daemons (not root, no passwordless sudo) or the sweep command is not
# built into the binary yet.
#
#   slurm_e2e.sh SOURCE_DIR TOPOSWEEP_BINARY WORK_DIR
set -uo pipefail

src=$(cd "${1:?source dir}" && pwd)
bin=${2:?toposweep binary}
work=${3:?work dir}
python=${TOPOSWEEP_PYTHON:-/usr/bin/python3}
# Slurm checks time limits about every 30 s and sends a --signal=B:TERM@60 of a 2-minute job at the
# first check at most 60 s before the limit, so 30 to 60 s after the start: more work than 60 s
# is always interrupted, and each run makes at least ~30 s of progress.
long_points=${TOPOSWEEP_SLURM_LONG_POINTS:-1400}  # x 40 ms of synthetic work each
deadline=$((SECONDS + ${TOPOSWEEP_SLURM_TEST_BUDGET:-240}))

say() { echo "slurm-test: $*"; }
fail() {
  echo "slurm-test: FAIL: $*" >&2
  exit 1
}

# ---- can this machine run it at all? ----
if [ "$(id -u)" -ne 0 ] && ! { command -v sudo > /dev/null 2>&1 && sudo -n true 2> /dev/null; }; then
  say "SKIP: needs root or passwordless sudo to install Slurm and run slurmctld/slurmd (uid $(id -u))"
  exit 77
fi
[ -x "$bin" ] || fail "no toposweep binary at $bin; build the 'toposweep' target first"
rm -rf "$work"
mkdir -p "$work"
cd "$work" || fail "cannot enter $work"
# A Slurm of its own (state, ports, munged socket), so the test runs beside any other.
export TOPOSWEEP_SLURM_DIR=$work/slurm
space=$src/tests/slurm/space.ini
if ! probe=$("$bin" sweep --config "$space" --dry-run 2>&1 > /dev/null); then
  fail "toposweep sweep --dry-run on $space: $probe"
fi

# ---- the long run's space: many cheap-to-describe, slow-to-evaluate synthetic points ----
{
  echo "# Written by tests/slurm/slurm_e2e.sh: $long_points synthetic points of 40 ms each."
  echo "[sweep]"
  echo "evaluator = synthetic"
  echo "synthetic_cost = 40ms"
  echo "[topology]"
  echo "kind = switch"
  echo "[space.seeds]"
  printf "topology.seed = %s\n" "$(seq -s ', ' 1 "$long_points")"
} > long_space.ini

# ---- references, computed without Slurm ----
"$bin" sweep --config "$space" --out ref.h5 --log-level warn > /dev/null || fail "reference sweep failed"
"$bin" sweep --config long_space.ini --set sweep.synthetic_cost=0s --out ref-long.h5 --log-level warn > /dev/null ||
  fail "reference synthetic sweep failed"
"$python" "$src/tests/slurm/results_helpers.py" check ref.h5 || fail "reference results are malformed"

# ---- Slurm up, and down again whatever happens ----
submitted=()
slurm_started=0
cleanup() {
  local status=$?
  if [ "$slurm_started" = 1 ]; then
    if [ ${#submitted[@]} -gt 0 ]; then
      scancel "${submitted[@]}" 2> /dev/null
      # Let slurmd finish cancelled jobs before it stops, so no job step outlives the daemons.
      for _ in $(seq 1 30); do
        squeue -h -t RUNNING,COMPLETING -o %i 2> /dev/null | grep -q . || break
        sleep 0.5
      done
    fi
    if [ "$status" -ne 0 ]; then
      for f in "$work"/*.out; do [ -e "$f" ] && { echo "---- $f"; tail -n 30 "$f"; }; done
      echo "---- slurmctld.log"
      tail -n 20 "$TOPOSWEEP_SLURM_DIR/log/slurmctld.log" 2> /dev/null
    fi
    "$src/scripts/slurm-down.sh"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

up=$("$src/scripts/slurm-up.sh")
up_status=$?
[ "$up_status" -eq 77 ] && exit 77
slurm_started=1
[ "$up_status" -eq 0 ] || fail "scripts/slurm-up.sh exited $up_status"
eval "$up"
say "Slurm is up ($SLURM_CONF)"

# The jobs read their parameters from the environment sbatch exports.
export TOPOSWEEP=$bin TOPOSWEEP_SRC=$src PYTHON=$python

job_field() {  # job_field ID FIELD: FIELD of the job's first record
  scontrol show job -o "$1" 2> /dev/null | head -n 1 | sed -n "s/.* $2=\([^ ]*\).*/\1/p"
}
# wait_job ID: polls until the job ends and sets `state` to its final state. Runs in this shell,
# not a $(...) subshell, so an interrupt reaches the EXIT trap within a second.
wait_job() {
  while [ "$SECONDS" -lt "$deadline" ]; do
    state=$(job_field "$1" JobState)
    case "$state" in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED)
        return 0
        ;;
    esac
    sleep 1
  done
  state="still ${state:-unknown} when the test's time budget ran out"
  return 1
}
submit() {  # submit SBATCH-ARGS...: prints the job id (the caller adds it to `submitted`)
  local id
  id=$(sbatch --parsable "$@") || return 1
  echo "${id%%;*}"
}

# ---- 1. a single sweep with srun ----
id=$(SPACE=$space OUT=$work/single.h5 LAUNCHER=srun submit --ntasks=2 --overcommit --time=5 --output="$work/single-%j.out" \
  "$src/jobs/sweep.sbatch") || fail "sbatch jobs/sweep.sbatch"
submitted+=("$id")
wait_job "$id"
exit_code=$(job_field "$id" ExitCode)
say "single sweep: job $id $state, exit $exit_code"
if [ "$state" != COMPLETED ] || [ "$exit_code" != 0:0 ]; then fail "single sweep job $id: $state $exit_code"; fi
"$python" "$src/tests/slurm/results_helpers.py" check single.h5 || fail "single.h5 malformed"
"$python" "$src/tests/slurm/results_helpers.py" equal single.h5 ref.h5 || fail "2-rank Slurm run differs from 1 process"
for f in summary.md summary.csv frontier.csv cost_vs_time.png; do
  [ -s "single-report/$f" ] || fail "jobs/sweep.sbatch wrote no single-report/$f"
done

# ---- 2. job array of slices (2 ranks each, mpirun inside the allocation) + merge ----
ids=$(SPACE=$space OUT=$work/merged.h5 LAUNCHER=mpirun REPORT=0 \
  "$src/jobs/submit-array.sh" 3 --ntasks=2 --overcommit --time=5 --output="$work/slice-%A_%a.out") ||
  fail "jobs/submit-array.sh"
read -r array merge <<< "$ids"
submitted+=("$array" "$merge")
wait_job "$merge"
say "array $array + merge $merge: merge $state, exit $(job_field "$merge" ExitCode)"
[ "$state" = COMPLETED ] || fail "merge job $merge: $state (array tasks: $(scontrol show job -o "$array" |
  grep -o 'JobState=[A-Z]*' | tr '\n' ' '))"
for k in 0 1 2; do
  [ -s "merged-slices/slice-$k-of-3.h5" ] || fail "slice $k file missing"
done
"$python" "$src/tests/slurm/results_helpers.py" equal merged.h5 single.h5 || fail "array+merge differs from the single run"

# ---- 3. a long sweep interrupted by its time limit, chained until done ----
id=$(SPACE=$work/long_space.ini OUT=$work/long.h5 LAUNCHER=srun MAX_RUNS=8 submit --ntasks=1 --time=2 \
  --signal=B:TERM@60 --job-name=ts-long --output="$work/long.out" "$src/jobs/sweep-long.sbatch") ||
  fail "sbatch jobs/sweep-long.sbatch"
submitted+=("$id")
runs=0
interrupted=0
while :; do
  runs=$((runs + 1))
  wait_job "$id"
  exit_code=$(job_field "$id" ExitCode)
  say "long sweep run $runs: job $id $state, exit $exit_code"
  [ "$state" = COMPLETED ] && break
  if [ "$state" != FAILED ] || [ "$exit_code" != 3:0 ]; then fail "long sweep job $id: $state $exit_code"; fi
  interrupted=$((interrupted + 1))
  next=$(sed -n "s/.*run $((runs + 1)) is job \([0-9]*\).*/\1/p" long.out | tail -n 1)
  [ -n "$next" ] || fail "job $id exited 3 but chained no next run"
  submitted+=("$next")
  id=$next
done
[ "$interrupted" -ge 1 ] || fail "the long sweep was never interrupted: make TOPOSWEEP_SLURM_LONG_POINTS larger"
grep -q "sweep complete after $runs run(s)" long.out || fail "long.out does not report completion after $runs runs"
[ ! -e long.h5.journal ] || fail "the journal outlived the finished sweep"
"$python" "$src/tests/slurm/results_helpers.py" equal long.h5 ref-long.h5 || fail "interrupted+resumed run differs"
[ -s long-report/summary.md ] || fail "jobs/sweep-long.sbatch wrote no report"

say "PASS: single, array+merge, and a sweep interrupted $interrupted time(s) by its time limit ($runs runs) (${SECONDS}s)"
