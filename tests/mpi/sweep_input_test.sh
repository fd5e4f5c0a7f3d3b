#!/bin/bash
# What `toposweep sweep` does with input it cannot run, under mpirun: malformed values anywhere
# (base, axis, generator) are exit 2 with one error line naming the key and file:line, before
# anything is written (an existing output and its neighbours untouched, no journal); keys no point
# reads are warned about once; a sweep whose every point failed exits 1 with the first messages.
set -u
MODE=$1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/toposweep-input-$MODE.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
fail() { echo "FAIL: $*" >&2; exit 1; }

# launch RANKS ARGS...: one rank is a singleton MPI run (no mpirun: mpirun takes ~2 s to wind
# down after an error exit), more go through mpirun.
launch() {
  local n=$1; shift
  if [ "$n" = 1 ]; then "$TOPOSWEEP" "$@"; else "$MPIRUN" -n "$n" "$TOPOSWEEP" "$@"; fi
}

base() {  # a small valid base configuration
  printf '[model]\nname = bert-large\n[server]\ngpus = 4\n[topology]\nservers = 8\nkind = switch\n'
}

# expect_bad RANKS NEEDLE_KEY NEEDLE_LINE: sweep bad.ini onto precious out.h5; exit 2, one error
# line naming the key and the file:line, nothing touched.
expect_bad() {
  local n=$1 key=$2 line=$3
  echo precious > out.h5
  touch -d '2001-01-01' out.h5
  local before
  before=$(stat -c '%Y %s' out.h5)
  launch "$n" sweep --config bad.ini --out out.h5 > out.txt 2> err.txt
  local rc=$?
  [ $rc = 2 ] || fail "$(cat bad.ini): exit $rc, expected 2: $(cat err.txt)"
  [ "$(grep -c '^toposweep: error:' err.txt)" = 1 ] || fail "expected one error line: $(cat err.txt)"
  grep '^toposweep: error:' err.txt | grep -q "key $key at bad.ini:$line" ||
    fail "the error does not name key $key at bad.ini:$line: $(cat err.txt)"
  [ "$(stat -c '%Y %s' out.h5)" = "$before" ] && [ "$(cat out.h5)" = precious ] || fail "existing output touched"
  [ -e out.h5.journal ] && fail "a journal was created"
  [ -e out.h5.partial ] && fail "a partial output was created"
  echo "ok ($n ranks): $(grep '^toposweep: error:' err.txt)"
}

case "$MODE" in
  malformed)
    for n in 1 2; do
      # A unit-less value in an axis, and in the base.
      { base; printf '[space.a]\ntopology.link_bandwidth = 100Gbps, 100\n'; } > bad.ini
      expect_bad $n topology.link_bandwidth 9
      { base | sed 's/servers = 8/servers = sixteen/'; } > bad.ini
      expect_bad $n topology.servers 6
      [ $n = 2 ] && continue  # the rest is rank-independent; one rank keeps the test short
      # Unknown model and device names, in an axis and in the base.
      { base; printf '[space.a]\nmodel.name = bert-large, gpt-9\n'; } > bad.ini
      expect_bad $n model.name 9
      { base; printf '[server]\ndevice = a200\n'; } > bad.ini
      expect_bad $n server.device 9
      # An unknown topology kind in an axis; a non-number in strategy.microbatches.
      { base; printf '[space.a]\ntopology.kind = switch, hypercube\n'; } > bad.ini
      expect_bad $n topology.kind 9
      { base; printf '[space.a]\nstrategy.microbatches = 1, many\n'; } > bad.ini
      expect_bad $n strategy.microbatches 9
      # A file that must exist; a missing key only some points of a sub-space read.
      { base; printf '[space.a]\ntopology.kind = switch, file\ntopology.file = /no/such/edges.txt\n'; } > bad.ini
      expect_bad $n topology.file 10
      { base; printf '[space.a]\ntopology.kind = switch, multidim\n'; } > bad.ini
      launch "$n" sweep --config bad.ini --out out.h5 > /dev/null 2> err.txt
      [ $? = 2 ] && grep -q "multidim needs topology.dims" err.txt || fail "multidim without dims: $(cat err.txt)"
      # Generator arguments.
      { base; printf '[space.a]\nstrategy = all(max_tp=four)\n'; } > bad.ini
      launch "$n" sweep --config bad.ini --out out.h5 > /dev/null 2> err.txt
      [ $? = 2 ] && grep -q "bad.ini:9" err.txt || fail "bad generator argument: $(cat err.txt)"
    done
    ;;
  impossible)
    # Impossible designs are not input errors: they are counted infeasible and the sweep succeeds.
    { base; printf '[space.a]\ntopology.kind = expander\ntopology.degree = 4, 8\nstrategy.tp = 1, 3\n'; } > ok.ini
    "$MPIRUN" -n 2 "$TOPOSWEEP" sweep --config ok.ini --out ok.h5 > out.txt 2> err.txt ||
      fail "exit $?: $(cat err.txt)"
    grep -q "4 points (1 evaluated, 3 infeasible, 0 failed)" out.txt || fail "$(cat out.txt)"
    ;;
  unused)
    { base; printf 'dims = ring:4\n[space.sw]\ntopology.link_bandwidth = 100Gbps, 200Gbps\n'
      printf '[space.md]\ntopology.kind = multidim\ntopology.dims = ring:4,fc:8\n'; } > u.ini
    "$MPIRUN" -n 2 "$TOPOSWEEP" sweep --config u.ini --out u.h5 > out.txt 2> err.txt || fail "exit $?: $(cat err.txt)"
    [ "$(grep -c 'topology.dims' err.txt)" = 1 ] || fail "expected one warning about topology.dims: $(cat err.txt)"
    grep -q "warn: key topology.dims (set at u.ini:8) is not read by any point of sub-space sw$" err.txt ||
      fail "warning text: $(cat err.txt)"
    # The multidim sub-space does not read the switch's link bandwidth or degree: no warning for
    # defaults, only for what the user set.
    grep -q "link_bandwidth" err.txt && fail "warned about a key every sub-space reads: $(cat err.txt)"
    # A command warns the same way.
    "$TOPOSWEEP" simulate --set topology.kind=switch --set topology.dims=ring:4 > /dev/null 2> err.txt ||
      fail "simulate exit $?"
    grep -q "warn: key topology.dims (set at --set) is not used by this 'simulate'" err.txt || fail "$(cat err.txt)"
    ;;
  all_failed)
    { base; printf '[sweep]\nevaluator = synthetic\nsynthetic_fail = all\n[space.a]\ntopology.degree = 1, 2, 3, 4\n'; } > f.ini
    "$MPIRUN" -n 2 "$TOPOSWEEP" sweep --config f.ini --out f.h5 > out.txt 2> err.txt
    rc=$?
    [ $rc = 1 ] || fail "every point failed but exit $rc: $(cat err.txt)"
    grep -q "every one of the 4 points failed" err.txt || fail "$(cat err.txt)"
    grep -q "point 0: synthetic: every point fails" err.txt || fail "no first message: $(cat err.txt)"
    # Some failures among evaluated points are a normal run.
    { base; printf '[sweep]\nevaluator = synthetic\n[space.a]\ntopology.degree = 1, 2, 3, 4\n'; } > f.ini
    "$MPIRUN" -n 2 "$TOPOSWEEP" sweep --config f.ini --out g.h5 > /dev/null 2>&1 || fail "a normal synthetic run failed"
    ;;
  *)
    fail "unknown mode $MODE"
    ;;
esac
echo "PASS $MODE"
