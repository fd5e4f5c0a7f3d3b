#!/usr/bin/env bash
# nccl-tests alltoall_perf bus bandwidth on H100 servers, predicted by `toposweep collective`
# against figures NCCL's maintainers published (issue 33, stretch goal). Exit 1 when a prediction
# is more than 10 % off. Usage: bash scripts/validation/alltoall_nccl.sh [build/toposweep]
#
# Sources (GitHub issue threads of NVIDIA/nccl-tests, answers by NCCL maintainers):
# - 8 x H100 over NVLink (one DGX/HGX H100): "With the protocol overhead (~20%) NCCL can get an
#   effective NVLink bandwidth of 370GB/s, which you can observe as BusBw when running
#   non-allreduce operations" (sjeaugey, https://github.com/NVIDIA/nccl-tests/issues/212,
#   2024-05-06). Caveat: server.device = h100's intra-node efficiency is a busbw / line-rate
#   figure of the same kind, so this row checks consistency more than it predicts.
# - 8 servers x 8 H100, one 400 Gb/s CX-7 NIC per GPU (8 x NDR per server): "CX-7 NICs at NDR
#   rate (400Gbps) should achieve up to 48-49GB/s per NIC" for all-to-all
#   (https://github.com/NVIDIA/nccl-tests/issues/267, 2025-01-23), and alltoall busbw on N nodes
#   is N/(N-1) x the network bandwidth per GPU times nccl-tests' (n-1)/n bus factor
#   (sjeaugey, https://github.com/NVIDIA/nccl-tests/issues/130, 2023-02-03): with 48.5 GB/s per
#   NIC, 48.5 x 8/7 x 63/64 = 54.6 GB/s at 64 GPUs. Links here run at line rate
#   (topology.link_efficiency = 1), no per-run factor.
set -euo pipefail
bin=${1:-build/toposweep}
check() {  # name, reference busbw GB/s, then collective arguments
  local name=$1 ref=$2; shift 2
  local got
  got=$("$bin" collective --op alltoall --bytes 8GB --json "$@" |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["busbw_Bps"] / 1e9)')
  /usr/bin/python3 - "$name" "$ref" "$got" <<'PY'
import sys
name, ref, got = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
err = got / ref - 1
print(f"{name}: predicted busbw {got:.1f} GB/s, published {ref:.1f} GB/s ({err:+.1%})")
sys.exit(0 if abs(err) <= 0.10 else 1)
PY
}
check "8 x H100, NVLink (nccl-tests#212)" 370 \
  --set topology.kind=switch --set topology.servers=1 --set server.gpus=8 --set server.device=h100
check "64 x H100, 8 x 400G IB per server, fat-tree (nccl-tests#267, #130)" 54.6 \
  --set topology.kind=fattree --set topology.servers=8 --set topology.degree=8 \
  --set topology.link_bandwidth=400Gbps --set server.gpus=8 --set server.device=h100
