#!/usr/bin/env bash
# `collective --op alltoall --deepep TOP_K,EXPERTS[,GROUPS,GROUP_TOPK]` (docs/collectives.md): DeepEP's
# dispatch, one copy of a token per destination node, against fractions worked out by hand, and bad
# routings (exit 2, one line naming --deepep).
source "$(dirname "$0")/assert.sh"
PY=/usr/bin/python3

# Two servers of 4 GPUs on a switch at 10 Gb/s with no latency: the All-to-All is network-bound, so its
# time scales by the fraction. Mixtral's routing (top 2 of 8 experts, 4 a server): a token's two
# experts are both on the other server with probability C(4,2)/C(8,2) = 6/28, so it sends
# 2 x (1 - 6/28) = 22/14 copies across where NCCL sends 2 x 4/8 = 1: 11/14. With 2 groups (one a
# server) and 1 allowed, both experts are on one server, the other one half the time: 1/2.
net=(--set topology.kind=switch --set topology.servers=2 --set server.gpus=4 --set server.device=h100
     --set topology.link_bandwidth=10Gbps --set topology.link_latency=0s --op alltoall --bytes 1GB --json)
run_cmd collective "${net[@]}"
assert_status 0 "plain alltoall"
cp "$WORK/out" "$WORK/plain.json"
for case in "2,8 11/14" "2,8,2,1 1/2" "2,8,2,2 11/14" "2,8,4,1 11/14"; do
  set -- $case
  run_cmd collective "${net[@]}" --deepep "$1"
  assert_status 0 "--deepep $1"
  $PY -c "
import json; from fractions import Fraction
p = json.load(open('$WORK/plain.json')); d = json.load(open('$WORK/out')); f = float(Fraction('$2'))
assert abs(d['network_fraction'] - f) < 1e-12, d
assert abs(d['time_s'] / p['time_s'] - f) < 1e-9, (d['time_s'], p['time_s'])
assert 'network_fraction' not in p, p
" && pass "--deepep $1: $2 of the network bytes and time" || fail "--deepep $1: $(head -c 300 "$WORK/out")"
done

# Bad routings name the option.
bad() {  # ARGS... ; the last word of the message expected in stderr
  local expect=$1
  shift
  run_cmd collective "$@"
  assert_status 2 "collective $*"
  assert_one_error_line "collective $*"
  assert_stderr_has "$expect" "collective $*: says '$expect'"
}
bad "(--deepep)" "${net[@]}" --deepep 2,8,3,1
bad "(--deepep)" "${net[@]}" --deepep 2,8,8,1
bad "(--deepep)" "${net[@]}" --deepep 9,8
bad "(--deepep)" "${net[@]}" --deepep 2
bad "(--deepep)" --op allreduce --deepep 2,8

finish
