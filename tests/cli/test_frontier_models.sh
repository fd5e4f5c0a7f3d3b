#!/usr/bin/env bash
# `toposweep frontier` and the sweep summary on a file of three models: one frontier per model
# unless --pool-models (or sweep.frontier_by = none) asks to pool them; each checked against a
# brute-force frontier computed here from the file with h5py.
source "$(dirname "$0")/assert.sh"
PY=/usr/bin/python3

# bert-large (the base; sub-space base_model does not sweep model.name), resnet50 and vgg16; the
# synthetic evaluator hashes each point's configuration, model.name included.
cat > "$WORK/models.ini" << 'INI'
[sweep]
evaluator = synthetic
[model]
name = bert-large
[space.base_model]
topology.degree = 1,2,3,4,5,6,7,8
topology.link_bandwidth = 1Gbps,2Gbps,3Gbps,4Gbps,5Gbps,6Gbps
[space.models]
model.name = resnet50, vgg16
topology.degree = 1,2,3,4,5,6,7,8
topology.link_bandwidth = 1Gbps,2Gbps,3Gbps,4Gbps,5Gbps,6Gbps
INI
F=$WORK/m.h5

# brute MODE [AXIS]: the expected frontier(s) as JSON, from /points alone. MODE model: {model:
# [indices]}; pooled: [indices]; axis: {"model|value": [indices]}.
brute() {
  "$PY" - "$F" "$@" << 'PYEOF'
import configparser, json, sys
import h5py
path, mode = sys.argv[1], sys.argv[2]
axis = sys.argv[3] if len(sys.argv) > 3 else None
t = lambda v: v.decode() if isinstance(v, bytes) else str(v)
with h5py.File(path) as f:
    p = f["/points"][:]
    labels = [t(v) for v in f["/space/axes/model.name/values"][:]]
    values = [t(v) for v in f[f"/space/axes/{axis}/values"][:]] if axis else None
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read_string(t(f.attrs["config"]))
base = cfg["model"]["name"]
groups = {}
for row in p:
    if row["status"] != 0:
        continue
    model = base if row["model.name"] == 0xFFFFFFFF else labels[row["model.name"]]
    key = "all" if mode == "pooled" else model if mode == "model" else model + "|" + values[row[axis]]
    groups.setdefault(key, []).append(row)
def front(rows):
    return sorted(int(r["index"]) for r in rows
                  if not any(q["cost_usd"] <= r["cost_usd"] and q["iteration_time_s"] <= r["iteration_time_s"]
                             and (q["cost_usd"] < r["cost_usd"] or q["iteration_time_s"] < r["iteration_time_s"])
                             for q in rows))
out = {k: front(v) for k, v in groups.items()}
print(json.dumps(out["all"] if mode == "pooled" else out, sort_keys=True))
PYEOF
}
# py EXPR...: evaluate Python with `out` = the JSON on stdout of the last command.
check_json() {  # DESCRIPTION PYTHON-ASSERTION (j: the command's JSON, e: the expected JSON)
  if "$PY" -c "import json,sys; j=json.load(open('$WORK/out')); e=json.loads(sys.argv[1]); $2" "$EXPECTED" \
      > "$WORK/py.err" 2>&1; then
    pass "$1"
  else
    fail "$1: $(cat "$WORK/py.err")"
  fi
}

run_cmd sweep --config "$WORK/models.ini" --out "$F" --log-level warn
assert_status 0 "sweep of three models"
[ "$(grep -c '^frontier for model.name = ' "$WORK/out")" = 3 ] && pass "sweep summary: one frontier per model" \
  || fail "sweep summary: one frontier per model"
for m in bert-large resnet50 vgg16; do assert_stdout_has "frontier for model.name = $m (" "summary names $m"; done
"$PY" -c "import h5py; f=h5py.File('$F'); assert f['/frontier'].attrs['group_by'] == 'model.name'" \
  && pass "/frontier group_by = model.name" || fail "/frontier group_by attribute"

EXPECTED=$(brute model)
run_cmd frontier "$F" --json
assert_status 0 "frontier --json"
check_json "each model's group is its brute-force frontier" \
  "assert j['group_by'] == 'model.name' and j['frontier_by'] == 'model.name' and 'frontier' not in j; \
   assert [g['model'] for g in j['groups']] == ['bert-large', 'resnet50', 'vgg16']; \
   assert all(g['value'] == g['model'] for g in j['groups']); \
   assert {g['model']: [p['index'] for p in g['frontier']] for g in j['groups']} == e"
"$PY" -c "
import h5py, json
e = json.loads('''$EXPECTED''')
assert sorted(int(i) for i in h5py.File('$F')['/frontier'][:]) == sorted(i for v in e.values() for i in v)
" && pass "/frontier is the union of the per-model frontiers" || fail "/frontier is the union of the per-model frontiers"

run_cmd frontier "$F"
assert_status 0 "frontier (table)"
[ "$(grep -c '^frontier for model.name = ' "$WORK/out")" = 3 ] && pass "table: one heading per model" \
  || fail "table: one heading per model"
grep -q '^frontier (' "$WORK/out" && fail "table: no pooled frontier" || pass "table: no pooled frontier"

run_cmd frontier "$F" --csv
assert_status 0 "frontier --csv"
head -1 "$WORK/out" | grep -q '^model,index,subspace,' && pass "CSV leads with the model" || fail "CSV header"
[ "$(grep -c '^model,' "$WORK/out")" = 1 ] && pass "CSV header once" || fail "CSV header once"
[ "$(cut -d, -f1 "$WORK/out" | sort -u | tr '\n' ' ')" = "bert-large model resnet50 vgg16 " ] \
  && pass "CSV rows name their model" || fail "CSV rows name their model"

EXPECTED=$(brute pooled)
run_cmd frontier "$F" --pool-models --json
assert_status 0 "frontier --pool-models --json"
check_json "--pool-models: one brute-force frontier over every model" \
  "assert j['frontier_by'] == 'none' and 'groups' not in j; assert [p['index'] for p in j['frontier']] == e"
run_cmd frontier "$F" --pool-models
assert_stdout_has "3 models pooled by --pool-models" "pooled heading says so"

EXPECTED=$(brute axis topology.degree)
run_cmd frontier "$F" --group-by topology.degree --json
assert_status 0 "frontier --group-by --json"
check_json "--group-by: one brute-force frontier per (model, axis value)" \
  "assert j['group_by'] == 'topology.degree' and len(j['groups']) == 24; \
   assert [g['model'] for g in j['groups']] == sorted(g['model'] for g in j['groups']); \
   assert {g['model'] + '|' + g['value']: [p['index'] for p in g['frontier']] for g in j['groups']} == e"
run_cmd frontier "$F" --group-by topology.degree --csv
head -1 "$WORK/out" | grep -q '^model,group,index,' && pass "grouped CSV: model, group" || fail "grouped CSV header"

# --write: the per-model union by default, the pooled frontier with --pool-models.
run_cmd frontier "$F" --write --pool-models
assert_status 0 "frontier --write --pool-models"
EXPECTED=$(brute pooled)
"$PY" -c "
import h5py, json
f = h5py.File('$F')
assert f['/frontier'].attrs['group_by'] == 'none'
assert [int(i) for i in f['/frontier'][:]] == json.loads('$EXPECTED')
" && pass "--write --pool-models stores the pooled frontier" || fail "--write --pool-models"
run_cmd frontier "$F" --write
EXPECTED=$(brute model)
"$PY" -c "
import h5py, json
f = h5py.File('$F')
assert f['/frontier'].attrs['group_by'] == 'model.name'
assert sorted(int(i) for i in f['/frontier'][:]) == sorted(i for v in json.loads('''$EXPECTED''').values() for i in v)
" && pass "--write stores the per-model frontier" || fail "--write"

# Pooling asked for in the sweep itself.
run_cmd sweep --config "$WORK/models.ini" --set sweep.frontier_by=none --out "$WORK/p.h5" --log-level warn
assert_status 0 "sweep with sweep.frontier_by = none"
assert_stdout_has "3 models pooled, sweep.frontier_by = none" "pooled sweep summary says so"
run_cmd sweep --config "$WORK/models.ini" --set sweep.frontier_by=topology.kind --out "$WORK/bad.h5"
assert_status 2 "a bad sweep.frontier_by"
assert_one_error_line "a bad sweep.frontier_by"
assert_stderr_has "sweep.frontier_by" "the key is named"
[ -e "$WORK/bad.h5" ] && fail "a refused sweep wrote its output" || pass "nothing written"

# One model: the output keeps its single-frontier shape.
run_cmd sweep --config "$WORK/models.ini" --set space.models.model.name=bert-large --out "$WORK/one.h5" \
  --log-level warn
assert_status 0 "sweep of one model"
grep -q '^frontier (cost_usd,iteration_time_s): ' "$WORK/out" && pass "one model: one frontier, no model heading" \
  || fail "one model: one frontier"
run_cmd frontier "$WORK/one.h5" --json
EXPECTED=null
check_json "one model: JSON keeps its shape" "assert 'frontier' in j and 'groups' not in j and 'frontier_by' not in j"

finish
