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
