"""Item 5: multi-job TopoOpt — 432 servers x 4 GPUs shared by 27 jobs of 16 servers (DLRM 35 %, BERT 30 %,
CANDLE 25 %, VGG 10 %: 9/8/7/3 jobs), each pure data parallel on its own consecutive servers.

TopoOpt gives every job its own d-regular network (its patch panel partitions the servers): 27 disjoint
16-server circulants whose d/2 strides each carry two rings (`multiring`). Jobs on disjoint networks share no
link, so each job's time is that of the job alone on a 16-server `topoopt` network; `simulate.jobs` on the
disjoint copies (a `file` network, which carries no ring strides and so runs one rank-order ring per job)
checks that independence: its per-job times equal the lone job's on one copy."""
import os
import random

import numpy as np

import tscli

SERVERS, JOB_SERVERS = 432, 16
MIX = {"dlrm": 9, "bert-topoopt": 8, "candle-uno": 7, "vgg16": 3}
COMMON = {"server.gpus": 4, "topology.link_latency": "1us",
          # simulate.jobs takes one optimizer for all jobs; SGD so that CANDLE-Uno fits (docs/models.md).
          "model.optimizer": "sgd"}
FABRIC_432 = {**COMMON, "topology.servers": SERVERS, "topology.fattree_tiers": 3, "topology.fattree_radix": 0}
CASES = [(4, 100), (8, 100), (4, 25), (8, 25)]
MODELS = ("analytical", "flow")
PER_JOB = "topoopt, own 16-server network per job (multiring)"
PER_JOB_RING = "topoopt, own network per job, one rank-order ring"
SHARED = "topoopt, one 432-server network (sub-group multiring)"
FATTREE = "fat-tree, similar cost"
SWITCH = "ideal switch, d x B per server"


def job_list(seed=1):
    jobs = [m for m, k in MIX.items() for _ in range(k)]
    random.Random(seed).shuffle(jobs)  # interleave the models along the servers
    return jobs


def topoopt16(d, b):
    return {**COMMON, "topology.kind": "topoopt", "topology.servers": JOB_SERVERS, "topology.degree": d,
            "topology.link_bandwidth": tscli.gbps(b)}


def per_job_topoopt_file(workdir, d, b):
    """27 disjoint copies of the 16-server TopoOpt network -> (path of the 432-server file, path of one copy)."""
    os.makedirs(workdir, exist_ok=True)
    one = os.path.join(workdir, f"topoopt16-d{d}-b{b}.topo")
    tscli.run("topology", topoopt16(d, b), extra=["--out", one])
    arcs = [line.split() for line in open(one) if line.strip() and not line.startswith("#")]
    path = os.path.join(workdir, f"topoopt432-perjob-d{d}-b{b}.topo")
    with open(path, "w") as f:
        f.write(f"# {SERVERS // JOB_SERVERS} disjoint copies of {os.path.basename(one)}\n")
        for j in range(SERVERS // JOB_SERVERS):
            for a in arcs:
                f.write(f"{int(a[0]) + JOB_SERVERS * j} {int(a[1]) + JOB_SERVERS * j} {' '.join(a[2:])}\n")
    return path, one


def summarise(times, models):
    t = np.array(times)
    row = {"mean_s": t.mean(), "p90_s": float(np.percentile(t, 90)), "max_s": t.max()}
    for m in MIX:
        row[f"{m}_s"] = float(np.mean([x for x, mm in zip(times, models) if mm == m]))
    return row


def run(workdir):
    jobs = job_list()
    jobs_key = ",".join(f"{m}:{JOB_SERVERS}" for m in jobs)
    rows = []
    for d, b in CASES:
        topo432 = {**FABRIC_432, "topology.kind": "topoopt", "topology.degree": d,
                   "topology.link_bandwidth": tscli.gbps(b)}
        similar = tscli.run("topology", topo432, extra=["--similar-cost"])
        ft_bw = similar["similar_cost_fattree_link_bandwidth_Bps"]
        perjob_path, one_path = per_job_topoopt_file(workdir, d, b)
        one_file = {**COMMON, "topology.kind": "file", "topology.file": one_path, "topology.optical": "patch_panel"}
        fabrics = {  # the fabrics simulate.jobs plays with all 27 jobs at once
            PER_JOB_RING: {**FABRIC_432, "topology.kind": "file", "topology.allow_disconnected": "true",
                           "topology.file": perjob_path, "topology.optical": "patch_panel"},
            SHARED: topo432,
            FATTREE: {**FABRIC_432, "topology.kind": "fattree", "topology.degree": 1,
                      "topology.link_bandwidth": f"{ft_bw:.6g}B/s"},
            SWITCH: {**FABRIC_432, "topology.kind": "switch", "topology.degree": 1,
                     "topology.link_bandwidth": tscli.gbps(d * b), "topology.link_latency": "500ns"},
        }
        calls, keys = [], []
        for name, sets in fabrics.items():
            for model in MODELS:
                calls.append(("simulate", {**sets, "simulate.jobs": jobs_key, "simulate.network_model": model}, [], []))
                keys.append((name, model))
        for m in MIX:  # each model alone on its own 16-server network
            for model in MODELS:
                calls.append(("simulate", {**topoopt16(d, b), "model.name": m, "simulate.network_model": model}, [], []))
                keys.append((PER_JOB, model, m))
            calls.append(("simulate", {**one_file, "model.name": m}, [], []))
            keys.append(("lone ring", "analytical", m))
            if m != "dlrm":  # forest on the job's own network (no strides needed); not for DLRM's all-to-all
                calls.append(("simulate", {**one_file, "model.name": m, "collective.algorithm": "forest"}, [], []))
                keys.append(("lone forest", "analytical", m))
        calls.append(("topology", topoopt16(d, b), [], []))
        keys.append(("cost16",))
        calls.append(("topology", fabrics[PER_JOB_RING], [], []))
        keys.append(("cost-file",))
        res = dict(zip(keys, tscli.run_many(calls)))
        base = {"degree": d, "link_Gbps": b, "fattree_link_Gbps": ft_bw * 8 / 1e9, "topoopt432_cost_usd": similar["cost_usd"]}
        errors = {k: str(r)[:300] for k, r in res.items() if isinstance(r, Exception)}
        for name in [PER_JOB] + list(fabrics):
            for model in MODELS:
                row = {**base, "fabric": name, "network_model": model}
                if name == PER_JOB:
                    lone = {m: res[(PER_JOB, model, m)] for m in MIX}
                    bad = [str(r)[:300] for r in lone.values() if isinstance(r, Exception)]
                    if bad:
                        row["error"] = bad[0]
                    else:
                        row.update(summarise([lone[m]["iteration_time_s"] for m in jobs], jobs))
                        if model == "analytical":  # forest vs multiring, each job on its own network
                            diffs = [res[("lone forest", "analytical", m)]["iteration_time_s"] / lone[m]["iteration_time_s"]
                                     for m in MIX if m != "dlrm"
                                     and not isinstance(res[("lone forest", "analytical", m)], Exception)]
                            if diffs:
                                row["forest_over_multiring_min"], row["forest_over_multiring_max"] = min(diffs), max(diffs)
                        c16 = res[("cost16",)]
                        row["cost_usd"] = None if isinstance(c16, Exception) else c16["cost_usd"] * (SERVERS // JOB_SERVERS)
                else:
                    r = res[(name, model)]
                    if isinstance(r, Exception):
                        row["error"] = str(r)[:300]
                    else:
                        row.update(summarise([j["iteration_time_s"] for j in r["jobs"]], [j["model"] for j in r["jobs"]]))
                        row["cost_usd"] = r.get("cost_usd")
                        if name == PER_JOB_RING and model == "analytical":
                            # independence check: each job's time = the lone job's on one copy of the network
                            lone = [res[("lone ring", "analytical", j["model"])] for j in r["jobs"]]
                            if not any(isinstance(x, Exception) for x in lone):
                                row["max_rel_diff_vs_lone_job"] = max(
                                    abs(j["iteration_time_s"] / x["iteration_time_s"] - 1) for j, x in zip(r["jobs"], lone))
                rows.append(row)
        if errors:
            rows[-1]["errors"] = "; ".join(f"{k}: {v}" for k, v in errors.items())
    return rows
