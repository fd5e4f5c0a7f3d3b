#!/bin/bash
# MPI tests of `toposweep sweep`. One mode per CTest test; see CMakeLists.txt for the environment.
set -u
MODE=$1
# Second argument: the space, space (one model, 1,024 points) or models (four models, 1,000 points).
SPACE_NAME=${2:-space}
SPACE=$TEST_DIR/$SPACE_NAME.ini
case "$SPACE_NAME" in
  space) SIZE=1024 ;;
  models) SIZE=1000 ;;
  *) echo "FAIL: unknown space $SPACE_NAME" >&2; exit 1 ;;
esac
# check_space FILE [REFERENCE]: the per-model frontier check of the four-model space.
check_space() { [ "$SPACE_NAME" != models ] || "$PYTHON" "$TEST_DIR/check_models.py" "$@"; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/toposweep-mpi-$MODE.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

fail() { echo "FAIL: $*" >&2; exit 1; }
sweep() {  # sweep RANKS ARGS...
  local n=$1; shift
  "$MPIRUN" -n "$n" "$TOPOSWEEP" sweep --config "$SPACE" --log-level warn "$@"
}
# /points and /frontier as h5dump prints them, without the line naming the file.
dump() { "$H5DUMP" -d /points -d /frontier "$1" | tail -n +2; }

# Start a sweep in the background with a per-point cost, so it can be interrupted mid-run: 1,024
# points x 8 ms is ~4 s on 2 ranks, more than three kill rounds (each <= ~0.6 s after its journal
# appears) can finish, so no round completes before its kill (models.ini: 1,000 points, the same).
start_slow() {  # start_slow RANKS OUT [extra args]
  local n=$1 out=$2; shift 2
  "$MPIRUN" -n "$n" "$TOPOSWEEP" sweep --config "$SPACE" --log-level warn --out "$out" \
    --set sweep.synthetic_cost=8ms "$@" > /dev/null 2> slow.err &
  SLOW_PID=$!
}
# The rank processes of a launcher: its descendants named toposweep (Open MPI's mpirun starts the
# ranks as its children, MPICH's mpiexec through hydra_pmi_proxy).
descendants() {
  local c
  for c in $(pgrep -P "$1" 2> /dev/null); do
    echo "$c"
    descendants "$c"
  done
}
ranks_of() {
  local p
  for p in $(descendants "$1"); do [ "$(ps -o comm= -p "$p" 2> /dev/null)" = toposweep ] && echo "$p"; done
}
# The rank processes of the launcher started last by start_slow.
rank_pids() { ranks_of "$SLOW_PID" | tr '\n' ' '; }
# kill9_rounds SEED [extra sweep args]: three runs of k.h5 on 2 ranks (the first fresh, then
# --resume), each killed with -9 (ranks and mpirun at once: a lost node, an OOM kill) at a random
# moment within ~0.6 s of its journal appearing; checks that no output appeared and the journal
# survived each time, and that some progress was journaled.
kill9_rounds() {
  local seed=$1
  shift
  RANDOM=$seed
  for round in 1 2 3; do
    if [ $round = 1 ]; then start_slow 2 k.h5 "$@"; else start_slow 2 k.h5 "$@" --resume; fi
    for _ in $(seq 100); do
      [ -n "$(ls k.h5.journal/run-000$((round - 1))-* 2> /dev/null)" ] && break
      sleep 0.1
    done
    sleep "$(printf '0.%02d' $((RANDOM % 60)))"
    pids=$(rank_pids)
    kill -9 $pids "$SLOW_PID" 2> /dev/null
    wait "$SLOW_PID" 2> /dev/null
    [ -f k.h5 ] && fail "an output appeared from an interrupted run (round $round)"
    [ -d k.h5.journal ] || fail "no journal after kill -9 (round $round)"
    echo "round $round: journal holds $(cat k.h5.journal/*.log 2> /dev/null | wc -c) bytes"
  done
  [ "$(cat k.h5.journal/*.log | wc -c)" -gt 0 ] || fail "the kills all came before any progress"
}

# One rank's failure (docs/sweep.md, "Failure"): many small chunks (5 ms a point, at most 8 points
# a chunk, ~130 chunks on 2 ranks) so that the failure comes early and the other ranks have most
# of the space still ahead of them.
FAULT_ARGS=(--set sweep.synthetic_cost=5ms --set sweep.max_chunk_points=8)
# expect_failure RANKS OUT PATTERN [extra args]: the sweep must exit 1 within 30 s (`timeout`
# turns a hang into a failed test instead of a blocked CI), with exactly one `toposweep: failure:`
# line, matching PATTERN, no output file and its journal left in place.
expect_failure() {
  local n=$1 out=$2 pattern=$3
  shift 3
  local t0 rc ms
  t0=$(date +%s%N)
  timeout -k 5 30 "$MPIRUN" -n "$n" "$TOPOSWEEP" sweep --config "$SPACE" --log-level warn --out "$out" \
    "${FAULT_ARGS[@]}" "$@" > /dev/null 2> fail.err
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  if [ $rc = 124 ] || [ $ms -ge 30000 ]; then fail "the job hung: killed by timeout after $ms ms ($(head -c 600 fail.err))"; fi
  [ $rc = 1 ] || fail "exit $rc, expected 1: $(cat fail.err)"
  [ "$(grep -c '^toposweep: failure:' fail.err)" = 1 ] || fail "expected one failure line: $(cat fail.err)"
  grep -q "^toposweep: failure: $pattern" fail.err || fail "message does not match '$pattern': $(cat fail.err)"
  grep -q "^toposweep: failure: .*--resume" fail.err || fail "no resume hint: $(cat fail.err)"
  [ -f "$out" ] && fail "output written by a failed run"
  [ -d "$out.journal" ] || fail "no journal after the failure"
  echo "failed as expected in $ms ms: $(grep '^toposweep: failure:' fail.err)"
}
# resume_matches_clean RANKS OUT: --resume without the fault finishes, and /points and /frontier
# equal clean.h5's byte for byte. More than half of the points must have been left for it: the
# other ranks stopped soon after the failure instead of finishing the space.
resume_matches_clean() {
  timeout -k 5 60 "$MPIRUN" -n "$1" "$TOPOSWEEP" sweep --config "$SPACE" --log-level warn --out "$2" --resume \
    --json "${FAULT_ARGS[@]}" > resume.json 2> resume.err || fail "--resume exited $?: $(cat resume.err)"
  local left
  left=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["done_this_run"])' resume.json)
  [ "$left" -gt $((SIZE / 2)) ] || fail "only $left points were left for --resume: the failure did not stop the others"
  [ -d "$2.journal" ] && fail "journal left behind"
  cmp -s <(dump clean.h5) <(dump "$2") || fail "resumed /points differ from a clean run"
  echo "--resume evaluated the $left points left"
}

case "$MODE" in
  smoke_n2 | smoke_n4)
    n=${MODE#smoke_n}
    sweep "$n" --out r.h5 > out.txt || fail "sweep -n $n exited $?"
    grep -q "results in r.h5: $SIZE points" out.txt || fail "no summary line: $(cat out.txt)"
    "$PYTHON" "$TEST_DIR/check_results.py" r.h5 $SIZE || fail "h5py check"
    ;;
  identical_points)
    for n in 1 2 4; do
      sweep $n --out r$n.h5 > /dev/null || fail "sweep -n $n"
      dump r$n.h5 > d$n.txt
    done
    [ -s d1.txt ] || fail "empty dump"
    cmp -s d1.txt d2.txt || fail "/points differ between 1 and 2 ranks"
    cmp -s d1.txt d4.txt || fail "/points differ between 1 and 4 ranks"
    check_space r4.h5 || fail "per-model frontier"
    # The frontier printed by `frontier` matches the stored one (one group per model with several).
    "$TOPOSWEEP" frontier r4.h5 --json > f.json || fail "frontier command"
    "$PYTHON" - r4.h5 f.json "$SPACE_NAME" << 'PY' || fail "frontier --json vs /frontier"
import h5py, json, sys
stored = list(h5py.File(sys.argv[1])["/frontier"][:])
out = json.load(open(sys.argv[2]))
if sys.argv[3] == "models":
    assert out["group_by"] == "model.name" and "frontier" not in out, out.keys()
    assert [g["model"] for g in out["groups"]] == ["bert-large", "gpt3-175b", "resnet50", "vgg16"]
    printed = sorted(p["index"] for g in out["groups"] for p in g["frontier"])
else:
    printed = [p["index"] for p in out["frontier"]]
assert stored == printed, (stored, printed)
PY
    ;;
  kill9_resume)
    sweep 2 --out clean.h5 > /dev/null || fail "clean run"
    kill9_rounds 20261122
    sweep 2 --out k.h5 --resume > /dev/null || fail "final resume exited $?"
    [ -d k.h5.journal ] && fail "journal left behind"
    cmp -s <(dump clean.h5) <(dump k.h5) || fail "resumed /points differ from a clean run"
    check_space k.h5 || fail "per-model frontier after resume"
    ;;
  sigterm_resume)
    sweep 1 --out clean.h5 > /dev/null || fail "clean run"
    start_slow 2 t.h5
    sleep 1.5
    pids=$(rank_pids)
    [ -n "$pids" ] || fail "no rank processes"
    t0=$(date +%s%N)
    kill -TERM $pids  # what Slurm does at a time limit: every task gets SIGTERM
    wait "$SLOW_PID"
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    [ $rc = 3 ] || fail "SIGTERM gave exit $rc, expected 3 ($(cat slow.err))"
    [ $ms -lt 10000 ] || fail "took $ms ms to stop"
    grep -q "resume" slow.err || fail "no resume hint: $(cat slow.err)"
    [ -f t.h5 ] && fail "output written by an interrupted run"
    sweep 2 --out t.h5 --resume > /dev/null || fail "resume exited $?"
    cmp -s <(dump clean.h5) <(dump t.h5) || fail "resumed /points differ from a clean run"
    echo "stopped in $ms ms"
    ;;
  readers)
    sweep 2 --out r.h5 > /dev/null || fail "sweep"
    "$H5DUMP" -H r.h5 > h.txt || fail "h5dump cannot read the file"
    for name in points frontier failures space subspaces; do grep -q "\"$name\"" h.txt || fail "h5dump: no $name"; done
    "$PYTHON" "$TEST_DIR/check_results.py" r.h5 $SIZE || fail "h5py check"
    ;;
  bad_input)
    echo precious > r.h5
    # A malformed sub-space key: exit 2, one error line, the existing file untouched.
    "$MPIRUN" -n 2 "$TOPOSWEEP" sweep --config "$SPACE" --set space.grid.topology.degre=4 --out r.h5 \
      > out.txt 2> err.txt
    rc=$?
    [ $rc = 2 ] || fail "bad key gave exit $rc"
    [ "$(grep -c 'toposweep: error:' err.txt)" = 1 ] || fail "expected one error line: $(cat err.txt)"
    grep -q "did you mean 'topology.degree'" err.txt || fail "no suggestion: $(cat err.txt)"
    [ "$(cat r.h5)" = precious ] || fail "existing output touched"
    # Resuming with a different space is refused.
    start_slow 1 s.h5
    sleep 1
    kill -TERM $(rank_pids)
    wait "$SLOW_PID"
    "$MPIRUN" -n 2 "$TOPOSWEEP" sweep --config "$SPACE" --set space.kinds.topology.degree=4 --out s.h5 --resume \
      > /dev/null 2> err.txt
    rc=$?
    [ $rc = 2 ] || fail "resume with another space gave exit $rc"
    grep -q "different space" err.txt || fail "message: $(cat err.txt)"
    ;;
  slices)
    sweep 2 --out whole.h5 > /dev/null || fail "whole"
    for k in 0 1 2; do sweep 1 --out slice_$k.h5 --slice $k/3 > /dev/null || fail "slice $k"; done
    "$TOPOSWEEP" sweep --config "$SPACE" --merge slice_2.h5 slice_0.h5 slice_1.h5 --out all.h5 --log-level warn \
      > /dev/null || fail "merge"
    cmp -s <(dump whole.h5) <(dump all.h5) || fail "merged /points or /frontier differ from a single job"
    check_space all.h5 || fail "per-model frontier of the merge"
    # Without --config the space comes from the slices themselves.
    "$TOPOSWEEP" sweep --merge slice_1.h5 slice_0.h5 slice_2.h5 --out all2.h5 --log-level warn \
      > /dev/null || fail "merge without --config"
    cmp -s <(dump whole.h5) <(dump all2.h5) || fail "merge without --config differs from a single job"
    "$TOPOSWEEP" sweep --config "$SPACE" --merge slice_0.h5 slice_1.h5 --out bad.h5 > /dev/null 2>&1
    [ $? = 2 ] || fail "an incomplete merge was not refused"
    [ -e bad.h5 ] && fail "a refused merge wrote its output"
    # Slices written with --keep frontier merge into what one --keep frontier run writes: the
    # frontier of the union of the slices' frontiers, with the status counts summed.
    sweep 2 --out wholef.h5 --keep frontier > /dev/null || fail "whole --keep frontier"
    for k in 0 1 2; do
      sweep 1 --out fslice_$k.h5 --slice $k/3 --keep frontier > /dev/null || fail "frontier slice $k"
    done
    "$TOPOSWEEP" sweep --merge fslice_1.h5 fslice_2.h5 fslice_0.h5 --keep frontier --out allf.h5 \
      --log-level warn > /dev/null || fail "merge of frontier slices"
    cmp -s <(dump wholef.h5) <(dump allf.h5) || fail "merged frontier slices differ from one --keep frontier run"
    check_space allf.h5 whole.h5 || fail "per-model frontier of the merged frontier slices"
    "$PYTHON" - wholef.h5 allf.h5 << 'PY' || fail "status counts of merged frontier slices"
import h5py, sys
a, b = h5py.File(sys.argv[1]), h5py.File(sys.argv[2])
for k in ("points_evaluated", "points_infeasible", "points_failed"):
    assert int(a.attrs[k]) == int(b.attrs[k]), (k, a.attrs[k], b.attrs[k])
assert b.attrs["keep"] == "frontier"
PY
    # A frontier slice mixed with full slices is fine with --keep frontier ...
    "$TOPOSWEEP" sweep --merge slice_0.h5 fslice_1.h5 slice_2.h5 --keep frontier --out mixed.h5 \
      --log-level warn > /dev/null || fail "merge of mixed slices"
    cmp -s <(dump wholef.h5) <(dump mixed.h5) || fail "mixed merge differs from one --keep frontier run"
    # ... but not into a file that claims to hold every point, nor with slices left out.
    "$TOPOSWEEP" sweep --merge slice_0.h5 fslice_1.h5 slice_2.h5 --out bad.h5 > /dev/null 2> err.txt
    [ $? = 2 ] || fail "merging a frontier slice without --keep frontier was not refused"
    grep -q "fslice_1.h5.*--keep frontier\|--keep frontier.*fslice_1.h5" err.txt || fail "message: $(cat err.txt)"
    "$TOPOSWEEP" sweep --merge fslice_0.h5 fslice_2.h5 --keep frontier --out bad.h5 > /dev/null 2>&1
    [ $? = 2 ] || fail "an incomplete frontier merge was not refused"
    "$TOPOSWEEP" sweep --merge fslice_0.h5 fslice_0.h5 fslice_1.h5 fslice_2.h5 --keep frontier --out bad.h5 \
      > /dev/null 2>&1
    [ $? = 2 ] || fail "an overlapping frontier merge was not refused"
    [ -e bad.h5 ] && fail "a refused merge wrote its output"
    ;;
  keep_frontier)
    # --keep frontier: per-rank streaming frontiers merged at the end. 1 and 2 ranks give the same
    # /points and /frontier, which are the frontier rows of a --keep all run; the counts survive.
    sweep 1 --out all.h5 > /dev/null || fail "keep all"
    for n in 1 2; do
      sweep $n --out f$n.h5 --keep frontier > /dev/null || fail "keep frontier -n $n"
      dump f$n.h5 > d$n.txt
    done
    [ -s d1.txt ] || fail "empty dump"
    cmp -s d1.txt d2.txt || fail "--keep frontier /points differ between 1 and 2 ranks"
    check_space f2.h5 all.h5 || fail "per-model frontier of --keep frontier"
    "$PYTHON" - all.h5 f2.h5 << 'PY' || fail "--keep frontier vs the frontier rows of --keep all"
import h5py, sys
a, f = h5py.File(sys.argv[1]), h5py.File(sys.argv[2])
fr = list(a["/frontier"][:])
assert list(f["/frontier"][:]) == fr
pts = f["/points"][:]
assert list(pts["index"]) == fr, (list(pts["index"]), fr)
assert (pts == a["/points"][:][fr]).all()
for k in ("points_evaluated", "points_infeasible", "points_failed"):
    assert int(a.attrs[k]) == int(f.attrs[k]), k
assert f.attrs["keep"] == "frontier"
PY
    ;;
  keep_frontier_kill9)
    sweep 2 --out clean.h5 --keep frontier > /dev/null || fail "clean run"
    kill9_rounds 20261123 --keep frontier
    sweep 2 --out k.h5 --keep frontier --resume > /dev/null || fail "final resume exited $?"
    [ -d k.h5.journal ] && fail "journal left behind"
    cmp -s <(dump clean.h5) <(dump k.h5) || fail "resumed /points differ from a clean run"
    "$PYTHON" - clean.h5 k.h5 $SIZE << 'PY' || fail "status counts differ after resume"
import h5py, sys
a, b = h5py.File(sys.argv[1]), h5py.File(sys.argv[2])
for k in ("points_evaluated", "points_infeasible", "points_failed"):
    assert int(a.attrs[k]) == int(b.attrs[k]), (k, a.attrs[k], b.attrs[k])
assert sum(int(a.attrs[k]) for k in ("points_evaluated", "points_infeasible", "points_failed")) == int(sys.argv[3])
PY
    if [ "$SPACE_NAME" = models ]; then
      sweep 2 --out all.h5 > /dev/null || fail "keep all run"
      check_space k.h5 all.h5 || fail "per-model frontier after a --keep frontier resume"
    fi
    ;;
  fail_rank1 | fail_rank0)
    # An exception on one rank (injected at its 3rd chunk) ends every rank with exit 1.
    rank=${MODE#fail_rank}
    sweep 2 --out clean.h5 > /dev/null || fail "clean run"
    TOPOSWEEP_TEST_FAIL=$rank:3 expect_failure 2 f.h5 \
      "rank $rank of 2 failed: injected fault (TOPOSWEEP_TEST_FAIL) in chunk 3;"
    resume_matches_clean 2 f.h5
    ;;
  fail_n4)
    sweep 2 --out clean.h5 > /dev/null || fail "clean run"
    TOPOSWEEP_TEST_FAIL=3:2 expect_failure 4 f.h5 "rank 3 of 4 failed: injected fault"
    resume_matches_clean 4 f.h5
    ;;
  journal_full)
    # A journal that cannot be written: the first run leaves a journal (injected fault), then rank
    # 1's part of the next run is a link to /dev/full, so its first commit fails with ENOSPC (as
    # root, permission bits would not stop the write). Parts that are not regular files are
    # neither read nor counted as runs, so that link is exactly the part rank 1 opens.
    sweep 2 --out clean.h5 > /dev/null || fail "clean run"
    TOPOSWEEP_TEST_FAIL=1:3 expect_failure 2 f.h5 "rank 1 of 2 failed: injected fault"
    ln -s /dev/full f.h5.journal/run-0001-rank-00001.log
    expect_failure 2 f.h5 "rank 1 of 2 failed: cannot write the journal file .*run-0001-rank-00001.log: No space left on device;" --resume
    rm f.h5.journal/run-0001-rank-00001.log
    resume_matches_clean 2 f.h5
    ;;
  dead_peer)
    # A rank that dies (kill -9 of that rank alone) does not leave the others waiting: mpirun ends
    # the job. The journal stays valid and --resume finishes the sweep.
    sweep 2 --out clean.h5 > /dev/null || fail "clean run"
    timeout -k 5 30 "$MPIRUN" -n 2 "$TOPOSWEEP" sweep --config "$SPACE" --log-level warn --out d.h5 \
      "${FAULT_ARGS[@]}" > /dev/null 2> dead.err &
    TIMEOUT_PID=$!
    for _ in $(seq 100); do
      [ -n "$(ls d.h5.journal/run-0000-* 2> /dev/null)" ] && break
      sleep 0.1
    done
    sleep 0.3
    victim=$(ranks_of "$TIMEOUT_PID" | tail -n 1)
    [ -n "$victim" ] || fail "no rank processes"
    t0=$(date +%s%N)
    kill -9 "$victim"
    wait "$TIMEOUT_PID"
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    # (mpirun itself exits 137 when a rank was killed by signal 9: only the time tells a hang.)
    if [ $rc = 124 ] || [ $ms -ge 30000 ]; then fail "the job hung after a rank died: killed by timeout"; fi
    [ $rc != 0 ] || fail "exit 0 after a rank died"
    [ -f d.h5 ] && fail "output written by a run that lost a rank"
    echo "job ended $ms ms after a rank was killed (exit $rc)"
    timeout -k 5 60 "$MPIRUN" -n 2 "$TOPOSWEEP" sweep --config "$SPACE" --log-level warn --out d.h5 --resume \
      > /dev/null || fail "--resume exited $?"
    cmp -s <(dump clean.h5) <(dump d.h5) || fail "resumed /points differ from a clean run"
    ;;
  one_sided)
    # The one-sided store (sweep.scheduler = one_sided) hands out the same points: same bytes as
    # the shared-memory store the default picks on one node, on 2 and 4 ranks.
    sweep 2 --out shm.h5 --json > shm.json || fail "shared-memory run"
    grep -q '"scheduler": *"shared_memory"' shm.json || fail "auto did not pick shared memory: $(cat shm.json)"
    for n in 2 4; do
      sweep $n --out os$n.h5 --set sweep.scheduler=one_sided --json > os.json || fail "one-sided run on $n ranks"
      grep -q '"scheduler": *"one_sided"' os.json || fail "not one-sided: $(cat os.json)"
      cmp -s <(dump shm.h5) <(dump os$n.h5) || fail "one-sided /points differ from shared memory ($n ranks)"
    done
    ;;
  *) fail "unknown mode $MODE" ;;
esac
echo "ok: $MODE ($SPACE_NAME)"
