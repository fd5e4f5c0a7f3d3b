#!/usr/bin/python3
"""ASTRA-sim side by side (docs/interop.md, "ASTRA-sim"): a few design points exported with
`toposweep export astra-sim`, run through ASTRA-sim's analytical congestion-unaware backend, and
compared with `toposweep simulate` on the same keys (ASTRA-sim's system costs switched on):
iteration time, and per collective / transfer the median time on rank 0.

usage: scripts/validation/astra_side_by_side.py ASTRA_SIM_CHECKOUT [--work DIR] [--jobs N]
                                                 [--case NAME ...] [--no-build]

ASTRA_SIM_CHECKOUT is an ASTRA-sim source tree with its submodules; toposweep does not depend on
it. Get one with
    git clone --recursive https://github.com/astra-sim/astra-sim.git
    git -C astra-sim checkout c459ab6 && git -C astra-sim submodule update --init --recursive
(the numbers in docs/interop.md were measured at c459ab6). It needs cmake, a C++17 compiler and
protobuf (Debian: cmake g++ libprotobuf-dev protobuf-compiler). The script builds the
congestion-unaware binary into ASTRA_SIM_CHECKOUT/build/astra_analytical/build as ASTRA-sim's own
build/astra_analytical/build.sh does (protoc on Chakra's et_def.proto, then cmake), with
--jobs parallel jobs (default 1), unless the binary is already there.
$TOPOSWEEP names the toposweep binary (default build/toposweep).
"""
import argparse
import collections
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tscli  # noqa: E402

BINARY = "build/astra_analytical/build/bin/AstraSim_Analytical_Congestion_Unaware"

# ASTRA-sim's Ring_4chunks system costs (docs/collectives.md): 4 chunks, 10 ns per message,
# 1600 GB/s local memory. The design points: a small GPT (gpt3-125m, batch 16) on multidim networks.
COSTS = {"collective.chunks": 4, "collective.endpoint_delay": "10ns", "collective.reduction_bandwidth": "1600GB/s"}
GPT = {"model.name": "gpt3-125m", "model.global_batch": 16, **COSTS}
CASES = {
    "dp8_ring": ("pure DP 8 on ring:8 (50 GiB/s, 500 ns)",
                 {**GPT, "topology.kind": "multidim", "topology.dims": "ring:8",
                  "topology.dim_bandwidth": "50GiB/s", "topology.dim_latency": "500ns"}),
    "tp2_dp4_2d": ("TP 2 x DP 4 on ring:2 x ring:4 (200, 50 GiB/s; 100, 500 ns)",
                   {**GPT, "topology.kind": "multidim", "topology.dims": "ring:2,ring:4",
                    "topology.dim_bandwidth": "200GiB/s,50GiB/s", "topology.dim_latency": "100ns,500ns",
                    "strategy.tp": 2}),
    "tp2_dp4_nolat": ("the same with zero link latency and endpoint delay (ASTRA-sim's least, 1 ns)",
                      {**GPT, "topology.kind": "multidim", "topology.dims": "ring:2,ring:4",
                       "topology.dim_bandwidth": "200GiB/s,50GiB/s", "topology.dim_latency": "0ns",
                       "collective.endpoint_delay": "0ns", "strategy.tp": 2}),
    "tp2_dp8_3d": ("TP 2 x DP 8 on ring:2 x ring:2 x ring:4 (200, 100, 50 GiB/s)",
                   {**GPT, "topology.kind": "multidim", "topology.dims": "ring:2,ring:2,ring:4",
                    "topology.dim_bandwidth": "200GiB/s,100GiB/s,50GiB/s",
                    "topology.dim_latency": "100ns,200ns,500ns", "strategy.tp": 2}),
    "dp16_3d": ("pure DP 16 on the same 3-D network (one group of every NPU)",
                {**GPT, "model.global_batch": 32, "topology.kind": "multidim", "topology.dims": "ring:2,ring:2,ring:4",
                 "topology.dim_bandwidth": "200GiB/s,100GiB/s,50GiB/s",
                 "topology.dim_latency": "100ns,200ns,500ns"}),
    "dp8_fc_sw": ("pure DP 8 on fc:4 x switch:2 (300, 50 GiB/s; 100 ns, 1 us)",
                  {**GPT, "topology.kind": "multidim", "topology.dims": "fc:4,switch:2",
                   "topology.dim_bandwidth": "300GiB/s,50GiB/s", "topology.dim_latency": "100ns,1us"}),
    "dp8_switch": ("pure DP 8 on a switch of one-GPU servers (2 x 100 Gb/s, 1 us per link)",
                   {**GPT, "topology.kind": "switch", "topology.servers": 8, "server.gpus": 1,
                    "topology.degree": 2, "topology.link_bandwidth": "100Gbps", "topology.link_latency": "1us"}),
    "tp2_pp2_dp2": ("TP 2 x PP 2 x DP 2 on ring:2 x ring:2 x ring:2 (200, 100, 50 GiB/s), 4 microbatches",
                    {**GPT, "topology.kind": "multidim", "topology.dims": "ring:2,ring:2,ring:2",
                     "topology.dim_bandwidth": "200GiB/s,100GiB/s,50GiB/s",
                     "topology.dim_latency": "100ns,200ns,500ns", "strategy.tp": 2, "strategy.pp": 2,
                     "strategy.microbatches": 4}),
    "tp2_dp2_pp4": ("TP 2 x DP 2 x PP 4 on ring:2 x ring:2 x ring:4 (200, 100, 50 GiB/s), 8 microbatches",
                    {**GPT, "model.global_batch": 32, "topology.kind": "multidim",
                     "topology.dims": "ring:2,ring:2,ring:4", "topology.dim_bandwidth": "200GiB/s,100GiB/s,50GiB/s",
                     "topology.dim_latency": "100ns,200ns,500ns", "strategy.tp": 2, "strategy.pp": 4,
                     "strategy.microbatches": 8}),
    "tp4_fc_dp2": ("TP 4 x DP 2 on fc:4 x ring:2 (300, 50 GiB/s)",
                   {**GPT, "topology.kind": "multidim", "topology.dims": "fc:4,ring:2",
                    "topology.dim_bandwidth": "300GiB/s,50GiB/s", "topology.dim_latency": "100ns,500ns",
                    "strategy.tp": 4}),
}


def build(checkout, jobs):
    binary = os.path.join(checkout, BINARY)
    if os.path.exists(binary):
        return binary
    proto = os.path.join(checkout, "extern/graph_frontend/chakra/schema/protobuf")
    if not os.path.exists(os.path.join(proto, "et_def.proto")):
        sys.exit(f"{checkout}: no extern/graph_frontend/chakra (clone with --recursive, see --help)")
    if not os.path.exists(os.path.join(proto, "et_def.pb.cc")):
        subprocess.run(["protoc", "et_def.proto", f"--proto_path={proto}", f"--cpp_out={proto}"], check=True)
    out = os.path.join(checkout, "build/astra_analytical/build")
    os.makedirs(out, exist_ok=True)
    subprocess.run(["cmake", "..", "-DBUILDTARGET=congestion_unaware"], cwd=out, check=True)
    subprocess.run(["cmake", "--build", ".", "-j", str(jobs)], cwd=out, check=True)
    return binary


def astra_run(binary, export, where):
    """Runs ASTRA-sim on an export (trace logging on, in its own directory); returns the largest
    finish time over ranks (s) and rank 0's per-node (issue, finish) times from its debug log."""
    run_dir = os.path.join(where, "astra_run")
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    system = json.load(open(export["system"]))
    system["trace-enabled"] = 1  # issue and callback of every node in log/log.log
    traced = os.path.join(run_dir, "system.json")
    json.dump(system, open(traced, "w"), indent=2)
    argv = [binary, f"--workload-configuration={export['workload']}",
            f"--comm-group-configuration={export['comm_groups']}", f"--system-configuration={traced}",
            f"--remote-memory-configuration={export['remote_memory']}",
            f"--network-configuration={export['network']}"]
    proc = subprocess.run(argv, cwd=run_dir, capture_output=True, text=True)
    open(os.path.join(run_dir, "stdout.txt"), "w").write(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise RuntimeError(f"ASTRA-sim exit {proc.returncode}: {(proc.stdout + proc.stderr)[-600:]}")
    finished = [int(c) for c in re.findall(r"sys\[\d+\] finished, (\d+) cycles", proc.stdout)]
    if len(finished) != export["ranks"]:
        raise RuntimeError(f"ASTRA-sim reported {len(finished)} of {export['ranks']} ranks: {proc.stdout[-600:]}")
    spans = {}
    log = os.path.join(run_dir, "log", "log.log")
    pat = re.compile(r"(issue|callback),sys->id=0, tick=(\d+), node->id=(\d+), node->name=(.*?), node->type=(\d+)")
    for line in open(log) if os.path.exists(log) else []:
        m = pat.search(line)
        if m:
            what, tick, nid, name, kind = m.groups()
            s = spans.setdefault(int(nid), {"name": name, "type": int(kind)})
            s[what] = int(tick) * 1e-9
    return max(finished) * 1e-9, spans


def toposweep_spans(trace_file):
    """toposweep's Chrome trace: task id -> (name, duration in s) of each communication task."""
    t = json.load(open(trace_file))
    events = t["traceEvents"] if isinstance(t, dict) else t
    return {e["args"]["task"]: (e["name"], e["dur"] * 1e-6) for e in events
            if e.get("ph") == "X" and e.get("cat") == "comm"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkout")
    ap.add_argument("--work", default="astra_side_by_side")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--case", action="append", choices=sorted(CASES))
    ap.add_argument("--no-build", action="store_true")
    a = ap.parse_args()
    checkout = os.path.abspath(a.checkout)
    if not os.path.isdir(os.path.join(checkout, "astra-sim")):
        sys.exit(f"{checkout} is not an ASTRA-sim checkout; get one with\n"
                 "  git clone --recursive https://github.com/astra-sim/astra-sim.git\n"
                 "  git -C astra-sim checkout c459ab6 && git -C astra-sim submodule update --init --recursive")
    binary = os.path.join(checkout, BINARY) if a.no_build else build(checkout, a.jobs)
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    rows = []
    for name in a.case or list(CASES):
        title, sets = CASES[name]
        where = os.path.join(work, name)
        shutil.rmtree(where, ignore_errors=True)
        export = tscli.run("export", sets, extra=["astra-sim", "--out", os.path.join(where, "export")])
        trace = os.path.join(where, "toposweep_trace.json")
        sim = tscli.run("simulate", sets, extra=["--trace", trace])
        try:
            astra_t, spans = astra_run(binary, export, where)
        except RuntimeError as e:
            print(f"{name}: {e}")
            rows.append((name, title, None, sim["iteration_time_s"]))
            continue
        rows.append((name, title, astra_t, sim["iteration_time_s"]))
        # Per collective / transfer on rank 0, matched by node id = task id: ASTRA-sim's issue ->
        # callback against toposweep's task duration (both include waiting for the group's peers).
        ours = toposweep_spans(trace)
        pairs = collections.defaultdict(list)
        for nid, sp in spans.items():
            if sp["type"] in (5, 7) and "issue" in sp and "callback" in sp and nid in ours:
                pairs[ours[nid][0]].append((sp["callback"] - sp["issue"], ours[nid][1]))
        print(f"\n{name}: {title}")
        print(f"  {'task (rank 0)':20s} {'n':>3s} {'ASTRA-sim ms':>13s} {'toposweep ms':>13s} "
              f"{'diff (median)':>14s} {'diff range':>18s}")
        for task, pr in sorted(pairs.items()):
            d = [(tt - at) / at * 100 for at, tt in pr]
            print(f"  {task:20s} {len(pr):3d} {statistics.median(a for a, _ in pr) * 1e3:13.4f} "
                  f"{statistics.median(t for _, t in pr) * 1e3:13.4f} {statistics.median(d):+13.2f}% "
                  f"{min(d):+8.2f}..{max(d):+.2f}%")
    print(f"\n{'case':14s} {'ASTRA-sim ms':>13s} {'toposweep ms':>13s} {'diff':>8s}")
    for name, title, at, tt in rows:
        fa = f"{at * 1e3:13.4f}" if at is not None else f"{'failed':>13s}"
        diff = f"{(tt - at) / at * 100:+.2f} %" if at else ""
        print(f"{name:14s} {fa} {tt * 1e3:13.4f} {diff:>8s}")


if __name__ == "__main__":
    main()
