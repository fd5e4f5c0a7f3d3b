#!/usr/bin/env bash
# The CLI framework: help, version, config files, --set, unit errors, exit codes.
source "$(dirname "$0")/assert.sh"

run_cmd --help
assert_status 0 "--help"
for c in topology collective simulate optimize sweep frontier models; do
  grep -q "^  $c " "$WORK/out" && pass "--help lists $c" || fail "--help lists $c"
done

run_cmd --version
assert_status 0 "--version"
grep -qE '^toposweep [0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-f]{7,}(-dirty)?\)$|^toposweep [0-9.]+ \(git unknown\)$' "$WORK/out" \
  && pass "--version prints version and git revision" || fail "--version format: $(cat "$WORK/out")"

for c in topology collective simulate optimize sweep frontier models; do
  run_cmd "$c" --help
  assert_status 0 "$c --help"
  assert_stdout_has "usage: toposweep $c" "$c --help shows usage"
  assert_stdout_has "--config" "$c --help lists common options"
done

run_cmd
assert_status 2 "no command"
run_cmd frobnicate
assert_status 2 "unknown command"
assert_stderr_has "unknown command 'frobnicate'" "unknown command named"

# A misspelt key from --set: exit 2, one line, key named, suggestion given.
run_cmd topology --set topology.degre=4
assert_status 2 "misspelt key via --set"
assert_one_error_line "misspelt key"
assert_stderr_has "unknown key 'topology.degre'" "misspelt key named"
assert_stderr_has "did you mean 'topology.degree'" "spelling suggested"

# A misspelt key in a config file: the error names file and line.
printf '[topology]\nkind = switch\nlink_bandwdth = 100Gbps\n' > "$WORK/bad.ini"
run_cmd topology --config "$WORK/bad.ini"
assert_status 2 "misspelt key in a file"
assert_one_error_line "misspelt key in a file"
assert_stderr_has "bad.ini:3" "file:line named"
assert_stderr_has "did you mean 'topology.link_bandwidth'" "file key suggestion"

# A missing config file.
run_cmd topology --config "$WORK/does-not-exist.ini"
assert_status 2 "missing config file"
assert_one_error_line "missing config file"
assert_stderr_has "does-not-exist.ini" "missing file named"

# INI syntax error.
printf '[topology\n' > "$WORK/syntax.ini"
run_cmd topology --config "$WORK/syntax.ini"
assert_status 2 "INI syntax error"
assert_stderr_has "syntax.ini:1" "syntax error location"

# Unknown option.
run_cmd models --no-such-option
assert_status 2 "unknown option"
assert_one_error_line "unknown option"

# Later files win, --set wins over files; --show-config shows origins.
printf '[topology]\ndegree = 4\n' > "$WORK/a.ini"
printf '[topology]\ndegree = 6\n' > "$WORK/b.ini"
run_cmd topology --config "$WORK/a.ini" --config "$WORK/b.ini" --show-config
assert_status 0 "--show-config"
grep -q "^degree = 6  ; .*b.ini:2" "$WORK/out" && pass "later file wins" || fail "later file wins"
run_cmd topology --config "$WORK/a.ini" --set topology.degree=8 --show-config
grep -q "^degree = 8  ; --set" "$WORK/out" && pass "--set wins over files" || fail "--set wins over files"

# A bare number where a bandwidth is required: exit 2 naming the key.
run_cmd topology --set topology.link_bandwidth=100
assert_status 2 "bare number for a bandwidth"
assert_one_error_line "bare number for a bandwidth"
assert_stderr_has "topology.link_bandwidth" "bandwidth key named"
assert_stderr_has "needs a unit" "unit demanded"

# Bad --log-level.
run_cmd models --log-level chatty
assert_status 2 "bad log level"

finish
