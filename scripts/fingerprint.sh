#!/usr/bin/env bash
# Writes what toposweep computes on a fixed set of cases into OUTDIR, one text file per case, so
# that two builds can be compared bit for bit (a refactor must leave every result unchanged):
#   bash scripts/fingerprint.sh build/toposweep /tmp/before
#   ... change, rebuild ...
#   bash scripts/fingerprint.sh build/toposweep /tmp/after && diff -r /tmp/before /tmp/after
# Cases: `models --json` of every built-in model; `simulate --json` of the example and validation
# design points with every strategy family (3-D, interleaved, ZeRO 1-3, recompute, sequence
# parallelism, TP overlap, per-layer degrees, tables), Llama 3 (GQA, RoPE, model.seq_len) and fp8; the
# optimizer's strategy search on GPT-3 175B / 64 A100; the quickstart and perf-1024 sweeps' /points (every field, %.17g). Timing fields
# (wall clock) are dropped. About 2 minutes on two cores; FINGERPRINT_QUICK=1 skips perf-1024 and
# the strategy search.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(realpath "${1:?usage: fingerprint.sh BINARY OUTDIR}")"
out="${2:?usage: fingerprint.sh BINARY OUTDIR}"
mkdir -p "$out"
cd "$here"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Drops the fields that measure this machine rather than the model (wall time, rates, versions).
strip() {
  /usr/bin/python3 -c '
import json, sys
drop = {"wall_s", "elapsed_s", "points_per_s", "version", "git_revision", "seconds", "evaluations_per_s"}
def clean(x):
    if isinstance(x, dict): return {k: clean(v) for k, v in x.items() if k not in drop}
    if isinstance(x, list): return [clean(v) for v in x]
    return x
print(json.dumps(clean(json.load(sys.stdin)), indent=1, sort_keys=True))'
}

# Every built-in model, described.
for m in $("$bin" models --json | /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); print(" ".join(x["name"] for x in (j["models"] if isinstance(j, dict) else j)))'); do
  "$bin" models "$m" --json | strip > "$out/model-$m.json"
done

# Design points: config file + overrides, each one strategy family.
sim() {  # name, then the arguments after `simulate`
  local name=$1; shift
  local rc=0
  "$bin" simulate "$@" --json --log-level warn > "$out/sim-$name.raw" 2> "$out/sim-$name.err" || rc=$?
  if [ $rc = 0 ]; then strip < "$out/sim-$name.raw" > "$out/sim-$name.json"; else echo "exit $rc" >> "$out/sim-$name.err"; fi
  rm -f "$out/sim-$name.raw"
}
g=inputs/optimize/gpt3-175b-64gpu.ini
sim gpt3-175b-interleaved --config $g
sim gpt3-175b-1f1b --config $g --set strategy.schedule=1f1b --set strategy.virtual_stages=1
sim gpt3-175b-full-recompute --config $g --set strategy.recompute=full --set strategy.sequence_parallel=false
sim gpt3-175b-tp-overlap --config $g --set strategy.tp_overlap=full --set strategy.tp=4 --set strategy.pp=8 --set strategy.dp=2
sim gpt3-175b-gpipe-zero1 --config $g --set strategy.schedule=gpipe --set strategy.virtual_stages=1 --set strategy.zero=1 \
  --set strategy.tp=8 --set strategy.pp=4 --set strategy.dp=2 --set simulate.network_model=flow
sim gpt3-175b-1024 --config inputs/optimize/gpt3-175b-1024gpu.ini
for z in 1 2 3; do
  sim gpt13-zero$z --set model.name=gpt3-1.3b --set strategy.zero=$z --set topology.kind=switch --set topology.servers=4 \
    --set server.gpus=4 --set strategy.microbatches=2 --set model.global_batch=32
done
sim gpt13-tp2-sp --set model.name=gpt3-1.3b --set strategy.tp=2 --set strategy.sequence_parallel=true \
  --set strategy.recompute=selective --set topology.kind=topoopt --set topology.servers=8 --set topology.degree=4 --set server.gpus=2
sim bert-dp --set model.name=bert-large --set topology.kind=fattree --set topology.servers=16 --set topology.degree=4
sim dlrm-tables --set model.name=dlrm --set topology.kind=topoopt --set topology.servers=16 --set topology.degree=4
sim vgg-layers --set model.name=vgg16 --set topology.kind=switch --set topology.servers=4 --set server.gpus=2 \
  --set strategy.layer_degrees="$(printf '1,%.0s' $(seq 1 15))8" 
for f in inputs/topologies/*.ini inputs/sweeps/validation/*.ini; do
  sim "$(basename "$f" .ini)" --config "$f"
done
for f in inputs/models/megatron-*.json inputs/models/example-gpt-30b.json; do
  sim "file-$(basename "$f" .json)" --set model.name="$f" --set topology.kind=switch --set topology.servers=64 --set server.gpus=8 \
    --set strategy.tp=8 --set strategy.pp=8 --set strategy.microbatches=8 --set strategy.recompute=selective \
    --set strategy.sequence_parallel=true
done
# Llama 3 (GQA, SwiGLU, RMSNorm, RoPE, untied 128k vocabulary) on H100s, unfused attention and
# flash with a longer model.seq_len.
llama=(--set server.device=h100 --set model.datatype=bf16 --set topology.kind=switch --set topology.servers=8
       --set server.gpus=8 --set strategy.tp=8 --set strategy.sequence_parallel=true)
sim llama3-70b "${llama[@]}" --set model.name=llama3-70b --set strategy.recompute=selective --set strategy.pp=8 \
  --set strategy.microbatches=16 --set model.global_batch=16
sim llama3-8b-32k "${llama[@]}" --set model.name=llama3-8b --set model.seq_len=32768 --set model.fused_attention=true \
  --set strategy.pp=2 --set strategy.microbatches=4 --set strategy.tp_overlap=full --set strategy.recompute=full
# FP8 (Transformer Engine's recipe: fp8 weight GEMMs, the rest bf16) on H100s.
sim gpt3-13b-fp8-h100 --set server.device=h100 --set model.datatype=fp8 --set model.name=gpt3-13b \
  --set topology.kind=switch --set topology.servers=4 --set server.gpus=8 --set strategy.tp=4 --set strategy.pp=2 \
  --set strategy.sequence_parallel=true --set strategy.microbatches=8 --set model.global_batch=32 \
  --set strategy.recompute=selective

sweep() {  # name, config
  rm -f "$out/$1.h5"
  "$bin" sweep --config "$2" --out "$out/$1.h5" --log-level warn > /dev/null
  /usr/bin/python3 - "$out/$1.h5" > "$out/sweep-$1.txt" <<'PY'
import h5py, sys
with h5py.File(sys.argv[1], "r") as f:
    p = f["/points"][...]
    names = p.dtype.names
    print(" ".join(names))
    for row in p:
        print(" ".join(("%.17g" % v) if isinstance(v, float) else str(v) for v in row.tolist()))
PY
  rm -f "$out/$1.h5"
}
sweep quickstart inputs/sweeps/quickstart.ini
if [ "${FINGERPRINT_QUICK:-0}" != 1 ]; then
  sweep perf-1024 inputs/sweeps/perf-1024.ini
  "$bin" optimize --config $g --target strategy --set optimize.search=exhaustive --json --log-level warn | strip \
    > "$out/optimize-gpt3-175b-64.json"
fi
for f in inputs/models/example-mlp.json inputs/models/example-recsys.json; do
  sim "file-$(basename "$f" .json)" --set model.name="$f" --set topology.kind=topoopt --set topology.servers=8 --set topology.degree=2
done

echo "fingerprint: $(ls "$out" | wc -l) files in $out"
