# Shared helpers for the CLI test scripts: source this file.
# Each check prints one line; the script exits non-zero at the end if any check failed.
set -u
TS=${1:?path to toposweep}
SRC=${2:?source dir}
failures=0
passes=0
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# run_cmd ARGS...: runs toposweep, capturing stdout, stderr and the exit status.
run_cmd() {
  "$TS" "$@" > "$WORK/out" 2> "$WORK/err"
  status=$?
}

pass() { passes=$((passes + 1)); echo "ok: $*"; }
fail() { failures=$((failures + 1)); echo "FAIL: $*"; echo "  stdout: $(head -c 600 "$WORK/out")"; echo "  stderr: $(head -c 600 "$WORK/err")"; }

assert_status() {  # EXPECTED DESCRIPTION
  if [ "$status" -eq "$1" ]; then pass "$2 (exit $1)"; else fail "$2: exit $status, expected $1"; fi
}
assert_stderr_has() {  # FIXED-STRING DESCRIPTION
  if grep -qF -- "$1" "$WORK/err"; then pass "$2"; else fail "$2: stderr lacks '$1'"; fi
}
assert_stdout_has() {
  if grep -qF -- "$1" "$WORK/out"; then pass "$2"; else fail "$2: stdout lacks '$1'"; fi
}
assert_one_error_line() {  # DESCRIPTION: stderr is exactly one 'toposweep: error: ... (...)' line
  if [ "$(wc -l < "$WORK/err")" -eq 1 ] && grep -qE '^toposweep: error: .+ \(.+\)$' "$WORK/err"; then
    pass "$1: one-line error"
  else
    fail "$1: expected one 'toposweep: error: <what> (<where>)' line"
  fi
}
finish() {
  echo "$passes passed, $failures failed"
  [ "$failures" -eq 0 ]
}

# assert_top_replays OPTIMIZE_JSON K BASE_ARGS...: the K best strategies of an `optimize --target
# strategy --json` answer, each set as a plain point (every searched knob), replay with
# `simulate` to the reported iteration time bit for bit.
assert_top_replays() {
  local answer=$1 k=$2
  shift 2
  local i sets
  for ((i = 0; i < k; i++)); do
    sets=$(/usr/bin/python3 - "$answer" "$i" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["top"][int(sys.argv[2])]["strategy"]
keys = {"dp": s["dp"], "tp": s["tp"], "pp": s["pp"], "cp": s.get("cp", 1), "ep": s.get("ep", 1),
        "etp": s.get("etp", 0), "microbatches": s["microbatches"],
        "schedule": s["schedule"], "virtual_stages": s.get("virtual_stages", 1), "recompute": s["recompute"],
        "sequence_parallel": str(s["sequence_parallel"]).lower(), "tp_overlap": s["tp_overlap"],
        "dp_overlap": str(s["dp_overlap"]).lower(), "zero": s["zero_stage"],
        "batch_split": s.get("batch_split", "even"), "stage_split": s.get("stage_split", "even"),
        "compression": s.get("compression", "none")}
print(" ".join(f"--set strategy.{k}={v}" for k, v in keys.items()))
PY
)
    # shellcheck disable=SC2086
    run_cmd simulate "$@" $sets --json
    assert_status 0 "simulate top-$i"
    /usr/bin/python3 - "$answer" "$WORK/out" "$i" <<'PY' && pass "top-$i replays bit for bit" || fail "top-$i replay"
import json, sys
want = json.load(open(sys.argv[1]))["top"][int(sys.argv[3])]["iteration_time_s"]
got = json.load(open(sys.argv[2]))["iteration_time_s"]
assert got == want, (got, want)
PY
  done
}
