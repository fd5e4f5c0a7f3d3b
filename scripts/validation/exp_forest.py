"""Item 3: topology-adaptive AllReduce (Zhang, Wu, Li, INFOCOM'21): forest vs ring vs tree on heterogeneous
graphs, achieved time vs the cut bound of docs/collectives.md, "forest" (reported by toposweep, and recomputed here by
brute force over vertex subsets where the graph is small enough)."""
import itertools
import os
import random

import tscli

ALGORITHMS = ["ring", "tree", "multiring", "forest"]
# Fidelity (item 6): one training iteration, pure data parallel over the graph's GPUs, ring vs forest AllReduce,
# analytical vs flow model.
SIM_MODEL = "bert-topoopt"
SIM_ALGORITHMS = ["ring", "forest"]
NETWORK_MODELS = ["analytical", "flow"]
BYTES = 1e9
UNITS = {"GB/s": 1e9, "Gbps": 1e9 / 8}


def parse_topo(path):
    """Edge list -> (compute nodes, switches, {(u, v): bandwidth_Bps})."""
    arcs, switches, nodes = {}, set(), set()
    for line in open(path):
        line = line.split("#")[0].split()
        if not line:
            continue
        if line[0] == "switch":
            switches.update(int(x) for x in line[1:])
            continue
        u, v, bw = int(line[0]), int(line[1]), line[2]
        unit = next(k for k in UNITS if bw.endswith(k))
        arcs[(u, v)] = arcs.get((u, v), 0.0) + float(bw[: -len(unit)]) * UNITS[unit]
        nodes.update((u, v))
    return sorted(nodes - switches), sorted(switches), arcs


def brute_force_allreduce_bound(path, bytes_):
    """max over S (S leaves out a compute node, holds at least one) of |S ∩ Vc| / B+(S), times
    2 (RS + AG) x bytes/N. Exponential: only for graphs of at most 16 vertices."""
    compute, switches, arcs = parse_topo(path)
    vertices = compute + switches
    if len(vertices) > 16:
        return None
    n = len(compute)
    worst = 0.0
    index = {v: i for i, v in enumerate(vertices)}
    for mask in range(1, 1 << len(vertices)):
        inside = sum(1 for c in compute if mask >> index[c] & 1)
        if inside == 0 or inside == n:
            continue
        out = sum(bw for (u, v), bw in arcs.items() if mask >> index[u] & 1 and not mask >> index[v] & 1)
        worst = max(worst, inside / out if out > 0 else float("inf"))
    return 2 * bytes_ / n * worst


def random_heterogeneous(path, n, extra_edges, seed):
    """A connected random graph on n GPUs: a random spanning tree plus extra edges, each undirected link
    at a bandwidth drawn from {10, 25, 50, 100} GB/s (NIC / PCIe / NVLink-like)."""
    rng = random.Random(seed)
    order = list(range(n))
    rng.shuffle(order)
    edges = {tuple(sorted((order[i], order[rng.randrange(i)]))) for i in range(1, n)}
    while len(edges) < n - 1 + extra_edges:
        a, b = rng.sample(range(n), 2)
        edges.add(tuple(sorted((a, b))))
    with open(path, "w") as f:
        f.write(f"# random heterogeneous graph: n={n}, extra edges={extra_edges}, seed={seed}\n")
        for a, b in sorted(edges):
            bw = rng.choice([10, 25, 50, 100])
            f.write(f"{a} {b} {bw}GB/s 1us\n{b} {a} {bw}GB/s 1us\n")


def degraded(src, dst, pair, factor):
    """Copy of src with both directions of the link `pair` scaled by factor (contention by another job)."""
    with open(src) as f, open(dst, "w") as out:
        out.write(f"# {os.path.basename(src)} with link {pair[0]}-{pair[1]} at {factor:g} of its bandwidth\n")
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[0] != "switch" and not parts[0].startswith("#") and \
                    {int(parts[0]), int(parts[1])} == set(pair):
                bw = parts[2]
                unit = next(k for k in UNITS if bw.endswith(k))
                parts[2] = f"{float(bw[: -len(unit)]) * factor:g}{unit}"
                line = " ".join(parts) + "\n"
            out.write(line)


def cli_message(err):
    """The tool's own error line, without the command (its paths differ from run to run)."""
    return str(err).split(" -> ", 1)[-1][:300]


def cases(workdir):
    os.makedirs(workdir, exist_ok=True)
    out = {"DGX-1 hybrid cube-mesh": os.path.join(tscli.INPUTS, "dgx1-cube-mesh.topo"),
           "two 8-GPU servers + NICs": os.path.join(tscli.INPUTS, "two-servers-nics.topo")}
    dg = os.path.join(workdir, "dgx1-degraded.topo")
    degraded(out["DGX-1 hybrid cube-mesh"], dg, (0, 4), 0.1)
    out["DGX-1, link 0-4 at 10 %"] = dg
    fc = os.path.join(workdir, "fc8.topo")
    with open(fc, "w") as f:
        f.write("# 8 GPUs fully connected at 25 GB/s\n")
        for a, b in itertools.permutations(range(8), 2):
            f.write(f"{a} {b} 25GB/s 1us\n")
    fcd = os.path.join(workdir, "fc8-degraded.topo")
    degraded(fc, fcd, (0, 1), 0.1)
    out["8 GPUs fully connected"] = fc
    out["8 GPUs fully connected, link 0-1 at 10 %"] = fcd
    for seed in range(1, 6):
        p = os.path.join(workdir, f"random-{seed}.topo")
        random_heterogeneous(p, 10, 8, seed)
        out[f"random heterogeneous n=10 (seed {seed})"] = p
    return out


def run(workdir):
    topo = cases(workdir)
    calls, keys = [], []
    for name, path in topo.items():
        for alg in ALGORITHMS:
            calls.append(("collective", {"server.gpus": 1}, [],
                          ["--topology-file", path, "--algorithm", alg, "--bytes", f"{BYTES:g}B"]))
            keys.append((name, alg))
        for alg in SIM_ALGORITHMS:
            for model in NETWORK_MODELS:
                calls.append(("simulate", {"topology.kind": "file", "topology.file": path, "server.gpus": 1,
                                           "model.name": SIM_MODEL, "collective.algorithm": alg,
                                           "simulate.network_model": model}, [], []))
                keys.append((name, f"sim_{alg}_{model}"))
    results = dict(zip(keys, tscli.run_many(calls)))
    rows = []
    for name, path in topo.items():
        forest = results[(name, "forest")]
        bound = None if isinstance(forest, Exception) else forest.get("optimal_time_s")
        rel = os.path.relpath(path, tscli.SOURCE_DIR)
        row = {"topology": name, "file": rel if not rel.startswith("..") else f"(generated) {os.path.basename(path)}",
               "optimal_time_s": bound,
               "brute_force_bound_s": brute_force_allreduce_bound(path, BYTES)}
        for alg in ALGORITHMS:
            r = results[(name, alg)]
            if isinstance(r, Exception):
                row[f"{alg}_error"] = cli_message(r)
                continue
            row[f"{alg}_time_s"] = r["time_s"]
            row[f"{alg}_algbw_GBps"] = r["algbw_Bps"] / 1e9
            if alg == "forest":
                row["forest_trees"] = r.get("trees")
                row["forest_packing_efficiency"] = r.get("packing_efficiency")
        for alg in SIM_ALGORITHMS:
            for model in NETWORK_MODELS:
                r = results[(name, f"sim_{alg}_{model}")]
                key = f"sim_{alg}_{model}_s"
                row[key] = float("nan") if isinstance(r, Exception) else r["iteration_time_s"]
                if isinstance(r, Exception):
                    row[f"{key}_error"] = cli_message(r)
        rows.append(row)
    return rows
