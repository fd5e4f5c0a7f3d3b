"""Every topology family everywhere the others go (issue 34, item 5), through the command line.

  python3 families_check.py TOPOSWEEP

For each family (16 GPUs: 2 per server), every collective algorithm of each operation runs and is
never faster than the bound its servers' network ports set: a server holding g of the n ranks,
with E bytes/s out of it (its NICs, counted by hand per family below), must move at least
  AllReduce      2 (Ns-1)/Ns x S        (the server's reduced buffer out, and the others' in)
  AllGather      (Ns-1)/Ns x S          (S is the output buffer, nccl-tests' convention)
  ReduceScatter  (Ns-1)/Ns x S          (S is the input buffer)
  AllToAll       g x (n-g)/n x S        (each of its ranks sends (n-g)/n of its buffer off the server)
over E (Ns servers). Then a training step simulates with both network models, and the exact strategy
search's answer on the family replays with `simulate` bit for bit.
"""
import json
import subprocess
import sys

TS = sys.argv[1]
LINK = 12.5e9  # 100 Gb/s
S = 64e6
GPUS = 2

# family name -> (--set pairs, servers, server egress E in bytes/s, by hand)
FAMILIES = {
    # degree NICs into one switch
    "switch": ({"topology.kind": "switch", "topology.servers": 8, "topology.degree": 2}, 8, 2 * LINK),
    # degree uplinks into the leaves
    "fattree": ({"topology.kind": "fattree", "topology.servers": 8, "topology.degree": 2, "topology.fattree_tiers": 2},
                8, 2 * LINK),
    # degree direct links
    "topoopt": ({"topology.kind": "topoopt", "topology.servers": 8, "topology.degree": 2}, 8, 2 * LINK),
    # 2 x 4 torus: the size-2 dimension has one link, the size-4 one two: 3 links
    "torus": ({"topology.kind": "torus", "topology.dims": "2,4"}, 8, 3 * LINK),
    "expander": ({"topology.kind": "expander", "topology.servers": 8, "topology.degree": 3}, 8, 3 * LINK),
    # one NIC per GPU on its rail
    "rail": ({"topology.kind": "rail", "topology.servers": 8}, 8, GPUS * LINK),
    "rail-only": ({"topology.kind": "rail", "topology.servers": 8, "topology.spine": "none"}, 8, GPUS * LINK),
    # three tiers of radix 4: 4 pods of one server block (both rails' leaves), cores above
    "rail, 3 tiers": ({"topology.kind": "rail", "topology.servers": 8, "topology.rail_tiers": 3,
                       "topology.rail_radix": 4}, 8, GPUS * LINK),
    # 3 groups x 2 routers x 2 servers, one router port per server
    "dragonfly": ({"topology.kind": "dragonfly", "topology.routers_per_group": 2, "topology.terminals_per_router": 2,
                   "topology.global_links_per_router": 1}, 12, LINK),
}
ALGORITHMS = {
    # multiring: the rings of a circulant's strides (topoopt only, added there)
    "allreduce": ("auto", "ring", "biring", "tree", "hierarchical", "halving_doubling", "forest"),
    "allgather": ("auto", "ring", "hierarchical", "forest"),
    "reducescatter": ("auto", "ring", "hierarchical"),
    "alltoall": ("auto", "direct", "pairwise", "hierarchical"),
}

failures = 0


def check(ok, what, detail=""):
    global failures
    if ok:
        print(f"ok: {what}")
    else:
        failures += 1
        print(f"FAIL: {what} {detail}")


def run(*args, sets=None):
    argv = [TS, *args]
    for k, v in (sets or {}).items():
        argv += ["--set", f"{k}={v}"]
    p = subprocess.run(argv + ["--json", "--log-level", "error"], capture_output=True, text=True)
    return p.returncode, (json.loads(p.stdout) if p.returncode == 0 else p.stderr.strip())


def bound(op, servers, egress):
    n = servers * GPUS
    if op == "allreduce":
        return 2 * (servers - 1) / servers * S / egress
    if op in ("allgather", "reducescatter"):
        return (servers - 1) / servers * S / egress
    return GPUS * (n - GPUS) / n * S / egress


for fam, (topo, servers, egress) in FAMILIES.items():
    base = {**topo, "topology.link_bandwidth": "100Gbps", "server.gpus": GPUS}
    for op, algorithms in ALGORITHMS.items():
        for alg in algorithms + (("multiring",) if fam == "topoopt" and op == "allreduce" else ()):
            rc, out = run("collective", "--op", op, "--algorithm", alg, "--bytes", "64MB", sets=base)
            if rc != 0:
                check(False, f"{fam} {op} {alg} runs", out)
                continue
            lb = bound(op, servers, egress)
            check(out["time_s"] >= lb * (1 - 1e-9), f"{fam} {op} {alg} >= its servers' port bound",
                  f"{out['time_s']} < {lb}")
    model = {**base, "model.name": "gpt3-1.3b", "model.global_batch": 2 * servers * GPUS, "strategy.tp": 2,
             "strategy.pp": 2, "strategy.dp": servers * GPUS // 4, "strategy.microbatches": 4}
    for nm in ("analytical", "flow"):
        rc, out = run("simulate", sets={**model, "simulate.network_model": nm})
        check(rc == 0 and out["feasible"] and out["iteration_time_s"] >= out["compute_time_s"] > 0,
              f"{fam} simulate, {nm} model", out if rc else "")
    search = {**base, "model.name": "gpt3-1.3b", "model.global_batch": 2 * servers * GPUS,
              "simulate.network_model": "analytical", "optimize.search": "exhaustive", "optimize.max_microbatches": 4,
              "optimize.recompute": "none", "optimize.zero_stages": "0", "optimize.schedules": "1f1b"}
    rc, out = run("optimize", "--target", "strategy", sets=search)
    if rc != 0:
        check(False, f"{fam} strategy search runs", out)
        continue
    s = out["top"][0]["strategy"]
    replay = {**base, "model.name": "gpt3-1.3b", "model.global_batch": 2 * servers * GPUS,
              "simulate.network_model": "analytical"}
    for k in ("dp", "tp", "pp", "microbatches", "schedule", "recompute", "tp_overlap"):
        replay[f"strategy.{k}"] = s[k]
    for k in ("sequence_parallel", "dp_overlap"):
        replay[f"strategy.{k}"] = str(s[k]).lower()
    replay["strategy.zero"] = s["zero_stage"]
    rc, sim = run("simulate", sets=replay)
    check(rc == 0 and sim["iteration_time_s"] == out["top"][0]["iteration_time_s"],
          f"{fam} strategy search's answer replays bit for bit", sim if rc else "")

print(f"{failures} failed")
assert failures == 0, f"{failures} of the checks above failed"
