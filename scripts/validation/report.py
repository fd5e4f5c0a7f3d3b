"""Runs every validation experiment through the toposweep CLI and writes docs/validation.md, its figures
(docs/validation/*.png) and the raw rows (docs/validation/*.csv).
   MPLBACKEND=Agg TOPOSWEEP=build/toposweep /usr/bin/python3 scripts/validation/report.py"""
import datetime
import os
import subprocess
import sys
import time

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exp_fabrics  # noqa: E402
import exp_fabrics_16k  # noqa: E402
import exp_forest  # noqa: E402
import exp_hetero  # noqa: E402
import exp_hopper  # noqa: E402
import exp_llama3  # noqa: E402
import exp_megatron  # noqa: E402
import exp_mbridge_fp8  # noqa: E402
import exp_mbridge_moe  # noqa: E402
import exp_moe_zoo  # noqa: E402
import exp_moe  # noqa: E402
import exp_multidim  # noqa: E402
import exp_multijob  # noqa: E402
import exp_placement  # noqa: E402
import exp_topoopt  # noqa: E402
import fit_hopper  # noqa: E402
import tscli  # noqa: E402

DOCS = os.path.join(tscli.SOURCE_DIR, "docs")
FIGS = os.path.join(DOCS, "validation")
WORK = os.environ.get("VALIDATE_WORK", os.path.join(tscli.SOURCE_DIR, "build-validate", "validation-work"))


def ms(x):
    return "—" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x * 1e3:.3g}"


def ratio(a, b):
    return "—" if not (a and b) or np.isnan(a) or np.isnan(b) else f"{a / b:.2f}×"


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def section_topoopt(df, notes):
    df.to_csv(os.path.join(FIGS, "topoopt.csv"), index=False)
    lines = ["", "## 1. TopoOpt: 128 servers × 4 A100, six models",
             "Iteration time (ms) per model, degree d and link bandwidth B. `topoopt` = TopoOpt after the "
             "alternating topology/strategy optimization (`optimize --target alternating`); `dp` = pure data "
             "parallelism on the same fabric; `switch` = one ideal switch with d·B per server (0.5 µs per link, so "
             "1 µs server to server), strategy searched (`optimize --target strategy`); `fat-tree` = 3-tier k=8 "
             "fat-tree of the same cost (`topology --similar-cost`), strategy searched. Speedup = fat-tree / topoopt.",
             ""]
    rows = []
    for _, r in df.iterrows():
        rows.append([r.model, r.degree, r.link_Gbps, f"{r.fattree_link_Gbps:.0f}", ms(r.topoopt_dp_s),
                     ms(r.topoopt_opt_s), ms(r.switch_opt_s), ms(r.fattree_opt_s),
                     ratio(r.fattree_opt_s, r.topoopt_opt_s), ratio(r.topoopt_opt_s, r.switch_opt_s),
                     r.get("topoopt_opt_strategy", ""), r.get("topoopt_strides", "")])
    lines.append(md_table(["model", "d", "B Gbps", "fat-tree Gbps", "topoopt dp", "topoopt", "switch",
                           "fat-tree", "speedup vs fat-tree", "topoopt / switch", "TopoOpt strategy",
                           "strides"], rows))
    sp = df.fattree_opt_s / df.topoopt_opt_s
    best = df.loc[sp.idxmax()]
    by_model = (df.assign(speedup=sp).groupby("model").speedup.max())
    d48 = df.pivot_table(index=["model", "link_Gbps"], columns="degree", values="topoopt_opt_s")
    d8_worse = int((d48[8] > d48[4] * (1 + 1e-9)).sum())
    sw_worse = int((df.switch_opt_s > df.topoopt_opt_s * (1 + 1e-9)).sum())
    sw_dp_worse = int((df.switch_dp_s > df.topoopt_dp_s * (1 + 1e-9)).sum())
    gain_alt = (df.topoopt_dp_s / df.topoopt_opt_s)
    per_model = []
    for m, g in df.assign(speedup=sp, alt=df.topoopt_dp_s / df.topoopt_opt_s,
                          dp_speedup=df.fattree_dp_s / df.topoopt_dp_s,
                          bw_ratio=df.degree * df.link_Gbps / df.fattree_link_Gbps).groupby("model", sort=False):
        per_model.append([m, f"{g.speedup.max():.2f}×", f"{g.speedup.median():.2f}×", f"{g.dp_speedup.median():.2f}×",
                          f"{g.alt.median():.2f}×", f"{g.bw_ratio.median():.2f}",
                          int((g.get("topoopt_mp_links", 0) > 0).sum())])
    lines += ["", "Where the advantage comes from, per model (medians over d and B): `pure DP speedup` compares both "
              "fabrics under pure data parallelism (the network alone); `alternating gain` is TopoOpt's strategy "
              "co-optimization over pure DP on its own fabric; `d·B / fat-tree B` is the per-server bandwidth ratio at "
              "equal cost (what a bandwidth-bound AllReduce gains at most).", "",
              md_table(["model", "max speedup", "median speedup", "pure DP speedup", "alternating gain",
                        "d·B / fat-tree B", "points with MP links"], per_model)]
    lines += ["", f"Best speedup over the similar-cost fat-tree: **{sp.max():.2f}×** ({best.model}, d={best.degree}, "
              f"B={best.link_Gbps} Gbps); median {sp.median():.2f}×. Per model (max): " +
              ", ".join(f"{m} {v:.2f}×" for m, v in by_model.items()) + ".",
              f"d=8 slower than d=4 at equal B: {d8_worse} of {len(d48)} (model, B) pairs. "
              f"Ideal switch slower than topoopt at equal per-server bandwidth: {sw_worse} of {len(df)} points "
              f"with searched strategies, {sw_dp_worse} of {len(df)} with pure DP on both. "
              f"Alternating optimization over pure DP on the TopoOpt fabric: median {gain_alt.median():.2f}×, max "
              f"{gain_alt.max():.2f}×; MP links chosen at {int((df.get('topoopt_mp_links', 0) > 0).sum())} points."]
    n, worst, h5 = exp_topoopt.sweep_check(df.to_dict("records"), WORK)
    lines += ["", f"Cross-check: `toposweep sweep --config inputs/sweeps/validation/topoopt-dp-sweep.ini` (one rank) "
              f"reproduces the {n} pure-DP topoopt and switch times of this table (from `simulate --json`) to a "
              f"relative difference of at most {worst:.1e}."]
    notes.append(f"TopoOpt: sweep and simulate agree on {n} pure-DP points (max relative difference {worst:.1e}).")
    notes.append(f"TopoOpt: up to {sp.max():.2f}× over the similar-cost fat-tree (paper: up to 3.4×); "
                 f"d=8 never slower than d=4: {d8_worse == 0}; switch never slower: {sw_worse == 0} (searched strategies), {sw_dp_worse == 0} (pure DP).")
    fig, ax = plt.subplots(figsize=(10, 7), dpi=100)
    colours = {m: f"C{i}" for i, m in enumerate(df.model.unique())}
    for (m, d), g in df.assign(speedup=sp).groupby(["model", "degree"], sort=False):
        ax.plot(g.link_Gbps, g.speedup, color=colours[m], marker="o" if d == 4 else "s", ls="-" if d == 4 else "--",
                label=f"{m} d={d}")
    ax.axhline(1, color="k", lw=0.5)
    ax.axhline(3.4, color="r", lw=0.5, ls=":", label="paper: 3.4×")
    ax.set_xscale("log")
    ax.set_xlabel("TopoOpt link bandwidth B (Gbps)")
    ax.set_ylabel("speedup over similar-cost fat-tree")
    ax.legend(ncol=3, fontsize=8)
    fig.savefig(os.path.join(FIGS, "topoopt_speedup.png"))
    plt.close(fig)
    lines += ["", "![speedup over the similar-cost fat-tree](validation/topoopt_speedup.png)"]
    if "topoopt_flow_s" in df:
        f = df.dropna(subset=["topoopt_flow_s"])
        dev_t = (f.topoopt_flow_s / f.topoopt_dp_s - 1) * 100
        dev_f = (f.fattree_flow_s / f.fattree_dp_s - 1) * 100
        notes.append(f"Fidelity (item 1, pure DP, B=100 Gbps): flow vs analytical on topoopt {dev_t.min():+.1f} % … "
                     f"{dev_t.max():+.1f} %, on fat-tree {dev_f.min():+.1f} % … {dev_f.max():+.1f} %.")
        rows = [[r.model, r.degree, r.link_Gbps, ms(r.topoopt_dp_s), ms(r.topoopt_flow_s), ms(r.fattree_dp_s),
                 ms(r.fattree_flow_s)] for _, r in f.iterrows()]
        lines += ["", "Model fidelity on these points (pure data parallel; ms):", "",
                  md_table(["model", "d", "B Gbps", "topoopt analytical", "topoopt flow", "fat-tree analytical",
                            "fat-tree flow"], rows)]
    return lines


def section_multidim(df, notes):
    df.to_csv(os.path.join(FIGS, "multidim.csv"), index=False)
    t_opt, t_eq, sizes = exp_multidim.closed_form_allreduce(1e9, exp_multidim.BUDGET_Bps)
    lines = ["", "## 2. Multi-dimensional bandwidth allocation (LIBRA) on 4×8×4×32",
             "Budget 1750 GB/s per NPU (the sum of the default 1000/500/200/50 GB/s), pipelined hierarchical "
             "collectives (time = max over dimensions), LIBRA price table. `time`: minimise iteration time; "
             "`time_x_cost`: minimise time × network cost. Equal split = 437.5 GB/s per dimension.", ""]
    rows = []
    for _, r in df.iterrows():
        if isinstance(r.get("error"), str):
            rows.append([r.workload, r.objective, "error: " + r.error[:80]] + [""] * 7)
            continue
        comm = r.equal_split_comm_time_s / r.comm_time_s if r.comm_time_s else float("nan")
        rows.append([r.workload, r.objective, ms(r.equal_split_time_s), ms(r.optimised_time_s), f"{r.time_gain:.2f}×",
                     f"{comm:.2f}×",
                     f"{r.objective_gain:.2f}×", " / ".join(f"{x:.0f}" for x in r.dim_bandwidth_GBps),
                     f"{r.optimised_cost_usd / 1e6:.1f} M$ vs {r.equal_split_cost_usd / 1e6:.1f} M$",
                     "yes" if r.feasible else "**no (memory)**"])
    lines.append(md_table(["workload", "objective", "equal split ms", "optimised ms", "time gain", "comm-time gain",
                           "objective gain",
                           "GB/s per dim", "network cost", "fits memory"], rows))
    ar = df[(df.workload == "AllReduce 1 GB") & (df.objective == "time")].iloc[0]
    lines += ["", f"Check by hand (docs/optimizers.md, bandwidth allocation): per-dimension AllReduce bytes for 1 GB are "
              f"{', '.join(f'{s / 1e6:.2f} MB' for s in sizes)}; the optimum equalises times, "
              f"T = Σ size / B = {t_opt * 1e3:.4f} ms (toposweep {ar.optimised_time_s * 1e3:.4f} ms); the equal split "
              f"gives max size / (B/4) = {t_eq * 1e3:.4f} ms (toposweep {ar.equal_split_time_s * 1e3:.4f} ms).",
              "Note: when a strategy does not fit memory, toposweep still allocates bandwidth and reports "
              "`feasible: false`; its `iteration_time_s` is then the communication time only."]
    sim = df.dropna(subset=["sim_equal_analytical_s"]) if "sim_equal_analytical_s" in df else df.iloc[0:0]
    if len(sim):
        rows = [[r.workload, r.objective, ms(r.sim_equal_analytical_s), ms(r.sim_equal_flow_s),
                 ms(r.sim_optimised_analytical_s), ms(r.sim_optimised_flow_s),
                 ratio(r.sim_equal_analytical_s, r.sim_optimised_analytical_s),
                 ratio(r.sim_equal_flow_s, r.sim_optimised_flow_s)] for _, r in sim.iterrows()]
        lines += ["", "Model fidelity: both allocations replayed by `simulate` (`topology.dim_bandwidth` set to them; "
                  "the analytical replay equals `optimize`'s own times above), analytical vs flow, ms. MSFT-1T's "
                  "stand-in does not fit memory and is not simulated.", "",
                  md_table(["workload", "objective", "equal analytical", "equal flow", "optimised analytical",
                            "optimised flow", "time gain (analytical)", "time gain (flow)"], rows)]
        fl = pd.concat([sim.sim_equal_flow_s / sim.sim_equal_analytical_s,
                        sim.sim_optimised_flow_s / sim.sim_optimised_analytical_s])
        g = sim[sim.objective == "time"]
        gf = g.sim_equal_flow_s / g.sim_optimised_flow_s
        notes.append(f"Fidelity (item 2): flow / analytical {fl.min():.3f}–{fl.max():.3f}; time-optimised allocation's gain "
                     f"under flow {gf.min():.2f}×–{gf.max():.2f}× (never worse than equal split: {bool((gf >= 1 - 1e-9).all())}).")
    worse = int((df.time_gain < 1 - 1e-9).sum()) if "time_gain" in df else -1
    g = df[df.objective == "time"]
    notes.append(f"Bandwidth allocation: optimised never worse than equal split: {worse == 0}; time gains "
                 + ", ".join(f"{w.split(' (')[0]} {x:.2f}×" for w, x in zip(g.workload, g.time_gain))
                 + "; communication-time gains "
                 + ", ".join(f"{w.split(' (')[0]} {a / b:.2f}×" for w, a, b in
                             zip(g.workload, g.equal_split_comm_time_s, g.comm_time_s)) + ".")
    return lines


def section_forest(df, notes):
    df.to_csv(os.path.join(FIGS, "forest.csv"), index=False)
    lines = ["", "## 3. Topology-adaptive AllReduce: forest vs ring vs tree",
             "AllReduce of 1 GB per rank, one GPU per vertex (`server.gpus = 1`). `bound` is toposweep's cut bound "
             "(`optimal_time_s`); `brute force` recomputes it here over every vertex subset (graphs ≤ 16 vertices). "
             "Ring and tree run in rank order. Times in ms.", ""]
    rows = []
    for _, r in df.iterrows():
        rows.append([r.topology, ms(r.optimal_time_s), ms(r.brute_force_bound_s), ms(r.get("ring_time_s")),
                     ms(r.get("tree_time_s")), ms(r.get("forest_time_s")),
                     f"{r.optimal_time_s / r.forest_time_s * 100:.1f} %", ratio(r.get("ring_time_s"), r.get("forest_time_s")),
                     r.get("forest_trees")])
    lines.append(md_table(["topology", "bound", "brute force", "ring", "tree", "forest", "forest / optimal algbw",
                           "forest speedup vs ring", "trees"], rows))
    eff = df.optimal_time_s / df.forest_time_s
    sp = df.ring_time_s / df.forest_time_s
    bf = df.dropna(subset=["brute_force_bound_s"])
    agree = bool(np.allclose(bf.brute_force_bound_s, bf.optimal_time_s, rtol=1e-9))
    notes.append(f"Forest: achieves {eff.min() * 100:.1f} %–{eff.max() * 100:.1f} % of the optimal algbw; "
                 f"{sp.min():.2f}×–{sp.max():.2f}× faster than ring (paper: up to 18.3× over earlier schemes); "
                 f"cut bound equals brute force on all {len(bf)} small graphs: {agree}.")
    fig, ax = plt.subplots(figsize=(10, 7), dpi=100)
    x = np.arange(len(df))
    for i, (alg, col) in enumerate([("ring", "ring_algbw_GBps"), ("tree", "tree_algbw_GBps"), ("forest", "forest_algbw_GBps")]):
        ax.bar(x + (i - 1) * 0.25, df[col], 0.25, label=alg)
    ax.scatter(x + 0.25, 1e9 / df.optimal_time_s / 1e9, marker="_", s=300, color="k", label="optimal (cut bound)")
    ax.set_xticks(x)
    ax.set_xticklabels(df.topology, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("AllReduce algbw (GB/s)")
    ax.legend()
    fig.subplots_adjust(bottom=0.3)
    fig.savefig(os.path.join(FIGS, "forest_algbw.png"))
    plt.close(fig)
    lines += ["", "![algbw](validation/forest_algbw.png)"]
    if "sim_ring_analytical_s" in df:
        rows = [[r.topology, ms(r.sim_ring_analytical_s), ms(r.sim_ring_flow_s), ms(r.sim_forest_analytical_s),
                 ms(r.sim_forest_flow_s), ratio(r.sim_ring_analytical_s, r.sim_forest_analytical_s)]
                for _, r in df.iterrows()]
        lines += ["", f"Model fidelity, and the forest inside a training iteration: `simulate` of {exp_forest.SIM_MODEL} "
                  "pure data parallel over the graph's GPUs with `collective.algorithm = ring | forest`, analytical vs "
                  "flow (ms).", "",
                  md_table(["topology", "ring analytical", "ring flow", "forest analytical", "forest flow",
                            "iteration speedup (forest)"], rows)]
        fl = pd.concat([df.sim_ring_flow_s / df.sim_ring_analytical_s, df.sim_forest_flow_s / df.sim_forest_analytical_s])
        notes.append(f"Fidelity (item 3): flow / analytical {fl.min():.3f}–{fl.max():.3f} on {exp_forest.SIM_MODEL} "
                     "iterations (one AllReduce at a time on a dedicated graph: nothing is shared, so the models agree); "
                     f"forest shortens the iteration {(df.sim_ring_analytical_s / df.sim_forest_analytical_s).min():.2f}×–"
                     f"{(df.sim_ring_analytical_s / df.sim_forest_analytical_s).max():.2f}× against ring.")
    return lines


def section_placement(df, notes):
    df.to_csv(os.path.join(FIGS, "placement.csv"), index=False)
    lines = ["", "## 4. Topology-aware placement vs rank order (TAG)",
             "8 servers × 4 A100 on a 25 Gbps switch plus fast direct server links (`topology.kind = file`). "
             "`simulate --set optimize.placement=rank_order|metis`: rank order is Megatron's (rank = t + tp·(d + dp·p)); "
             "`metis` puts the TP groups (when they span servers, else the PP groups) on METIS server sets "
             "(`grouped`). `internal Gbps`: direct-link bandwidth inside the grouped sets for rank order / METIS / the "
             "best partition found here by brute force over every partition into equal sets. `optimize --target "
             "placement` reports the same two times (column `optimize gain`). Iteration time in ms.", ""]
    rows = [[r.cluster, r.workload, r.get("optimize_grouped", ""), r.metis_groups,
             f"{r.rank_order_internal_Gbps:.0f} / {r.metis_internal_Gbps:.0f} / {r.brute_force_internal_Gbps:.0f}",
             ms(r.rank_order_analytical_s), ms(r.metis_analytical_s), ratio(r.rank_order_analytical_s, r.metis_analytical_s),
             ms(r.rank_order_flow_s), ms(r.metis_flow_s), ratio(r.rank_order_flow_s, r.metis_flow_s),
             ratio(r.get("optimize_baseline_time_s"), r.get("optimize_time_s"))] for _, r in df.iterrows()]
    lines.append(md_table(["cluster", "workload", "grouped", "METIS groups", "internal Gbps (rank / METIS / best)",
                           "rank order", "METIS", "speedup", "rank order (flow)", "METIS (flow)", "speedup (flow)",
                           "optimize gain"], rows))
    sp = df.rank_order_analytical_s / df.metis_analytical_s
    spf = df.rank_order_flow_s / df.metis_flow_s
    reaches = bool((df.metis_internal_Gbps >= df.brute_force_internal_Gbps).all())
    slower = int((sp < 1 - 1e-9).sum() + (spf < 1 - 1e-9).sum())
    lines += ["", f"METIS reaches the brute-force best internal bandwidth on {int((df.metis_internal_Gbps >= df.brute_force_internal_Gbps).sum())} "
              f"of {len(df)} cases and is slower than rank order in {slower} of {2 * len(df)} (case, network model) "
              f"pairs. It gains where the grouped dimension carries the traffic and rank order puts it on the switch "
              f"(TP across servers: up to {sp.max():.1f}×); where Megatron's rank order already lands the PP groups on "
              "the fast links (PP is the outermost rank dimension, so PP-2 pairs servers s and s+4 and PP-4 takes every "
              "other server), METIS finds the same sets and the time is unchanged. Servers with different GPUs and "
              "gradient compression: section 7."]
    notes.append(f"Placement (METIS via `optimize.placement`): {sp.min():.2f}×–{sp.max():.2f}× over rank order "
                 f"(analytical), {spf.min():.2f}×–{spf.max():.2f}× (flow); never slower: {slower == 0}; METIS reaches the "
                 f"brute-force best grouping: {reaches}.")
    fl = pd.concat([df.rank_order_flow_s / df.rank_order_analytical_s, df.metis_flow_s / df.metis_analytical_s])
    notes.append(f"Fidelity (item 4): flow / analytical {fl.min():.2f}–{fl.max():.2f}: the uncontended analytical "
                 "model misses the sharing of the 25 Gbps switch ports between concurrent TP, PP and DP transfers.")
    return lines


def section_hetero(df, notes):
    df.to_csv(os.path.join(FIGS, "hetero.csv"), index=False)
    lines = ["", "## 7. Heterogeneous clusters (TAG)",
             "8 servers on one switch with mixed devices per server (`server.device = a100*4,v100-pcie*4`, run lists of "
             "consecutive servers; device files in `inputs/devices/`). Per cluster and model the iteration time (ms, "
             "analytical model) of (a) rank order with an even batch split, the analogue of TAG's `dp-nccl` baseline: every "
             "replica waits for the slowest device; (b) + `strategy.batch_split = proportional`; (c) + `strategy.stage_split "
             "= speed` and `optimize.placement = metis` (GPT-3 only: the pipelined model); (d) + `strategy.compression = sfb` "
             "(per layer where AllGather + rebuild beats the AllReduce); (e) `optimize --target strategy` over every "
             "knob including the splits and compression (exhaustive; data parallelism only for the CNNs and BERT). "
             "Speedups are over (a).", ""]
    for cid, (desc, _) in exp_hetero.CLUSTERS.items():
        lines.append(f"- **{cid}**: {desc}")
    lines.append("")
    rows = []
    for _, r in df.iterrows():
        a = r.get("a_even_s")
        rows.append([r.cluster, r.model, ms(a), ms(r.get("b_proportional_s")), ms(r.get("c_speed_placement_s")),
                     ms(r.get("d_sfb_s")), ms(r.get("e_search_s")), ratio(a, r.get("b_proportional_s")),
                     ratio(a, r.get("c_speed_placement_s")), ratio(a, r.get("d_sfb_s")), ratio(a, r.get("e_search_s")),
                     r.get("sfb_layers") or ""])
    lines.append(md_table(["cluster", "model", "(a) even", "(b) proportional", "(c) + stages, METIS", "(d) + SFB",
                           "(e) search", "b/a", "c/a", "d/a", "e/a", "SFB layers"], rows))
    best = (df.a_even_s / df[["b_proportional_s", "c_speed_placement_s", "d_sfb_s", "e_search_s"]].min(axis=1))
    prop = df.a_even_s / df.b_proportional_s
    sfb = df.b_proportional_s / df.d_sfb_s
    dp_ratio = (df.dp_bytes_before / df.dp_bytes_after).dropna()
    lines += ["",
              f"TAG reports up to 4.56× over existing schemes (arXiv 2302.06126, abstract; its per-model tables could not be "
              f"read here). toposweep, on these clusters: up to {best.max():.2f}× for the best of (b)–(e) over (a). Where "
              "the two differ and why:",
              "",
              f"- **Proportional split** ({prop.min():.2f}×–{prop.max():.2f}×): bounded by (r + 1)/2 for two equal halves whose "
              "devices differ in speed by r when compute dominates (1.75 for A100/V100 fp16, r = 312/125; 1.89 for A100/"
              "V100-PCIe, r = 312/112; 1.12 for V100-PCIe/1080 Ti fp32, r = 14/11.34) — the closed form is a unit test "
              "(`tests/unit/point/hetero_test.cpp`, exact on a compute-bound model). Rows far below it are communication-"
              "bound (T1 at 22.5 Gb/s) or, for GPT-3 in rank order, have every replica on both server kinds (tp 8 fills a "
              "server and pp 2 puts stage 0 on the A100s), so all replicas are equally fast and only the stage split helps.",
              f"- **SFB** ({sfb.min():.2f}×–{sfb.max():.2f}× on top of (b)): pays on slow networks for VGG16's classifier "
              f"(fc6–fc8 hold 89 % of its parameters; DP bytes per GPU fall up to {dp_ratio.max():.1f}×) and ResNet-50's fc; "
              "transformer blocks and conv layers are never candidates at these batches (their factors exceed their "
              "weights). TAG chooses SFB per operator group with its own profiled costs at batch 6 on 2 V100s; here the "
              "choice is per layer by the same network model that times the iteration, at the configured batch.",
              "- **The largest gains are GPT-3's (e)**: the baseline keeps Megatron's t8 p2 layout, whose TP-8 AllReduces "
              "run over PCIe on the V100-PCIe servers; the search drops to tp 2 with a speed-weighted stage split (H1) or "
              "tp 2-4 with a proportional batch split (H2, H3). That is a strategy change against a fixed baseline, as "
              "TAG's own comparisons are, not the effect of one knob.",
              "- **What TAG can do that toposweep does not:** leave slow devices out of an operator group, use parameter "
              "servers, or give operator groups their own parallelism; toposweep uses every GPU with AllReduce-based "
              "data, tensor and pipeline parallelism, so TAG's gains against a baseline that waits on a 1080 Ti are partly "
              "out of reach by construction. TAG's costs are profiled fp32 TensorFlow op times; toposweep's are datasheet "
              "peaks × GEMM or FLOP efficiencies (the per-operator model where every device of the cluster has one: H3; "
              "FLOPs at peak × 0.5 otherwise), so compute/communication ratios differ.",
              "- **T1** is TAG's testbed as its code describes it (1 V100 server with 4 GPUs, 4 × 2 GTX 1080 Ti, 2 × 2 "
              "P100) without the P100s (no datasheet figures checked here), with TAG's per-server NIC of 2810 B/µs "
              "(22.5 Gb/s), in fp32 as TAG trains.",
              "- **Placement by speed**: (c) splits the stages by device speed and asks for METIS placement, which on mixed "
              "servers only lets a server take the place of one of its class (device, GPU count, fabric) and groups "
              "by direct-link bandwidth (`tests/unit/opt/mixed_placement_test.cpp`). These clusters have no direct "
              "server links (one switch), so METIS keeps rank order here and (c)'s gain is the stage split's."]
    notes.append(f"Heterogeneous clusters (TAG): best of proportional split, stage split + METIS, SFB and the strategy "
                 f"search {best.min():.2f}×–{best.max():.2f}× over rank order with an even split (TAG: up to 4.56×); "
                 f"proportional split alone {prop.min():.2f}×–{prop.max():.2f}× (bound (r + 1)/2).")
    return lines


def section_multijob(df, notes):
    df.to_csv(os.path.join(FIGS, "multijob.csv"), index=False)
    lines = ["", "## 5. Multi-job: 432 servers, 27 jobs of 16 servers",
             "9 DLRM, 8 BERT, 7 CANDLE-Uno, 3 VGG16 jobs (35/30/25/10 %), interleaved along the servers with seed 1, "
             "each pure data parallel on 16 consecutive servers. TopoOpt gives each job its own d-regular 16-server "
             "network (`" + exp_multijob.PER_JOB + "`: each job alone on `topology.kind = topoopt, servers = 16`, "
             "whose d/2 strides carry two rings each; 27 such networks have exactly the ports, and the price, of one "
             "432-server topoopt network). Jobs on disjoint networks share no link, so this equals playing them "
             "together: `simulate.jobs` on the 27 disjoint copies (a `file` network, row `" + exp_multijob.PER_JOB_RING
             + "`) reproduces each lone job's time on one copy (relative difference in the note below); a `file` "
             "network carries no ring strides, so there each job runs one rank-order ring over one of its d ports. "
             "The other fabrics run all 27 jobs in one `simulate.jobs` call. Cost: `cost_usd` of the fabric (patch-panel "
             "ports included for TopoOpt). Iteration time per job in ms: mean, 90th percentile, max, and the mean per "
             "model.", ""]
    rows = []
    for _, r in df.iterrows():
        cost = "" if r.get("cost_usd") is None or pd.isna(r.get("cost_usd")) else f"{r.cost_usd / 1e3:.0f}"
        if isinstance(r.get("error"), str):
            rows.append([r.degree, r.link_Gbps, r.fabric, cost, r.network_model, "error: " + r.error[:80]] + [""] * 6)
            continue
        rows.append([r.degree, r.link_Gbps, r.fabric, cost, r.network_model, ms(r.mean_s), ms(r.p90_s), ms(r.max_s),
                     ms(r["dlrm_s"]), ms(r["bert-topoopt_s"]), ms(r["candle-uno_s"]), ms(r["vgg16_s"])])
    lines.append(md_table(["d", "B Gbps", "fabric", "cost k$", "model", "mean", "p90", "max", "DLRM", "BERT", "CANDLE",
                           "VGG16"], rows))
    a = df[df.network_model == "analytical"].set_index(["degree", "link_Gbps", "fabric"])
    parts, old, worse = [], [], 0
    cases = sorted({(k[0], k[1]) for k in a.index}, key=lambda x: (-x[1], x[0]))
    for (d, b) in cases:
        t = a.loc[(d, b, exp_multijob.PER_JOB)]
        f = a.loc[(d, b, exp_multijob.FATTREE)]
        o = a.loc[(d, b, exp_multijob.PER_JOB_RING)]
        parts.append(f"d={d} B={b}: mean {f.mean_s / t.mean_s:.2f}×, p90 {f.p90_s / t.p90_s:.2f}× "
                     f"(d·B / fat-tree B = {d * b / t.fattree_link_Gbps:.2f})")
        old.append(f"d={d} B={b}: {f.mean_s / o.mean_s:.2f}×")
    for b in {c[1] for c in cases}:
        if (4, b) in cases and (8, b) in cases:
            worse += int(a.loc[(8, b, exp_multijob.PER_JOB)].mean_s > a.loc[(4, b, exp_multijob.PER_JOB)].mean_s * (1 + 1e-9))
    chk = df["max_rel_diff_vs_lone_job"].dropna() if "max_rel_diff_vs_lone_job" in df else pd.Series(dtype=float)
    summary = ("TopoOpt (own network per job) over the similar-cost fat-tree (fat-tree time / TopoOpt time, analytical): "
               + "; ".join(parts) + ". With one rank-order ring per job instead (the previous report's TopoOpt row), "
               "the same ratio was " + "; ".join(old) + f". d=8 slower than d=4 at equal B (mean): {worse} of "
               f"{len({c[1] for c in cases})}. Independence check: `simulate.jobs` on the disjoint copies vs each job "
               f"alone on one copy, max relative difference {chk.max() if len(chk) else float('nan'):.1e}.")
    if "forest_over_multiring_min" in a:
        fm = a.forest_over_multiring_min.dropna()
        fx = a.forest_over_multiring_max.dropna()
        if len(fm):
            summary += (f" `collective.algorithm = forest` on a job's own `file` network (no strides needed; BERT, CANDLE, "
                        f"VGG16, not DLRM's all-to-all) takes {fm.min():.3f}–{fx.max():.3f}× the multiring time.")
    lines += ["", summary]
    notes.append("Multi-job: " + summary)
    ok = df.dropna(subset=["mean_s"]) if "mean_s" in df else df.iloc[0:0]
    piv = ok.pivot_table(index=["degree", "link_Gbps", "fabric"], columns="network_model", values="mean_s")
    if {"flow", "analytical"} <= set(piv.columns):
        f = (piv.flow / piv.analytical).dropna()
        per_fabric = f.groupby(level=2).agg(["min", "max"])
        notes.append("Fidelity (item 5): flow / analytical mean iteration time " + "; ".join(
            f"{fab} {lo:.2f}–{hi:.2f}" for fab, (lo, hi) in per_fabric.iterrows()) +
            ": the analytical model times each job's collectives on an idle network; flow shares the fat-tree's "
            "and the shared circulant's links between jobs (and DLRM's all-to-all with its AllReduce).")
    return lines


def pc(x):
    return "—" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:+.1f} %"


def section_megatron(res, notes):
    for key in ("nccl", "table4", "table5", "sc21", "sc21_t2", "memory", "h100"):
        pd.DataFrame(res[key]).to_csv(os.path.join(FIGS, f"megatron_{key}.csv"), index=False)
    t5 = pd.DataFrame(res["table5"])
    tj = pd.DataFrame(res["table5_joint"])
    ej = tj.error_pct.abs()
    sc = pd.DataFrame(res["sc21"])
    sc22 = pd.DataFrame(res["sc21_2022"])
    t2 = pd.DataFrame(res["sc21_t2"])
    t4 = pd.DataFrame(res["table4"])
    nc = pd.DataFrame(res["nccl"])
    mem = pd.DataFrame(res["memory"])
    h1 = pd.DataFrame(res["h100"])
    cm = h1.compute_s / h1.measured_iteration_s
    nc_ = (h1.exposed_comm_s + h1.bubble_s) / h1.iteration_s
    pp_ = h1[h1.pp > 1]
    bub = pp_.bubble_s
    small = h1[h1.model.isin(["1.7B", "7.1B"])]  # TP 1-2 without a pipeline
    small_exposed = small.exposed_comm_s / small.iteration_s
    mid = h1[h1.model.isin(["16B", "32B"])]
    e5 = t5.error_pct.abs()
    c5 = t5.calculon_error_pct.abs()
    esc = sc.error_pct.abs()
    lines = ["", "## 6. Megatron-LM on Selene: measured training steps and nccl-tests",
             "Measured runs of Megatron-LM on Selene (DGX A100 80GB: 8 GPUs on NVSwitch, 8 × 200 Gb/s HDR InfiniBand "
             "per server) against `toposweep simulate`, and nccl-tests bus bandwidths against `toposweep collective` "
             "(drivers: `scripts/validation/exp_megatron.py`). Network: one non-blocking `switch` (Selene's fat tree has "
             "full bisection), 8 NICs per server at 200 Gb/s × `topology.link_efficiency = 0.96` and 4.8 µs per link "
             "(NCCL's 9.6 µs per network step); the GPU fabric and compute come from `server.device = a100` "
             "(`inputs/devices/a100.json`). Models: sequence 2048, vocabulary 51200, learned positions "
             "(`inputs/models/megatron-*.json` for Korthikanti's four).",
             "",
             "**Calibration.** Two A100 numbers were fitted, both on Korthikanti et al. 2022 Table 4 only (per-layer "
             "times of their 22B model): the sustained GEMM fraction 0.767 and the memory-kernel bandwidth 1.381 TB/s "
             "(`memory_efficiency` 0.6773). Everything else is a datasheet value, a published microbenchmark, NCCL's "
             "latency model or an assumption (`inputs/devices/README.md`). Table 4 below is therefore a fit, "
             "reported apart; every other table is held out. The link efficiencies *are* nccl-tests numbers "
             "(230/300 and 192/200 GB/s), so the first two nccl-tests rows check the collective model that "
             "combines them (NCCL's ring through all GPUs, rail-aligned NICs), not the numbers themselves.",
             "",
             "**Software.** What differs between the two papers' runs is the Megatron-LM code they ran (its git "
             "history), modelled as strategy options, not factors. Korthikanti et al. (code of 2022-05): "
             "`strategy.tp_overlap = backward` (asynchronous input-gradient collective, since 2021-09), "
             "`grad_accum_fusion = true` with fp32 main gradients (since 2022-02). SC'21 (code of 2021-04): "
             "`tp_overlap = none`, `grad_accum_fusion = false`, fp16 gradients. Both: scatter/gather, blocking "
             "pipeline exchanges (`p2p_overlap = false`), one gradient reduction after the backward "
             "(`dp_overlap = false`).", "",
             "### nccl-tests bus bandwidth (all_reduce, 8 GiB per rank)", ""]
    lines.append(md_table(["case", "ranks", "algorithm", "measured GB/s", "toposweep GB/s", "error", "source"],
                          [[r.case, r.ranks, r.algorithm, r.measured_GBps, f"{r.simulated_GBps:.1f}", pc(r.error_pct),
                            r.source] for _, r in nc.iterrows()]))
    lines += ["", "### Korthikanti et al. 2022 Table 4: one 22B layer, t = 8, b = 4 (CALIBRATION SET)",
              "Forward + backward per microbatch, as the difference between a 2-layer and a 1-layer model on one DGX "
              "(32 microbatches; the extra layer's optimizer share, about 0.07 ms, included). The unit test "
              "`LayerCost.KorthikantiTable4IsReproducedWithinThreePercent` checks forward and backward apart.", ""]
    lines.append(md_table(["experiment", "measured ms", "toposweep ms", "error"],
                          [[r.experiment, r.measured_ms, f"{r.simulated_ms:.2f}", pc(r.error_pct)] for _, r in t4.iterrows()]))
    lines += ["", "### Korthikanti et al. 2022 Table 5: iteration time (held out)",
              "22B: 8 GPUs (one DGX, `topology.servers = 1`), t8 p1, batch 4, microbatch 4. 175B: 64 GPUs, t8 p8, "
              "batch 64; 530B: 280 GPUs, t8 p35, batch 280 (both interleaved, 3 chunks); 1T: 512 GPUs, t8 p64, "
              "batch 512, 1F1B; microbatch 1; DP = 1. Calculon's errors from its own `llm-validation` run (our sign: "
              "model − measured). Memory: per GPU on the worst stage with the 6 GiB reserve.", ""]
    lines.append(md_table(["model", "mode", "measured s", "toposweep s", "error", "Calculon error", "memory GiB"],
                          [[r.model, r["mode"], r.measured_s, f"{r.simulated_s:.2f}", pc(r.error_pct),
                            pc(r.calculon_error_pct), f"{r.memory_GiB:.1f}"] for _, r in t5.iterrows()]))
    lines += ["", f"Mean |error| **{e5.mean():.2f} %**, max **{e5.max():.2f} %** (goal ≤ 3 % / ≤ 8 %; Calculon "
              f"{c5.mean():.2f} % / {c5.max():.2f} %). Without the two 22B cells, whose layer shape is the calibration "
              f"set's: mean {e5[2:].mean():.2f} %, max {e5[2:].max():.2f} %. Before this model toposweep was +19 %, "
              "+35 %, +42 % on 175B, 530B, 1T with full recompute and could not express the others.",
              f"Korthikanti et al. Sec. 6.3, 530B with SP + selective and 8-way DP (2,240 GPUs, batch 2,240, no "
              f"gradient-reduction overlap): measured 39.15 s, toposweep {res['dp8']['simulated_s']:.2f} s "
              f"({pc(res['dp8']['error_pct'])}).", ""]
    lines += ["### Narayanan et al. SC'21 Table 1: weak scaling, TFLOP/s per GPU (held out)",
              "TFLOP/s by the paper's Eq. 3 (`96 B s l h² (1 + s/6h + V/16lh)`) over the simulated time. The paper does "
              "not publish the microbatch size and the number of chunks: toposweep searches microbatch ∈ {1, 2, 4, 8} "
              "and every chunk count Megatron accepts (dividing layers/pp, microbatches a multiple of pp for "
              "interleaving), skips what does not fit in memory, and reports the best, as the paper reports its best "
              "configuration. `2022 code` is the same search with Korthikanti's software options instead (a "
              "sensitivity, not a claim).", ""]
    rows = []
    for (_, r), (_, r2) in zip(sc.iterrows(), sc22.iterrows()):
        lo, hi = r.range_tflops
        rows.append([r.params_B, r.tp, r.pp, r.gpus, r.batch, r.measured_tflops, f"{r.simulated_tflops:.1f}",
                     pc(r.error_pct), f"{r.microbatch} / {r.chunks}", f"{r.feasible_choices} of {r.choices}",
                     f"{lo:.0f}–{hi:.0f}", pc(r2.error_pct)])
    lines.append(md_table(["params (B)", "t", "p", "GPUs", "batch", "measured", "toposweep", "error",
                           "winner: microbatch / chunks", "feasible choices", "their range", "2022 code"], rows))
    lines += ["", f"Every row within **{esc.max():.2f} %** (goal 10 %); mean |error| {esc.mean():.2f} %. With the 2022 "
              f"code's options instead: mean {sc22.error_pct.abs().mean():.2f} %, max {sc22.error_pct.abs().max():.2f} %. "
              "Winners: microbatch 8 for the single-stage rows (the largest GEMMs); the deeper pipelines favour many "
              "chunks at small microbatches (a smaller bubble), the largest models microbatch 1 (memory).", "",
              "### SC'21 Table 2, the PTD-P rows (microbatch 1 published; chunks searched; held out)", ""]
    lines.append(md_table(["params (B)", "t × p", "dp", "GPUs", "batch", "chunks", "measured", "toposweep", "error"],
                          [[r["params_B"], f"{r['tp']} × {r['pp']}", r["dp"], r["gpus"], r["batch"], r["chunks"],
                            r["measured_tflops"], f"{r['simulated_tflops']:.1f}", pc(r["error_pct"])]
                           for r in res["sc21_t2"]]))
    agree = int((mem.fits == mem.paper_fits).sum())
    lines += ["", "### Memory: which of Korthikanti's configurations fit in 80 GiB",
              "Their Sec. 6.1: only sequence parallelism with selective recomputation, and full recomputation, fit the "
              "four models; no other combination does. The 6 GiB reserve was chosen inside the bounds these statements "
              "give with the Table 2 memory model, so this is a consistency check, not a prediction. Memory per GPU "
              "(GiB, worst stage, reserve included):", ""]
    piv = mem.pivot(index="model", columns="mode", values="memory_GiB").reindex(["22B", "175B", "530B", "1T"])
    cols = ["none", "SP", "selective", "SP + selective", "full"]
    lines.append(md_table(["model"] + cols, [[m] + [f"{piv.loc[m, c]:.1f}" for c in cols] for m in piv.index]))
    lines += ["", f"toposweep's feasibility agrees with the paper on {agree} of {len(mem)} cells.",
              "", f"Side by side with Calculon on its example (GPT-3 175B, t8 p8, batch 3072, microbatch 1, full "
              f"recompute, 1F1B): toposweep {res['calculon']['total_s']:.1f} s per iteration "
              f"(compute {res['calculon']['compute_s']:.1f} s on the critical stage), Calculon 808.1 s "
              "(forward + backward + recompute 681.7 s); toposweep before this model: compute 926 s alone.", "",
              "### Held out, other hardware: Megatron-Core on H100",
              "The Megatron-LM README's H100 weak-scaling table (NVIDIA/Megatron-LM commit f2e5db402c, 2024-07-15, "
              "`images/model_table.png`; the weak-scaling figure's legend: Megatron-Core r0.8.0) against `simulate` with "
              "the configuration each run used, as far as it is published, on DGX H100 servers (8 × 400 Gb/s NDR each, "
              "efficiency assumed equal to HDR's 0.96). The H100's GEMM, memory-bound and fused-attention fractions "
              "are fitted on single-GPU operator tables (section 7b); none of these runs calibrated anything. "
              "TFLOP/s as Megatron counts them (`num_floating_point_operations`, r0.8.0): `72 B s L h² (1 + s/6h + "
              "V/12hL)`. Where each setting comes from:", "",
              "- **Published in the table**: TP, PP, DP (48), GPUs, global batch, heads / hidden / layers. **README** "
              "(same commit): sequence 4096, vocabulary 131,072, `--overlap-grad-reduce --overlap-param-gather`, "
              "`--tp-comm-overlap`, PP communication overlap \"enabled by default\"; bf16: the table's MFU column is "
              "its TFLOP/s over 989 (the H100's dense bf16 peak).",
              "- **Implied by Megatron-Core r0.8.0's code** (tag `core_r0.8.0`, baf94af3c6): `--overlap-param-gather` "
              "gathers the updated weights bucket by bucket under the next forward (→ `strategy.param_gather_overlap "
              "= true`) and asserts `--use-distributed-optimizer` (→ `strategy.zero = 1`); `--tp-comm-overlap` asserts "
              "`--sequence-parallel` (→ SP on every TP > 1 run; `tp_overlap = full`) (`megatron/training/arguments.py`); "
              "bf16 accumulates and reduces gradients in fp32 (→ `model.grad_datatype = fp32`); gradient-accumulation "
              "fusion, Transformer Engine layers (cuDNN fused attention on Hopper) and tied embeddings are defaults; "
              "no recomputation (`--recompute-granularity` defaults to none; the README names none); the DDP bucket "
              "is max(40M, 1M × DP) = 48M fp32 gradient elements (`megatron/core/distributed/"
              "distributed_data_parallel.py`; → `strategy.bucket_size = 192MB`).",
              "- **Inferred**: r0.8.0 overlaps p2p only under the interleaved schedule (it sets `overlap_p2p_comm = "
              "False` otherwise), so \"PP overlap enabled\" means the PP > 1 runs were interleaved; 119B (23 layers per "
              "stage) and 462B (7) then have one layer per virtual stage. Column `1F1B` shows the alternative.",
              "- **Not published** (README, figures, example scripts; NVIDIA/Megatron-LM#1571 asks for the launch "
              "scripts and is unanswered): the microbatch size of every run and the virtual-stage count of 70B, 177B "
              "and 314B. Only for these is the best over the admissible values taken (microbatch ∈ {1, 2, 4}, chunk "
              "counts > 1 that divide the layers per stage with the microbatch count a multiple of PP): optimistic "
              "by construction; `range` gives the spread over those choices.", ""]
    lines.append(md_table(["model", "t", "p", "GPUs", "batch", "measured", "toposweep", "error",
                           "microbatch / chunks (best of unpublished)", "range", "1F1B"],
                          [[r.model, r.tp, r.pp, r.gpus, r.batch, r.measured_tflops, f"{r.simulated_tflops:.1f}",
                            pc(r.error_pct), f"{r.microbatch} / {r.chunks}",
                            f"{r.range_lo_error_pct:+.1f} … {r.range_hi_error_pct:+.1f} %",
                            pc(r.get("error_1f1b_pct"))] for _, r in h1.iterrows()]))
    lines += ["", f"Mean error {h1.error_pct.mean():+.1f} %, mean |error| {h1.error_pct.abs().mean():.1f} % (range "
              f"{h1.error_pct.min():+.1f} … {h1.error_pct.max():+.1f} %; goal: each within 10 %, mean 5 %): the goal "
              "is not met. No per-run factor: one device file, the configuration above.", "",
              "Where the time goes (seconds per iteration; the measured step is the FLOPs over the published TFLOP/s; "
              "toposweep's compute is its critical stage's; the last three columns: the error with the same "
              "configuration on an H100 whose GEMMs all run at 0.60 of peak, or whose SM clock is 13 % lower, or "
              f"whose data-parallel collectives hold {int(h1.dp_sms.iloc[0])} of its 132 SMs while they overlap "
              "compute (`strategy.dp_sms`, docs/models.md \"The DP collectives' SMs\"; the device file's "
              "`collective_sms`, assumed) — sensitivities, not fits):", ""]
    lines.append(md_table(["model", "measured step", "toposweep step", "compute", "exposed comm", "bubble",
                           "DP / TP / PP busy", "compute / measured step", "GEMM 0.60", "clock −13 %",
                           f"DP on {int(h1.dp_sms.iloc[0])} SMs"],
                          [[r.model, f"{r.measured_iteration_s:.3f}", f"{r.iteration_s:.3f}", f"{r.compute_s:.3f}",
                            f"{r.exposed_comm_s:.3f}", f"{r.bubble_s:.3f}",
                            " / ".join("—" if pd.isna(r.get(k)) else f"{r.get(k):.2f}" for k in
                                       ("busy_data_parallel_s", "busy_tensor_parallel_s", "busy_pipeline_parallel_s")),
                            f"{r.compute_s / r.measured_iteration_s:.2f}", pc(r.error_gemm060_pct),
                            pc(r.error_clock87_pct), pc(r.error_dp_sms_pct)] for _, r in h1.iterrows()]))
    lines += ["", "What the breakdown says:", "",
              f"- **toposweep's compute alone is {cm.min():.0%}–{cm.max():.0%} of every measured step**, so the gap "
              f"is not only a schedule choice: whatever the runs' microbatch size and chunk count, {1 - cm.max():.0%}–"
              f"{1 - cm.min():.0%} of each measured step is time toposweep's compute does not have; its own "
              f"non-compute time (exposed communication + bubble) is {nc_.min():.0%}–{nc_.max():.0%} of its step.",
              "- **1.7B and 7.1B** (TP 1–2, no pipeline, DP gradients of 1.7–3.5 B parameters well hidden under the "
              f"backward) are {small.error_pct.min():+.0f} … {small.error_pct.max():+.0f} % fast with "
              f"{small_exposed.min():.0%}–{small_exposed.max():.0%} of their step in exposed communication: their gap "
              "is compute. Candidates, none "
              "measured here: smaller GEMMs than the fit's (hidden 2048: the operator table's GEMMs with K ≤ 2048 "
              "at 4k–8k tokens run at 0.44–0.66 of peak against the fitted 0.687; column `GEMM 0.60` above); "
              "sustained clocks under power capping (column `clock −13 %`) are **measured now and too small**: one H100 "
              "running whole layers back to back for 20–30 s at its 700 W cap drops to 1.4–1.6 GHz yet keeps "
              "0.95–0.99 of its burst speed (405B and 8B at 8k tokens 0.99, 22B and 175B at 2k 0.94–0.95; an "
              "8192³ GEMM alone 0.86: 660–675 against 774 TFLOP/s), `h100_ops.json` / `h100_ops_kernels.json` "
              "`sustained` (`docs/validation/reference/hopper/op_bench.py`); per-iteration framework "
              "overheads, which the README says are included (data loading, logging), weigh most on the shortest "
              "steps (0.45 s at 1.7B).",
              "- **16B and 32B** read +6.4 % and -1.8 % only while toposweep left ZeRO-1's parameter AllGather "
              "after the optimizer step exposed (about 0.16 s of 32B's 0.18 s of exposed communication: 7.6 GB of bf16 "
              "weights over one 400 Gb/s NIC per GPU). Megatron's `--overlap-param-gather` gathers them bucket by "
              "bucket under the next forward, which `strategy.param_gather_overlap` now models: they read "
              f"{mid.error_pct.min():+.1f} … {mid.error_pct.max():+.1f} %, in line with 1.7B and 7.1B, and the "
              "pipelined runs lose their exposed gather too (70B-462B were +16 … +24 % before it).",
              "- **The pipelined runs (70B–462B)** hinge on the inferred interleaving: with it their bubble is "
              f"{bub.min():.2f}–{bub.max():.2f} s and they are {pp_.error_pct.min():+.0f} … {pp_.error_pct.max():+.0f} % "
              f"fast; with 1F1B (column `1F1B`) they are {pp_.error_1f1b_pct.min():+.1f} … "
              f"{pp_.error_1f1b_pct.max():+.1f} %, but then "
              "the compute gap of the smaller runs would have to vanish exactly where the pipeline bubble appears. "
              "One reading consistent with all nine rows (not established) is a compute/overhead shortfall common to every run, plus a "
              "pipeline cost that toposweep's interleaved schedule underestimates for short chunks (column `clock "
              "−13 %`: 119B and 177B stay furthest out). Megatron's own "
              "interleaved schedule says \"asynchronous communication tends to slow down compute\" "
              "(`megatron/core/pipeline_parallel/schedules.py`); toposweep charges SM contention to overlapped TP "
              "collectives (each under its own GEMM) and to overlapped expert-parallel All-to-Alls "
              "(`strategy.ep_sms`), and to overlapped DP collectives only on request (`strategy.dp_sms`, column "
              f"`DP on {int(h1.dp_sms.iloc[0])} SMs`), not to PP transfers. With the DP collectives on "
              f"{int(h1.dp_sms.iloc[0])} SMs the rows read {h1.error_dp_sms_pct.min():+.1f} … "
              f"{h1.error_dp_sms_pct.max():+.1f} % (mean |error| {h1.error_dp_sms_pct.abs().mean():.1f} %): it moves "
              "the runs whose gradients reduce under a long backward without a pipeline (16B, 32B) most, the "
              "smallest and the pipelined ones (whose last buckets reduce after the backward, so the slowed "
              "compute hides under them) little, so it does not explain the gap the runs share.",
              "- No modelling change was made: none of these is measured for this cluster, and a device-wide "
              "derate would break the measured single-GPU layers (section 7b, where the H100 is already 3–9 % slow "
              "on fused-attention layers). What would settle it: the runs' launch scripts (microbatch, virtual "
              "stages); a sustained single-GPU measurement (above) already rules out power capping as more than 1–6 %.",
              "", "### Caveats", "",
              "- **The split between GEMM and memory-bound time is weakly determined by Table 4.** A joint least-squares "
              "fit of both parameters to its ten numbers lies in a flat valley; its optimum (GEMM 0.705, 1.71 TB/s) "
              f"gives Table 5 mean {ej.mean():.1f} %, max {ej.max():.1f} % here (errors "
              + ", ".join(f"{x:+.1f}" for x in tj.error_pct) + " %), which fails the goal. The adopted two-stage fit takes the memory "
              "bandwidth from the one Table 4 contrast that isolates memory-bound kernels (selective recomputation "
              "re-runs only QKᵀ, softmax, dropout and ×V: +1.3 ms), then the GEMM fraction by least squares. Both "
              "use Table 4 only, and the choice was made on physical grounds, **but after having seen Table 5 "
              "results** (research notes of issue 16).",
              "- **SC'21 needs the 2021 code's behaviour** (blocking TP all-reduce, no gradient-accumulation fusion, "
              "fp16 gradients): with the 2022 code's options the deep-pipeline rows move up to the '2022 code' "
              "column above. Both are facts from Megatron-LM's history, modelled as options.",
              "- **SP + selective is a little fast** (175B and 530B about −4 %): ReduceScatter and AllGather are priced "
              "like an AllReduce's halves on NVLink, while the paper reports them slower together; an nccl-tests "
              "RS/AG source would pin it.",
              "- **Best over choices is optimistic by construction** for the mid-size SC'21 rows, whose feasible "
              "choices span a wide range (column `their range`).",
              "- **530B with DP 8** is 6 % fast: the model's one gradient reduction (fp32, one NIC per rank) costs less "
              "than the paper's 1.3 s step-time increase.",
              "- **The V100 is not calibrated** (its device file says NOT CALIBRATED). The H100 is calibrated on "
              "single-GPU operator tables only: its multi-GPU clocks, power behaviour and communication are not.",
              "- The allocator reserve is bounded, not measured; no published per-GPU memory measurement of these runs "
              "was found."]
    notes.append(f"Megatron-LM on Selene (held out; A100 calibrated on Korthikanti Table 4 only): Korthikanti Table 5 "
                 f"mean |error| {e5.mean():.2f} %, max {e5.max():.2f} % (Calculon {c5.mean():.2f} / {c5.max():.2f}); "
                 f"SC'21 Table 1 every row within {esc.max():.2f} % (mean {esc.mean():.2f} %); SC'21 Table 2 max "
                 f"{t2.error_pct.abs().max():.2f} %; nccl-tests bus bandwidths within "
                 f"{nc.error_pct.abs().max():.2f} %; memory feasibility agrees on {agree} of {len(mem)} cells; "
                 f"Megatron-Core H100 (held out; H100 fitted on operator tables; each run's published configuration, "
                 f"best only over its unpublished microbatch size and chunk count) {h1.error_pct.min():+.1f} … "
                 f"{h1.error_pct.max():+.1f} %, mean |error| {h1.error_pct.abs().mean():.1f} % (goal not met; "
                 f"toposweep's compute alone is {cm.min():.0%}–{cm.max():.0%} of each measured step).")
    return lines


def section_hopper(df, notes):
    df.to_csv(os.path.join(FIGS, "hopper_layers.csv"), index=False)
    fit = exp_hopper.fit_hopper.fit()
    summ = exp_hopper.summary(df.to_dict("records"))
    lines = ["", "## 7b. Hopper: measured H100 and H200 layers (held out)",
             "One transformer layer's forward + backward on one tensor-parallel rank, without communication, measured "
             "on one H100 80GB SXM and one H200 (PyTorch 2.11, bf16; `docs/validation/reference/hopper/`, whose "
             "README gives the GPUs, drivers and clocks) against `toposweep simulate` with the `h100` / `h200` "
             "devices (driver: `scripts/validation/exp_hopper.py`).",
             "",
             "**Calibrated on** the operator tables of the same files only (`scripts/validation/fit_hopper.py`): "
             f"GEMM efficiency {fit['h100']['gemm_efficiency']} (H100) / {fit['h200']['gemm_efficiency']} (H200) "
             "from the 48 GEMM shapes' forward and backward times (no wave quantisation, which fits Hopper's cuBLAS "
             "better than cuBLAS's large tiles) less a per-call timing overhead; memory-bound "
             f"bandwidth {fit['h100']['memory_Bps'] / 1e12:.2f} / {fit['h200']['memory_Bps'] / 1e12:.2f} TB/s "
             f"(memory_efficiency {fit['h100']['memory_efficiency']} / {fit['h200']['memory_efficiency']}) from the "
             "memory-bound operators against the bytes the model counts for each kernel; fused attention "
             f"{fit['attention_cudnn']['forward']} / {fit['attention_cudnn']['backward']} of peak forward / backward "
             "for cuDNN (causal, sequence 2k–8k; Transformer Engine's kernels; FlashAttention-2 reaches "
             f"{fit['attention_flash']['forward']} / {fit['attention_flash']['backward']}). **Held out:** every row "
             "of `layers` below (none of them calibrated anything).",
             "",
             "How the layers ran and what the calls set to match: no biases; bf16 gradients accumulated by PyTorch "
             "(`grad_accum_fusion = false`, `grad_datatype = bf16`); `flash` rows ran PyTorch SDPA, which prefers "
             "cuDNN's attention on sm90 with cuDNN > 9.15 (the runs had 9.19), so they run the device as it is "
             "(`model.fused_attention = true`); `unfused` rows ran layer_bench.py's attention core (scale, masked_fill, "
             ".float(), softmax, .to(bf16) and dropout as separate PyTorch kernels), so they run "
             "`model.fused_attention = false` with `model.softmax = eager` (the byte counts of that chain, "
             "`src/workload/block_softmax.cpp`). One layer = the `compute_time_s` "
             "difference between a 2-layer and a 1-layer model, per microbatch (TP collectives not overlapped, so "
             "not in compute).", ""]
    lines.append(md_table(["GPU", "model", "t", "seq", "b", "attention", "recompute", "measured ms", "toposweep ms",
                           "error"],
                          [[r.gpu, r.model, r.tp, r.seq, r.mbs, r.attention, r.recompute, f"{r.measured_ms:.2f}",
                            f"{r.simulated_ms:.2f}", pc(r.error_pct)] for _, r in df.iterrows()]))
    llama = df[df.llama_keys.notna()]
    keys = "with" if len(llama) and bool(llama.llama_keys.iloc[0]) else "without"
    def mx(k):
        return f"max {summ[k]['max_abs_pct']:.1f} %, mean {summ[k]['mean_abs_pct']:.1f} %"

    lines += ["", f"|error| over all 16 rows of each GPU: H100 {mx('h100')}; H200 {mx('h200')}. Over the 11 "
              f"fused-attention rows: H100 {mx('h100_flash')}; H200 {mx('h200_flash')}. Over the 5 unfused rows: "
              f"H100 {mx('h100_unfused')}; H200 {mx('h200_unfused')}. Goal (issue 32): every row within 8 %, mean "
              f"4 %: not reached. Llama rows ran {keys} the RMSNorm / rotary model keys"
              + (" (RMSNorm and RoPE costed as layer_bench.py runs them)." if keys == "with" else
                 " (the binary rejects them; RoPE and RMSNorm are then costed as the model's norm and no rotary "
                 "kernel)."),
              "", "The eager attention core kernel by kernel (`h100_ops.json` / `h200_ops.json` `unfused_attention`: each "
              "kernel timed alone with CUDA events, median of 20; `op_bench.py`) against the device file's memory "
              "bandwidth and GEMM fraction with the chain's byte counts, nothing fitted (ms, measured / model; "
              "the batched GEMMs' backward here is two of their forward each, the `core` row is the model's own "
              "sum):", ""]
    for gpu in ("h100", "h200"):
        ek = exp_hopper.eager_kernels(gpu)
        cases = list(dict.fromkeys(r["case"] for r in ek))
        ops = list(dict.fromkeys(r["op"] for r in ek))
        lines.append(md_table([f"{gpu} kernel"] + [f"{c} fwd" for c in cases] + [f"{c} bwd" for c in cases],
                              [[op] + [next((f"{r['measured_fwd_ms']:.3f} / {r['model_fwd_ms']:.3f}" for r in ek
                                             if r["case"] == c and r["op"] == op), "")
                                       for c in cases]
                               + [next((f"{r['measured_bwd_ms']:.3f} / {r['model_bwd_ms']:.3f}" for r in ek
                                        if r["case"] == c and r["op"] == op), "")
                                  for c in cases] for op in ops]))
        lines.append("")
    lines += ["", "What limits it:",
              "- **Unfused rows**: the whole eager core agrees with its byte counts within 5–7 % (H100) and 2–5 % "
              "(H200) at b = 4 "
              "(`core` above), but single kernels spread: masked_fill with its broadcast mask runs at half the "
              "fitted bandwidth, the fp32 softmax backward at two thirds, the casts and the scale faster than it. "
              "At b = 1 (0.8–1 ms cores) each isolated call carries tens of µs of dispatch the model has no term "
              "for, and the 22B layer at b = 1 (3.1–3.6 ms, about 90 kernels) is the one row the model makes "
              "more than 8 % fast.",
              "- **Fused-attention rows** (model slow by up to 11 %, most at 2k tokens): two errors of opposite "
              "sign. The profiler's kernel times inside the layers (`h100_ops.json` `kernels`) show the GEMMs "
              "running at 0.79–0.81 of peak (175B t 8 at 2k: 3.54 ms of GEMM kernels where the model charges 4.10; "
              "405B t 8 at 8k with full recomputation: 32.7 against 38.4), and the layers' GEMM shapes timed "
              "alone by the profiler (`h100_ops_kernels.json` `gemm_kernels`) run at a median 781 TFLOP/s "
              "(0.79): the fitted 0.687 is low because CUDA events around one call also time its dispatch, which "
              "the fit's per-call offset only partly removes. Against that, a layer is 1–10 % longer than the sum "
              "of its kernels (175B t 8 at 2k: 5.59 ms against 5.03 ms of kernels; 405B at 8k: 44.8 against "
              "42.7; 175B t 4: 9.78 against 9.67): launch gaps the model has no term for. The model's memory-bound "
              "kernels are 20 % over the profiled ones at 2k (L2 reuse: a 2048 × 12288 bf16 tensor is 50 MB, the "
              "H100's L2 50 MB), its cuDNN attention at 2k is 45 % under (one fraction of peak per direction, "
              "while cuDNN runs 3× slower at 2k with few heads than at 16k, `attention` table).",
              "- One GEMM fraction: timed with CUDA events, small-K row-parallel GEMMs (the output projection at "
              "tp 8) run at half of it; timed by the profiler, at 0.64–0.80 of peak like the rest. No wave "
              "quantisation fits Hopper's cuBLAS better than cuBLAS's large tiles (fit_hopper.py prints both).",
              "- Not changed here: refitting the GEMM fraction on kernel times (0.79) would make every layer's "
              "kernels right and every layer 1–10 % fast by its launch gaps, and the multi-GPU H100 runs "
              "(Megatron-Core, above: already 15 % fast) faster still; the gaps, not the kernels, need a measured "
              "model first."]
    notes.append(f"Hopper layers (held out; devices fitted on the operator tables only): all rows H100 {mx('h100')}, "
                 f"H200 {mx('h200')}; fused-attention rows H100 {mx('h100_flash')}, H200 {mx('h200_flash')} "
                 "(goal 8 % / 4 % not reached; unfused rows with the eager softmax chain they ran).")
    return lines


def section_llama3(df, notes):
    df.to_csv(os.path.join(FIGS, "llama3_405b.csv"), index=False)
    lines = ["", "## 7c. Llama 3 405B on 8,192 and 16,384 H100 (held out)",
             "The published 4-D layouts and TFLOP/s per GPU of Llama 3 405B pre-training (Dubey et al. 2024, "
             "arXiv:2407.21783, Table 4; also Balaji, SC'24) against `toposweep simulate` (driver: "
             "`scripts/validation/exp_llama3.py`). Nothing was fitted on them: the H100 is the device fitted on the "
             "single-GPU operator tables (section 7b).",
             "",
             "Cluster as published: 8 H100 SXM per server on NVLink, one 400 Gb/s RoCE NIC per GPU; modelled as one "
             "non-blocking switch (the paper's Clos is 1:7 oversubscribed above 3,072-GPU pods: not modelled). "
             "Published per row: TP, CP, PP, DP, sequence, batch; in the text (Sec. 3.3.2), the pipeline balanced by "
             "\"one Transformer layer [fewer] each [on] the first and the last stages\": the embedding and the output "
             "layer each take a layer's place (`strategy.stage_split = ends`). Not published, chosen and stated: bf16 "
             "with fp32 "
             "gradient buffers, fused (cuDNN) attention, sequence parallelism with overlapped TP communication, one "
             "sequence per microbatch, and, over the knobs the paper leaves open, the fastest feasible choice of "
             "interleaving depth, recomputation and ZeRO stage (listed per row). TFLOP/s count 6 N per token plus "
             "the attention products; the paper does not say whether causal attention counts half, so both are "
             "shown: `causal` (6 L h s per token, the work flash attention does) and `full` (12 L h s, PaLM's MFU "
             "convention).", ""]
    lines.append(md_table(["GPUs", "TP", "CP", "PP", "DP", "seq", "measured TFLOP/s", "toposweep (causal)",
                           "error", "toposweep (full)", "error", "chosen: chunks, recompute, ZeRO",
                           "compute / exposed comm / bubble s"],
                          [[r.gpus, r.tp, r.cp, r.pp, r.dp, r.seq, f"{r.measured_tflops:.0f}",
                            f"{r.causal_tflops:.0f}", pc(r.error_causal_pct), f"{r.model_tflops:.0f}",
                            pc(r.error_pct), f"{r.virtual_stages}, {r.recompute}, {r.zero}",
                            f"{r.compute_s:.2f} / {r.exposed_comm_s:.2f} / {r.bubble_s:.2f}"]
                           for _, r in df.iterrows()]))
    ec = df.error_causal_pct.abs()
    lines += ["", f"Causal count: every row within {ec.max():.1f} %, mean |error| {ec.mean():.1f} % (goal: 10 % / "
              "5 %). With the full count the 131k-token row is "
              f"{df.error_pct.iloc[2]:+.0f} %: at 131k tokens attention is most of the work, so only the causal count "
              "is consistent with all three rows at once; the paper's convention is not stated.",
              "- The interleaving depth is the fastest of 1, 2, 4 and 8 virtual stages. Since `strategy.stage_split = "
              "ends` admits a chunk holding the embedding or the output layer alone (this stop: 16 x 8 = 128 chunks "
              "for 126 blocks and the two ends, one slot each), 8 is feasible and the fastest in the model for every "
              "row; with every chunk holding a block, as before it, the best reads "
              + ", ".join(f"{pc(r.block_chunks_error_causal_pct)} (v = {r.block_chunks_virtual_stages:.0f})"
                          for _, r in df.iterrows()) + " (causal). Meta's depth is not published; the best over "
              "unpublished choices is optimistic by construction.",
              "- The published stage balance matters: with the blocks split evenly (the head on a full last stage) "
              "the rows read -11.6 %, -6.2 % and +1.6 % (causal; this section before `strategy.stage_split`).",
              f"- The 8k rows read {pc(df.error_causal_pct.iloc[0])} and {pc(df.error_causal_pct.iloc[1])}, the "
              f"16,384-GPU one with {df.exposed_comm_s.iloc[1]:.2f} s of exposed data-parallel communication: under "
              "ZeRO-2 the model reduce-scatters every microbatch's gradients (DeepSpeed's rule) where Meta's FSDP "
              "keeps them until the step (not measured).",
              f"- The 131k-token row (CP 16) reads {pc(df.error_causal_pct.iloc[2])} at "
              f"{df.virtual_stages.iloc[2]:.0f} virtual stages, with a {df.bubble_s.iloc[2]:.2f} s bubble in the "
              "model; what Meta's schedule loses there is not published."]
    notes.append(f"Llama 3 405B on 8,192 / 16,384 H100 (held out, Table 4 of the Llama 3 paper, CP 16 at 131k "
                 f"tokens included): every row within {ec.max():.1f} %, mean {ec.mean():.1f} % (causal FLOP count).")
    return lines


def dispatcher_line(df):
    """7e: Mixtral with DeepEP's one-copy-per-node dispatch against NCCL's All-to-All, per fabric at 400 Gb/s."""
    a = df[(df.model == "mixtral-8x7b") & (df.bandwidth == "400Gbps")].set_index("fabric")
    b = df[(df.model == "mixtral-8x7b, DeepEP") & (df.bandwidth == "400Gbps")].set_index("fabric")
    gain = 100 * (1 - b.iteration_time_s / a.iteration_time_s)
    return ("- With DeepEP's dispatcher (`strategy.ep_dispatcher = deepep`: a token crosses the network once per "
            "destination node, 11/14 of NCCL's bytes for top-2 of 8 experts over two servers; docs/models.md "
            "\"Dispatcher\") Mixtral's fastest iteration at 400 Gb/s is "
            + ", ".join(f"{f} {gain[f]:.1f} %" for f in a.index if f in gain.index)
            + " shorter; its best layouts: " + ", ".join(f"{f} {b.strategy[f]}" for f in a.index if f in b.index)
            + ".")


def section_fabrics(df, notes):
    df.to_csv(os.path.join(FIGS, "fabrics.csv"), index=False)
    lines = ["", "## 7e. Today's fabrics: Mixtral 8x7B and Llama 3 70B on 1,024 H100 (no measurement: a comparison)",
             "One sweep per model (driver: `scripts/validation/exp_fabrics.py`, analytical model): 128 servers of 8 "
             "H100 over a non-blocking switch, a 3-tier fat-tree, a rail-optimized Clos (8 rails, full spine), "
             "rail-only (no spine: cross-rail traffic relays through the server), TopoOpt, a 3-D torus 8×4×4 and a "
             "dragonfly (4 groups × 4 routers × 8 servers, 3 global links per router), at 100, 200 and 400 Gb/s per "
             "link. Switch, fat-tree and TopoOpt have 8 NICs per server (degree 8), rail one per GPU, the torus 6 "
             "links per server, the dragonfly one port per server (its family's terminals). Per fabric and "
             "bandwidth the fastest strategy the sweep finds: Mixtral over tp ≤ 2, pp ≤ 8, ep ∈ {1, 4, 8} (batch "
             "512 × 4,096 tokens), Llama over tp ≤ 8, pp ≤ 8 (batch 256 × 8,192); sequence parallelism, ZeRO-1. "
             "Costs: the network's bill of materials (`topology --json`, default cost table).", ""]
    for model, g in df.groupby("model", sort=False):
        lines += [f"**{model}**", ""]
        lines.append(md_table(["fabric", "link", "iteration s", "network cost", "best strategy",
                               "compute / exposed comm / bubble s"],
                              [[r.fabric, r.bandwidth, f"{r.iteration_time_s:.3f}", f"${r.cost_usd / 1e6:.2f}M",
                                r.strategy, f"{r.compute_s:.3f} / {r.exposed_comm_s:.3f} / {r.bubble_s:.3f}"]
                               for _, r in g.iterrows()]))
        # Equal cost: every family's cheapest point at least as fast as the switch at 400 Gb/s (within 1 %).
        ref = g[(g.fabric == "switch") & (g.bandwidth == "400Gbps")].iloc[0]
        reach = []
        for fabric, h in g.groupby("fabric", sort=False):
            ok = h[h.iteration_time_s <= ref.iteration_time_s * 1.01]
            reach.append(f"{fabric} {'$%.2fM' % (ok.cost_usd.min() / 1e6) if len(ok) else 'never (' + '%.3f s best)' % h.iteration_time_s.min()}")
        lines += ["", f"Cheapest network within 1 % of the switch's {ref.iteration_time_s:.3f} s at 400 Gb/s: "
                  + "; ".join(reach) + ".", ""]
        ro = g[g.fabric == "rail-only"].set_index("bandwidth")
        rf = g[g.fabric == "rail-optimized"].set_index("bandwidth")
        ft = g[g.fabric == "fat-tree"].set_index("bandwidth")
        saving = 100 * (1 - ro.cost_usd / rf.cost_usd)
        saving_ft = 100 * (1 - ro.cost_usd / ft.cost_usd)
        slower = 100 * (ro.iteration_time_s / rf.iteration_time_s - 1)
        lines.append(f"Rail-only against rail-optimized: {saving.min():.0f}–{saving.max():.0f} % lower network cost "
                     f"({saving_ft.min():.0f}–{saving_ft.max():.0f} % below the fat-tree) at "
                     f"{slower.min():+.2f} … {slower.max():+.2f} % iteration time.")
        notes.append(f"Fabrics, {model} on 1,024 H100: rail-only {saving.min():.0f}–{saving.max():.0f} % cheaper "
                     f"than rail-optimized at {slower.min():+.2f} … {slower.max():+.2f} % time (Wang et al. 2024 "
                     "claim 38–77 % lower cost at equal time: reproduced in this model, see 7e's caveats).")
    lines += ["", "What the model says, and what it leaves out:",
              "- Llama's fastest layouts keep TP inside the server; what crosses servers is DP (same local rank, so the same rail) and PP traffic, so switch, fat-tree, rail-optimized and rail-only give the same time within 0.1 % while their costs differ by up to 2.6× (Wang et al.'s point: LLM traffic is rail-local). Mixtral's fastest layout is ep 8 with tp 2 on every Clos-like fabric: its All-to-All spans two servers and crosses rails, and the fabrics differ by up to 2 % (the spine's extra hop); TopoOpt's rings, which carry that All-to-All over relays, prefer ep 4 (one server) and are 24 % slower at 400 Gb/s.",
              dispatcher_line(df),
              "- Rail-only's relay through the server (PXN) is charged to the server's fabric (docs/topology.md). "
              "Mixtral's ep 8 All-to-All across two servers pays it as the two-level All-to-All's intra-node part "
              "(S(g−1)/g per GPU over NVLink: the PXN gather that puts every byte for the other server on the GPU "
              "of its destination's rail), on every Clos-like fabric alike; what else would relay (pipeline sends "
              "and one-GPU-per-server groups between different local ranks) does not occur in this grid, whose "
              "layouts are rail-aligned: charging the relay changed none of the 840 points. A switch with 8 ports "
              "per server costs the same as rail-only with one 128-port switch per rail here, as it should.",
              "- The torus and the dragonfly have fewer or narrower server links (6 links; one port), so they are cheaper and slower; the dragonfly's global links carry every inter-group flow. TopoOpt's rings cost least among the 8-NIC designs but are slower for both models (their strides were not optimized for the traffic here: `point.optimize` is off in this sweep)."]
    return lines


def section_mbridge_fp8(rows, notes):
    pd.DataFrame(rows).to_csv(os.path.join(FIGS, "mbridge_fp8.csv"), index=False)
    return exp_mbridge_fp8.markdown(rows, notes)


def section_mbridge_moe(rows, notes):
    pd.DataFrame(rows).to_csv(os.path.join(FIGS, "mbridge_moe.csv"), index=False)
    return exp_mbridge_moe.markdown(rows, notes)


def section_moe_zoo(rows, notes):
    pd.DataFrame(rows).to_csv(os.path.join(FIGS, "moe_zoo.csv"), index=False)
    return exp_moe_zoo.markdown(rows, notes)


def section_moe(rows, notes):
    pd.DataFrame(rows).to_csv(os.path.join(FIGS, "moe_runs.csv"), index=False)
    return exp_moe.markdown(rows, fit_hopper.fit(), notes)


def preflight():
    """Refuse a binary that is missing or whose commands are stubs, before spending minutes on it."""
    try:
        tscli.run("simulate", {"topology.servers": 2, "model.name": "resnet50"})
    except (tscli.CliError, OSError, ValueError) as e:
        sys.exit(f"validate: {tscli.binary()} cannot simulate a design point: {e}")


def main():
    preflight()
    os.makedirs(FIGS, exist_ok=True)
    t0 = time.time()
    notes, body, timing = [], [], []
    section_notes = {}
    for name, fn in (("forest", lambda n: section_forest(pd.DataFrame(exp_forest.run(WORK)), n)),
                     ("multidim", lambda n: section_multidim(pd.DataFrame(exp_multidim.run()), n)),
                     ("multijob", lambda n: section_multijob(pd.DataFrame(exp_multijob.run(WORK)), n)),
                     ("placement", lambda n: section_placement(pd.DataFrame(exp_placement.run(WORK)), n)),
                     ("topoopt", lambda n: section_topoopt(pd.DataFrame(exp_topoopt.run()), n)),
                     ("megatron", lambda n: section_megatron(exp_megatron.run(WORK), n)),
                     ("hetero", lambda n: section_hetero(pd.DataFrame(exp_hetero.run(WORK)), n)),
                     ("hopper", lambda n: section_hopper(pd.DataFrame(exp_hopper.run(WORK)), n)),
                     ("llama3", lambda n: section_llama3(pd.DataFrame(exp_llama3.run()), n)),
                     ("mbridge_fp8", lambda n: section_mbridge_fp8(exp_mbridge_fp8.run(), n)),
                     ("moe", lambda n: section_moe(exp_moe.run(), n)),
                     ("mbridge_moe", lambda n: section_mbridge_moe(exp_mbridge_moe.run(), n)),
                     ("moe_zoo", lambda n: section_moe_zoo(exp_moe_zoo.run(), n)),
                     ("fabrics", lambda n: section_fabrics(pd.DataFrame(exp_fabrics.run(WORK)), n)),
                     ("fabrics16k", lambda n: exp_fabrics_16k.markdown(exp_fabrics_16k.run(), n))):
        t = time.time()
        print(f"validate: {name} ...", file=sys.stderr, flush=True)
        section_notes[name] = []
        body.append((name, fn(section_notes[name])))
        timing.append(f"{name} {time.time() - t:.0f} s")
    order = ["topoopt", "multidim", "forest", "placement", "multijob", "megatron", "hetero", "hopper", "llama3",
             "mbridge_fp8", "moe", "mbridge_moe", "moe_zoo", "fabrics", "fabrics16k"]
    body.sort(key=lambda x: order.index(x[0]))
    notes = sum((section_notes[name] for name in order), [])
    rev = subprocess.run([tscli.binary(), "--version"], capture_output=True, text=True).stdout.strip()
    head = ["# Validation: toposweep against the seed papers",
            "",
            f"Regenerated by `scripts/validate.sh` on {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC with `{rev}` "
            f"in {time.time() - t0:.0f} s ({', '.join(timing)}). Every number below was read from "
            "`toposweep <command> --json`; raw rows are in `docs/validation/*.csv`. Inputs: "
            "`inputs/sweeps/validation/`; drivers: `scripts/validation/`.", "",
            "Regenerate: `scripts/validate.sh [path/to/toposweep]` (default `build/toposweep`; `VALIDATE_JOBS` "
            "parallel CLI calls, default 2). The fast subset of the relations below runs in CTest: "
            "`ctest -L validation` (`tests/validation/`)."]
    tail = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "discussion.md")).read()
    text = head + sum((b for _, b in body), []) + ["", tail, "", "## Headline numbers", ""] + [f"- {n}" for n in notes]
    with open(os.path.join(DOCS, "validation.md"), "w") as f:
        f.write("\n".join(text) + "\n")
    print(f"validate: wrote docs/validation.md in {time.time() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
