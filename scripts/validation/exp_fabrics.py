"""Today's fabrics against each other (issues 33 and 34): a Mixture-of-Experts model (Mixtral 8x7B, its
All-to-All on every layer) and a dense one (Llama 3 70B) on 1,024 H100 (128 servers of 8) over a
non-blocking switch, a 3-tier fat-tree, a rail-optimized Clos, a rail-only network, TopoOpt, a 3-D
torus and a dragonfly, at 100, 200 and 400 Gb/s per link. One sweep (`toposweep sweep`, analytical
model) per model; per fabric and bandwidth the fastest strategy of the sweep's grid; the cost is the
network's (topology.cost_table defaults). Equal cost is read off each family's cost/time points: the
cheapest point of each family reaching a given time, or the fastest under a given budget.
"""
import os
import subprocess

import sys

import pandas as pd

import tscli

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from analysis import results  # noqa: E402

SERVERS, GPUS = 128, 8
BANDWIDTHS = ["100Gbps", "200Gbps", "400Gbps"]
# (label, keys): every family with one NIC per GPU where it has NICs to choose (switch, fat-tree,
# TopoOpt: degree 8; rail: 8 rails), the torus with its 6 links per server, the dragonfly with one
# terminal port per server (its family has one) as built by topology.kind = dragonfly.
FABRICS = [
    ("switch", {"topology.kind": "switch", "topology.degree": "8"}),
    ("fat-tree", {"topology.kind": "fattree", "topology.degree": "8"}),
    ("rail-optimized", {"topology.kind": "rail", "topology.spine": "full"}),
    ("rail-only", {"topology.kind": "rail", "topology.spine": "none"}),
    ("topoopt", {"topology.kind": "topoopt", "topology.degree": "8"}),
    ("torus 8x4x4", {"topology.kind": "torus", "topology.dims": "8,4,4"}),
    # 4 groups of 4 routers, 8 servers per router, 3 global links per router (4 between each pair of groups).
    ("dragonfly", {"topology.kind": "dragonfly", "topology.groups": "4", "topology.routers_per_group": "4",
                   "topology.terminals_per_router": "8", "topology.global_links_per_router": "3"}),
]
MIXTRAL = {"model.global_batch": "512", "strategy.sequence_parallel": "true", "strategy.zero": "1"}
# label: (model, fixed keys, strategies, ep values)
MODELS = {
    # Mixtral 8x7B: batch 512 sequences of 4,096 tokens; tp <= 2, pp <= 8 and ep in 1, 4, 8.
    "mixtral-8x7b": ("mixtral-8x7b", MIXTRAL, "all(max_tp=2, max_pp=8)", ["1", "4", "8"]),
    # The same with DeepEP's dispatcher: each token crosses the network once per destination node
    # (strategy.ep_dispatcher = deepep).
    "mixtral-8x7b, DeepEP": ("mixtral-8x7b", {**MIXTRAL, "strategy.ep_dispatcher": "deepep"},
                             "all(max_tp=2, max_pp=8)", ["1", "4", "8"]),
    # Llama 3 70B: batch 256 sequences of 8,192 tokens; tp <= 8, pp <= 8.
    "llama3-70b": ("llama3-70b", {"model.global_batch": "256", "strategy.sequence_parallel": "true",
                                  "strategy.zero": "1"}, "all(max_tp=8, max_pp=8)", ["1"]),
}


def space_ini(model, fixed, strategies, eps):
    def keys(section):
        return [f"{k.split('.', 1)[1]} = {v}" for k, v in fixed.items() if k.startswith(section + ".")]
    lines = ["[model]", f"name = {model}", *keys("model"), "[server]", f"gpus = {GPUS}", "device = h100",
             "[topology]", f"servers = {SERVERS}", "link_latency = 1us", "[simulate]", "network_model = analytical",
             "[strategy]", *keys("strategy")]
    for i, (label, keys) in enumerate(FABRICS):
        lines.append(f"[space.f{i}]")
        lines += [f"{k} = {v}" for k, v in keys.items()]
        lines.append("topology.link_bandwidth = " + ", ".join(BANDWIDTHS))
        lines.append(f"strategy = {strategies}")
        if eps != ["1"]:
            lines.append("strategy.ep = " + ", ".join(eps))
    return "\n".join(lines) + "\n"


def run(work):
    rows = []
    for k, (label, (model, fixed, strategies, eps)) in enumerate(MODELS.items()):
        ini = os.path.join(work, f"fabrics-{k}.ini")
        out = os.path.join(work, f"fabrics-{k}.h5")
        with open(ini, "w") as f:
            f.write(space_ini(model, fixed, strategies, eps))
        if os.path.exists(out):
            os.remove(out)
        subprocess.run([tscli.binary(), "sweep", "--config", ini, "--out", out, "--log-level", "error"],
                       check=True, stdout=subprocess.DEVNULL)
        p = results.load_results(out).points
        ok = p[p.status == 0]
        for (sub, bw), g in ok.groupby(["subspace", "topology.link_bandwidth"], observed=True):
            best = g.loc[g.iteration_time_s.idxmin()]
            rows.append({"model": label, "fabric": FABRICS[int(str(sub)[1:])][0], "bandwidth": str(bw),
                         "iteration_time_s": float(best.iteration_time_s), "cost_usd": float(best.cost_usd),
                         "strategy": f"t{best.tp} p{best.pp} d{best.dp}"
                                     + (f" ep{best['strategy.ep']}" if "strategy.ep" in best else "")
                                     + f" m{best.microbatches}",
                         "exposed_comm_s": float(best.exposed_comm_time_s), "compute_s": float(best.compute_time_s),
                         "bubble_s": float(best.bubble_time_s), "feasible_points": len(g)})
    return rows


if __name__ == "__main__":
    import tempfile
    with tempfile.TemporaryDirectory() as work:
        df = pd.DataFrame(run(work))
        pd.set_option("display.width", 200)
        print(df.to_string(index=False))
