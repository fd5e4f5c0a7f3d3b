"""Item 4: topology-aware placement (TAG) vs rank order. toposweep's METIS grouping (opt::metis_node_groups) is
not reachable from the CLI, so the placement is computed here — the exact best grouping of servers by brute
force over all partitions into equal groups, maximising the bandwidth inside groups — and applied by renumbering
the servers of the topology file, so that the rank-order groups of the simulator land on the chosen sets."""
import os

import tscli

SERVERS = 8


def partitions(items, size):
    """Every partition of `items` into blocks of `size` (first element always in the first block)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    from itertools import combinations
    for mates in combinations(rest, size - 1):
        block = (first,) + mates
        remaining = [x for x in rest if x not in mates]
        for p in partitions(remaining, size):
            yield [block] + p


def clusters():
    """Heterogeneous 8-server clusters: links between servers, (a, b, Gbps); plus a slow shared switch."""
    paired = [(s, s + 4, 400) for s in range(4)]  # NVLink-bridged server pairs, not adjacent in rank order
    islands = [(a, b, 200) for grp in ((0, 2, 4, 6), (1, 3, 5, 7)) for i, a in enumerate(grp) for b in grp[i + 1:]]
    return {"server pairs bridged at 400 Gbps (pairs s, s+4)": paired,
            "two 4-server islands at 200 Gbps (even / odd servers)": islands}


def best_grouping(links, size):
    bw = {}
    for a, b, g in links:
        bw[frozenset((a, b))] = bw.get(frozenset((a, b)), 0) + g
    def internal(p):
        return sum(g for blk in p for i, a in enumerate(blk) for b in blk[i + 1:] for g in [bw.get(frozenset((a, b)), 0)])
    return max(partitions(list(range(SERVERS)), size), key=internal)


def write_topology(path, links, label):
    with open(path, "w") as f:
        f.write(f"# {SERVERS} servers on a 25 Gbps switch {SERVERS} plus direct links; relabelled {label}\nswitch {SERVERS}\n")
        for s in range(SERVERS):
            f.write(f"{label[s]} {SERVERS} 25Gbps 1us\n{SERVERS} {label[s]} 25Gbps 1us\n")
        for a, b, g in links:
            f.write(f"{label[a]} {label[b]} {g}Gbps 1us\n{label[b]} {label[a]} {g}Gbps 1us\n")


WORKLOADS = [  # (name, sets, servers per model-parallel group)
    ("bert-large TP-8 (2 servers) x DP-4", {"model.name": "bert-large", "strategy.tp": 8, "strategy.dp": 4}, 2),
    ("bert-large TP-4 x PP-4 (4 servers) x DP-2", {"model.name": "bert-large", "strategy.tp": 4, "strategy.pp": 4,
                                                   "strategy.dp": 2, "strategy.microbatches": 16}, 4),
    ("gpt3-1.3b PP-2 (2 servers) x DP-16", {"model.name": "gpt3-1.3b", "strategy.pp": 2, "strategy.dp": 16,
                                            "strategy.microbatches": 2}, 2),
]


def run(workdir):
    os.makedirs(workdir, exist_ok=True)
    calls, keys, meta = [], [], {}
    for cname, links in clusters().items():
        for wname, sets, size in WORKLOADS:
            groups = best_grouping(links, size)
            label = [0] * SERVERS
            for pos, s in enumerate(s for blk in groups for s in blk):
                label[s] = pos
            tag = f"{len(meta)}"
            files = {}
            for mode, lab in (("rank order", list(range(SERVERS))), ("topology-aware", label)):
                path = os.path.join(workdir, f"placement-{tag}-{mode.split()[0]}.topo")
                write_topology(path, links, lab)
                files[mode] = path
                for model in ("analytical", "flow"):
                    calls.append(("simulate", {"topology.kind": "file", "topology.file": path, "server.gpus": 4,
                                               "simulate.network_model": model, **sets}, [], []))
                    keys.append((cname, wname, mode, model))
            meta[(cname, wname)] = groups
    res = dict(zip(keys, tscli.run_many(calls)))
    rows = []
    for (cname, wname), groups in meta.items():
        row = {"cluster": cname, "workload": wname, "groups": " ".join("{" + ",".join(map(str, g)) + "}" for g in groups)}
        for mode in ("rank order", "topology-aware"):
            for model in ("analytical", "flow"):
                r = res[(cname, wname, mode, model)]
                key = f"{mode.split()[0].split('-')[0]}_{model}_s"
                row[key] = float("nan") if isinstance(r, Exception) or not r.get("feasible", True) else r["iteration_time_s"]
                if isinstance(r, Exception):
                    row[f"{key}_error"] = str(r)[:200]
        rows.append(row)
    return rows
