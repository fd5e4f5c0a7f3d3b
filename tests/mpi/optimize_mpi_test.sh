#!/bin/bash
# `toposweep optimize --target strategy --json` split over MPI ranks: the same JSON, byte for byte
# (it has no timing fields), without mpirun and with 1, 2 and 3 ranks; ranks other than 0 print
# nothing. Mode: the bound (communication or compute). Environment: tests/mpi/CMakeLists.txt.
set -u
BOUND=${1:-communication}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/toposweep-mpi-optimize.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
fail() { echo "FAIL: $*" >&2; exit 1; }
args=(optimize --config "$TEST_DIR/optimize_small.ini" --target strategy --json --log-level warn
      --set optimize.bound="$BOUND")

"$TOPOSWEEP" "${args[@]}" > alone.json 2> alone.err || fail "without mpirun: exit $? ($(cat alone.err))"
[ -s alone.json ] || fail "without mpirun: no output"
[ ! -s alone.err ] || fail "without mpirun: stderr: $(cat alone.err)"
"$PYTHON" - alone.json <<'PY' || fail "the answer is not a 100-strategy top list"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["search"] == "exhaustive" and len(j["top"]) == 100, j
assert j["simulations"] > 0 and j["pruned"] > 0, j
PY
for n in 1 2 3; do
  "$MPIRUN" -n "$n" "$TOPOSWEEP" "${args[@]}" > "n$n.json" 2> "n$n.err" || fail "$n ranks: exit $? ($(cat "n$n.err"))"
  [ ! -s "n$n.err" ] || fail "$n ranks: stderr: $(cat "n$n.err")"
  [ "$(wc -l < "n$n.json")" -eq 1 ] || fail "$n ranks: $(wc -l < "n$n.json") lines on stdout, not 1 (rank 0's)"
  cmp -s alone.json "n$n.json" || fail "$n ranks: the JSON differs from the run without mpirun:
$(diff alone.json "n$n.json" | head -c 2000)"
done
echo "PASS: the same JSON without mpirun and on 1, 2, 3 ranks ($BOUND bound)"
