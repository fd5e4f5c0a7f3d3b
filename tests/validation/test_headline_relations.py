"""Headline relations of the seed papers, on instances small enough for seconds (docs/validation.md has the
full tables). Every number is read from `toposweep ... --json`."""
import os

import numpy as np
import pytest

import exp_forest
import exp_multidim
import exp_multijob
import exp_placement
import tscli

REL = 1e-9

# --- LIBRA: an optimised allocation is never worse than the equal split of the same budget ---------------
SMALL_MULTIDIM = {"topology.kind": "multidim", "topology.dims": "ring:4,fc:4,switch:8",
                  "topology.dim_bandwidth": "400GB/s,200GB/s,50GB/s", "topology.dim_latency": "20ns,100ns,1us",
                  "optimize.total_bandwidth": "650GB/s"}
COLLECTIVES = [("allreduce", "1GB"), ("allgather", "256MiB"), ("reducescatter", "256MiB"), ("alltoall", "64MiB")]
MODELS = [{"model.name": "resnet50", "strategy.dp": 128},
          {"model.name": "bert-large", "strategy.tp": 4, "strategy.dp": 32},
          {"model.name": "gpt3-1.3b", "strategy.tp": 16, "strategy.dp": 8, "strategy.recompute": "true"}]


@pytest.mark.parametrize("objective", ["time", "time_x_cost"])
@pytest.mark.parametrize("op,size", COLLECTIVES)
def test_allocation_never_worse_than_equal_split_collective(op, size, objective):
    r = tscli.run("optimize", {**SMALL_MULTIDIM, "optimize.objective": objective}, [],
                  ["--target", "bandwidth", "--op", op, "--bytes", size])
    assert r["objective_value"] <= r["baseline_objective_value"] * (1 + REL)
    assert sum(r["dim_bandwidth_Bps"]) <= 650e9 * (1 + 1e-6)


@pytest.mark.parametrize("objective", ["time", "time_x_cost"])
@pytest.mark.parametrize("workload", MODELS, ids=lambda w: w["model.name"])
def test_allocation_never_worse_than_equal_split_model(workload, objective):
    r = tscli.run("optimize", {**SMALL_MULTIDIM, **workload, "optimize.objective": objective}, [],
                  ["--target", "bandwidth"])
    assert r["objective_value"] <= r["baseline_objective_value"] * (1 + REL)
    if objective == "time":
        assert r["iteration_time_s"] <= r["baseline_iteration_time_s"] * (1 + REL)


def test_allreduce_allocation_matches_closed_form():
    """docs/optimizers.md, bandwidth allocation by hand on 4x4x8: sizes 2m(n-1)/n with m shrinking; optimum sum(size)/B, equal split
    max(size)/(B/3). 1 GB: 1.5 GB, 0.375 GB, 0.109375 GB -> 1.984375e9 / 650e9 s and 1.5e9 / (650e9/3) s."""
    r = tscli.run("optimize", SMALL_MULTIDIM, [], ["--target", "bandwidth", "--op", "allreduce", "--bytes", "1GB"])
    assert r["time_s"] == pytest.approx(1.984375e9 / 650e9, rel=1e-6)
    assert r["baseline_time_s"] == pytest.approx(1.5e9 / (650e9 / 3), rel=1e-9)
    # the optimum equalises the per-dimension times: bw_k proportional to size_k
    assert r["dim_bandwidth_Bps"] == pytest.approx([650e9 * s / 1.984375e9 for s in (1.5e9, 0.375e9, 0.109375e9)],
                                                   rel=1e-5)


def test_closed_form_helper_on_the_4d_network():
    t_opt, t_eq, sizes = exp_multidim.closed_form_allreduce(1e9, 1750e9)
    assert sizes == [1.5e9, 4.375e8, 4.6875e7, 1.513671875e7]
    assert t_eq == pytest.approx(1.5e9 / 437.5e9)


# --- Forest (INFOCOM'21): never slower than ring, never faster than the cut bound -----------------------
@pytest.fixture(scope="module")
def forest_cases(tmp_path_factory):
    work = tmp_path_factory.mktemp("forest")
    cases = exp_forest.cases(str(work))
    for seed in range(11, 15):
        p = os.path.join(str(work), f"random-small-{seed}.topo")
        exp_forest.random_heterogeneous(p, 7, 5, seed)
        cases[f"random7-{seed}"] = p
    return cases


def collective(path, alg, size="1GB"):
    return tscli.run("collective", {"server.gpus": 1}, [], ["--topology-file", path, "--algorithm", alg, "--bytes", size])


def test_forest_never_slower_than_ring_and_respects_the_cut_bound(forest_cases):
    for name, path in forest_cases.items():
        forest, ring = collective(path, "forest"), collective(path, "ring")
        assert forest["time_s"] <= ring["time_s"] * (1 + REL), name
        # latency aside, a schedule cannot beat the optimum
        assert forest["time_s"] >= forest["optimal_time_s"] * (1 - REL), name
        brute = exp_forest.brute_force_allreduce_bound(path, 1e9)
        if brute is not None:
            assert forest["optimal_time_s"] == pytest.approx(brute, rel=1e-9), name


def test_forest_on_uniform_full_mesh_is_optimal_and_ring_is_7x_slower(forest_cases):
    """8 GPUs, all 56 arcs at 25 GB/s, M = 1 GB per rank. Cut bound 2 x (M/N) x max_S |S ∩ Vc| / B+(S): a set of
    k GPUs sends k(8-k) x 25 GB/s, so the ratio k / (25 k (8-k)) peaks at k = 7: 2 x 0.125 GB x 7 / 175 GB/s
    = 10 ms. A rank-order ring uses one arc per rank: 2 x 7/8 x 1 GB / 25 GB/s = 70 ms."""
    path = forest_cases["8 GPUs fully connected"]
    assert collective(path, "forest")["optimal_time_s"] == pytest.approx(0.010, rel=1e-9)
    assert collective(path, "ring")["time_s"] == pytest.approx(0.070, rel=1e-3)


# --- TopoOpt: more ports never hurt; an ideal switch with the same per-server bandwidth never loses -------
TOPOOPT_MODELS = [{"model.name": "bert-topoopt"}, {"model.name": "resnet50"}, {"model.name": "vgg16"},
                  {"model.name": "dlrm"}, {"model.name": "ncf"}]
SMALL_TOPOOPT = {"topology.servers": 16, "server.gpus": 4, "topology.link_latency": "1us"}


@pytest.mark.parametrize("b", [25, 100])
@pytest.mark.parametrize("model", TOPOOPT_MODELS, ids=lambda m: m["model.name"])
def test_topoopt_degree_8_never_slower_than_degree_4(model, b):
    t = {d: tscli.run("simulate", {**SMALL_TOPOOPT, **model, "topology.kind": "topoopt", "topology.degree": d,
                                   "topology.link_bandwidth": f"{b}Gbps"})["iteration_time_s"] for d in (4, 8)}
    assert t[8] <= t[4] * (1 + REL)


@pytest.mark.parametrize("d,b", [(4, 25), (8, 100)])
@pytest.mark.parametrize("model", TOPOOPT_MODELS, ids=lambda m: m["model.name"])
def test_ideal_switch_never_slower_than_topoopt_at_equal_server_bandwidth(model, d, b):
    """Same strategy (pure DP), same server-to-server latency (two 0.5 us links through the switch vs one 1 us
    topoopt hop), and the switch's one port carries d x B."""
    topo = tscli.run("simulate", {**SMALL_TOPOOPT, **model, "topology.kind": "topoopt", "topology.degree": d,
                                  "topology.link_bandwidth": f"{b}Gbps"})
    switch = tscli.run("simulate", {**SMALL_TOPOOPT, **model, "topology.kind": "switch", "topology.degree": 1,
                                    "topology.link_bandwidth": f"{d * b}Gbps", "topology.link_latency": "500ns"})
    assert switch["iteration_time_s"] <= topo["iteration_time_s"] * (1 + REL)


# --- The sweep engine and the single-point CLI agree on the same designs ---------------------------------
def test_sweep_points_equal_simulate(tmp_path):
    space = tmp_path / "space.ini"
    space.write_text("[topology]\nservers = 16\nlink_latency = 1us\n[server]\ngpus = 4\n"
                     "[space.t]\nmodel.name = resnet50, bert-topoopt\ntopology.kind = topoopt\n"
                     "topology.degree = 4, 8\ntopology.link_bandwidth = 25Gbps, 100Gbps\n")
    out = tmp_path / "r.h5"
    tscli.run("sweep", configs=[str(space)], extra=["--out", str(out)])
    import h5py
    with h5py.File(out, "r") as f:
        points = f["points"][()]
    assert len(points) == 8 and all(points["status"] == 0)
    # sub-spaces order axes by key name: link_bandwidth varies fastest, then degree, kind, model.name
    for p in points:
        i = int(p["index"])
        b, d, m = [25, 100][i % 2], [4, 8][(i // 2) % 2], ["resnet50", "bert-topoopt"][i // 4]
        r = tscli.run("simulate", {"topology.servers": 16, "server.gpus": 4, "topology.link_latency": "1us",
                                   "model.name": m, "topology.kind": "topoopt", "topology.degree": d,
                                   "topology.link_bandwidth": f"{b}Gbps"})
        assert p["iteration_time_s"] == pytest.approx(r["iteration_time_s"], rel=1e-12), (m, d, b)


def test_allocation_replayed_by_simulate_matches_optimize():
    """The optimised allocation, set as topology.dim_bandwidth and simulated, takes the time optimize reported,
    and under the flow model it is still never slower than the equal split (analytical model of item 2)."""
    w = {"model.name": "bert-large", "strategy.tp": 4, "strategy.dp": 32}
    r = tscli.run("optimize", {**SMALL_MULTIDIM, **w}, [], ["--target", "bandwidth"])
    t = {}
    for label, bw in (("opt", r["dim_bandwidth_Bps"]), ("equal", [650e9 / 3] * 3)):
        for model in ("analytical", "flow"):
            t[label, model] = tscli.run("simulate", {**SMALL_MULTIDIM, **w, "simulate.network_model": model,
                                                     "topology.dim_bandwidth": ",".join(f"{x:.12g}B/s" for x in bw)}
                                        )["iteration_time_s"]
    assert t["opt", "analytical"] == pytest.approx(r["iteration_time_s"], rel=1e-6)
    assert t["equal", "analytical"] == pytest.approx(r["baseline_iteration_time_s"], rel=1e-6)
    assert t["opt", "flow"] <= t["equal", "flow"] * (1 + 1e-6)


# --- Forest inside a training iteration: never slower than ring; flow = analytical when nothing is shared --
def test_forest_iteration_never_slower_than_ring_and_models_agree(forest_cases):
    for name in ("DGX-1 hybrid cube-mesh", "two 8-GPU servers + NICs", "DGX-1, link 0-4 at 10 %"):
        t = {(alg, m): tscli.run("simulate", {"topology.kind": "file", "topology.file": forest_cases[name],
                                              "server.gpus": 1, "model.name": "bert-topoopt",
                                              "collective.algorithm": alg, "simulate.network_model": m}
                                 )["iteration_time_s"]
             for alg in ("ring", "forest") for m in ("analytical", "flow")}
        assert t["forest", "analytical"] <= t["ring", "analytical"] * (1 + REL), name
        for alg in ("ring", "forest"):  # one AllReduce at a time on a dedicated graph: no sharing
            assert t[alg, "flow"] == pytest.approx(t[alg, "analytical"], rel=1e-9), (name, alg)


# --- Placement (TAG): METIS never slower than rank order on heterogeneous clusters -------------------------
@pytest.fixture(scope="module")
def placement_rows(tmp_path_factory):
    return exp_placement.run(str(tmp_path_factory.mktemp("placement")))


def test_metis_placement_never_slower_than_rank_order(placement_rows):
    assert len(placement_rows) == 6
    for r in placement_rows:
        for model in ("analytical", "flow"):
            assert r[f"metis_{model}_s"] <= r[f"rank_order_{model}_s"] * (1 + REL), (r["cluster"], r["workload"], model)
        # METIS' groups hold as much direct-link bandwidth as the best partition found by brute force
        assert r["metis_internal_Gbps"] >= r["brute_force_internal_Gbps"], (r["cluster"], r["workload"])
        # optimize --target placement reports the same two times as simulate
        assert r["optimize_time_s"] == pytest.approx(r["metis_analytical_s"], rel=1e-12)
        assert r["optimize_baseline_time_s"] == pytest.approx(r["rank_order_analytical_s"], rel=1e-12)


def test_metis_puts_tp_pairs_on_the_bridged_servers(placement_rows):
    """Servers s and s+4 are bridged at 400 Gbps; TP-8 spans two 4-GPU servers, so the only grouping with all TP
    traffic on bridges is {s, s+4}; rank order pairs {2k, 2k+1}, which share only the 25 Gbps switch."""
    r = next(r for r in placement_rows if r["cluster"].startswith("server pairs") and "TP-8" in r["workload"])
    assert r["metis_groups"] == "{0,4} {1,5} {2,6} {3,7}"
    assert r["rank_order_groups"] == "{0,1} {2,3} {4,5} {6,7}"
    assert r["rank_order_analytical_s"] / r["metis_analytical_s"] > 5


# --- Multi-job (432 servers, 27 jobs): TopoOpt's per-job networks vs the similar-cost fat-tree -------------
def multijob_times(d, b):
    """Per-job times (analytical): TopoOpt = each job alone on its own 16-server topoopt network; the fat-tree of
    the 432-server TopoOpt's cost plays all 27 jobs at once."""
    jobs = exp_multijob.job_list()
    lone = {m: tscli.run("simulate", {**exp_multijob.topoopt16(d, b), "model.name": m})["iteration_time_s"]
            for m in exp_multijob.MIX}
    topo432 = {**exp_multijob.FABRIC_432, "topology.kind": "topoopt", "topology.degree": d,
               "topology.link_bandwidth": f"{b}Gbps"}
    ft_bw = tscli.run("topology", topo432, extra=["--similar-cost"])["similar_cost_fattree_link_bandwidth_Bps"]
    ft = tscli.run("simulate", {**exp_multijob.FABRIC_432, "topology.kind": "fattree", "topology.degree": 1,
                                "topology.link_bandwidth": f"{ft_bw:.6g}B/s",
                                "simulate.jobs": ",".join(f"{m}:16" for m in jobs)})
    return [lone[m] for m in jobs], [j["iteration_time_s"] for j in ft["jobs"]], jobs


@pytest.mark.parametrize("d,b", [(4, 100), (8, 25)])
def test_multijob_topoopt_per_job_networks_beat_similar_cost_fattree(d, b):
    topo, ft, jobs = multijob_times(d, b)
    assert {m: jobs.count(m) for m in exp_multijob.MIX} == {"dlrm": 9, "bert-topoopt": 8, "candle-uno": 7, "vgg16": 3}
    assert np.mean(topo) < np.mean(ft)
    assert np.percentile(topo, 90) < np.percentile(ft, 90)


@pytest.mark.parametrize("b", [25, 100])
def test_multijob_topoopt_degree_8_never_slower_than_degree_4(b):
    for m in exp_multijob.MIX:
        t = {d: tscli.run("simulate", {**exp_multijob.topoopt16(d, b), "model.name": m})["iteration_time_s"]
             for d in (4, 8)}
        assert t[8] <= t[4] * (1 + REL), m


def test_multijob_disjoint_networks_do_not_interact(tmp_path):
    """simulate.jobs on 27 disjoint copies of a 16-server network gives every job the time it takes alone on one
    copy (same algorithm: a file network has no ring strides, so both run one ring), under the flow model too."""
    perjob, one = exp_multijob.per_job_topoopt_file(str(tmp_path), 4, 100)
    jobs = exp_multijob.job_list()
    for model in ("analytical", "flow"):
        r = tscli.run("simulate", {**exp_multijob.FABRIC_432, "topology.kind": "file", "topology.file": perjob,
                                   "topology.allow_disconnected": "true", "simulate.network_model": model,
                                   "simulate.jobs": ",".join(f"{m}:16" for m in jobs)})
        lone = {m: tscli.run("simulate", {**exp_multijob.COMMON, "topology.kind": "file", "topology.file": one,
                                          "model.name": m, "simulate.network_model": model})["iteration_time_s"]
                for m in exp_multijob.MIX}
        for j in r["jobs"]:
            assert j["iteration_time_s"] == pytest.approx(lone[j["model"]], rel=1e-9), (model, j["model"])
