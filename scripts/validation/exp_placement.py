"""Item 4: topology-aware placement (TAG) vs rank order, through toposweep's own METIS placement:
`simulate --set optimize.placement=metis|rank_order` (analytical and flow) and `optimize --target placement`.
An independent check: the best grouping by brute force over every partition of the servers into equal groups
(maximum bandwidth inside the groups), whose internal bandwidth METIS should reach on these small clusters."""
import os
from itertools import combinations

import tscli

SERVERS = 8


def partitions(items, size):
    """Every partition of `items` into blocks of `size` (first element always in the first block)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for mates in combinations(rest, size - 1):
        remaining = [x for x in rest if x not in mates]
        for p in partitions(remaining, size):
            yield [(first,) + mates] + p


def clusters():
    """Heterogeneous 8-server clusters: direct links between servers (a, b, Gbps) beside a 25 Gbps switch."""
    paired = [(s, s + 4, 400) for s in range(4)]  # NVLink-bridged server pairs, not adjacent in rank order
    islands = [(a, b, 200) for grp in ((0, 2, 4, 6), (1, 3, 5, 7)) for i, a in enumerate(grp) for b in grp[i + 1:]]
    return {"server pairs bridged at 400 Gbps (pairs s, s+4)": paired,
            "two 4-server islands at 200 Gbps (even / odd servers)": islands}


def pair_bandwidth(links):
    bw = {}
    for a, b, g in links:
        bw[frozenset((a, b))] = bw.get(frozenset((a, b)), 0) + g
    return bw


def internal_Gbps(links, groups):
    """Bandwidth inside the groups, each direct server pair counted once (Gbps, one direction)."""
    bw = pair_bandwidth(links)
    return sum(bw.get(frozenset((a, b)), 0) for blk in groups for i, a in enumerate(blk) for b in blk[i + 1:])


def rank_order_groups(tp, dp, pp, gpus, grouped):
    """Server sets of the TP (or PP) groups in Megatron rank order, rank = t + tp*(d + dp*p), server = rank // gpus."""
    groups = {}
    for p in range(pp):
        for d in range(dp):
            for t in range(tp):
                key = (d, p) if grouped == "tp" else (t, d)
                groups.setdefault(key, set()).add((t + tp * (d + dp * p)) // gpus)
    return sorted({tuple(sorted(g)) for g in groups.values()})


def best_grouping(links, size):
    return max(partitions(list(range(SERVERS)), size), key=lambda p: internal_Gbps(links, p))


def write_topology(path, links):
    with open(path, "w") as f:
        f.write(f"# {SERVERS} servers on a 25 Gbps switch {SERVERS} plus direct server links\nswitch {SERVERS}\n")
        for s in range(SERVERS):
            f.write(f"{s} {SERVERS} 25Gbps 1us\n{SERVERS} {s} 25Gbps 1us\n")
        for a, b, g in links:
            f.write(f"{a} {b} {g}Gbps 1us\n{b} {a} {g}Gbps 1us\n")


WORKLOADS = [  # (name, sets, servers per model-parallel group)
    ("bert-large TP-8 (2 servers) x DP-4", {"model.name": "bert-large", "strategy.tp": 8, "strategy.dp": 4}, 2),
    ("bert-large TP-4 x PP-4 (4 servers) x DP-2", {"model.name": "bert-large", "strategy.tp": 4, "strategy.pp": 4,
                                                   "strategy.dp": 2, "strategy.microbatches": 16}, 4),
    ("gpt3-1.3b PP-2 (2 servers) x DP-16", {"model.name": "gpt3-1.3b", "strategy.pp": 2, "strategy.dp": 16,
                                            "strategy.microbatches": 2}, 2),
]
PLACEMENTS = ("rank_order", "metis")
MODELS = ("analytical", "flow")


def run(workdir):
    os.makedirs(workdir, exist_ok=True)
    calls, keys, meta = [], [], {}
    for ci, (cname, links) in enumerate(clusters().items()):
        path = os.path.join(workdir, f"placement-{ci}.topo")
        write_topology(path, links)
        for wname, sets, size in WORKLOADS:
            base = {"topology.kind": "file", "topology.file": path, "server.gpus": 4, **sets}
            for placement in PLACEMENTS:
                for model in MODELS:
                    calls.append(("simulate", {**base, "optimize.placement": placement,
                                               "simulate.network_model": model}, [], []))
                    keys.append((cname, wname, placement, model))
            calls.append(("optimize", base, [], ["--target", "placement"]))
            keys.append((cname, wname, "optimize", ""))
            meta[(cname, wname)] = (links, size)
    res = dict(zip(keys, tscli.run_many(calls)))
    rows = []
    for (cname, wname), (links, size) in meta.items():
        brute = best_grouping(links, size)
        row = {"cluster": cname, "workload": wname,
               "brute_force_groups": " ".join("{" + ",".join(map(str, g)) + "}" for g in brute),
               "brute_force_internal_Gbps": internal_Gbps(links, brute)}
        for placement in PLACEMENTS:
            for model in MODELS:
                r = res[(cname, wname, placement, model)]
                key = f"{placement}_{model}_s"
                if isinstance(r, Exception):
                    row[key], row[f"{key}_error"] = float("nan"), str(r)[:200]
                    continue
                row[key] = r["iteration_time_s"] if r.get("feasible", True) else float("nan")
                if placement == "metis" and model == "analytical":
                    groups = r.get("placement_groups") or []
                    row["metis_placement"] = r.get("placement")
                    row["metis_groups"] = " ".join("{" + ",".join(map(str, sorted(g))) + "}" for g in sorted(groups))
                    row["metis_internal_Gbps"] = internal_Gbps(links, groups) if groups else 0
        opt = res[(cname, wname, "optimize", "")]
        st = WORKLOADS[[w for w, _, _ in WORKLOADS].index(wname)][1]
        grouped = "tp" if st.get("strategy.tp", 1) > 4 else "pp"
        rog = rank_order_groups(st.get("strategy.tp", 1), st.get("strategy.dp", 1), st.get("strategy.pp", 1), 4, grouped)
        row["rank_order_groups"] = " ".join("{" + ",".join(map(str, g)) + "}" for g in rog)
        row["rank_order_internal_Gbps"] = internal_Gbps(links, rog)
        if isinstance(opt, Exception):
            row["optimize_error"] = str(opt)[:200]
        else:
            row.update({"optimize_placement": opt.get("placement"), "optimize_grouped": opt.get("placement_grouped"),
                        "optimize_time_s": opt["iteration_time_s"],
                        "optimize_baseline_time_s": opt["baseline_iteration_time_s"],
                        "optimize_internal_Gbps": opt.get("internal_bandwidth_Bps", 0) * 8 / 1e9,
                        "optimize_rank_order_internal_Gbps": opt.get("rank_order_internal_bandwidth_Bps", 0) * 8 / 1e9})
        rows.append(row)
    return rows
