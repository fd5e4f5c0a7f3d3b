"""Writes small results files that follow docs/hdf5-schema.md with h5py, with values the tests
know. write(): three sub-spaces (fattree, multidim, topoopt), infeasible and failed points, and ties
in the objectives. write_models(): two models, one of which dominates the other entirely. The
/frontier they store is computed here by the O(n^2) definition."""

import math
import random

import h5py
import numpy as np

MISSING = 4294967295
TIED_A, TIED_B = 12, 17  # two topoopt points with equal objectives on the frontier

# Sub-spaces in name order, each a Cartesian product of its axes (first axis by name most
# significant), as the sweep orders them.
SUBSPACES = {
    "fattree": {"topology.kind": ["fattree"], "topology.link_bandwidth": ["100Gbps", "400Gbps"],
                "topology.servers": ["8", "16"]},
    "multidim": {"topology.dim_bandwidth": ["100GB/s,50GB/s", "50GB/s,100GB/s", "75GB/s,75GB/s"],
                 "topology.kind": ["multidim"], "topology.servers": ["8", "16"]},
    "topoopt": {"topology.degree": ["4", "8"], "topology.kind": ["topoopt"],
                "topology.link_bandwidth": ["25Gbps", "100Gbps", "200Gbps"], "topology.servers": ["8", "16"]},
}
AXES = sorted({key for axes in SUBSPACES.values() for key in axes})
AXIS_VALUES = {
    "topology.degree": ["4", "8"],
    "topology.dim_bandwidth": ["100GB/s,50GB/s", "50GB/s,100GB/s", "75GB/s,75GB/s"],
    "topology.kind": ["fattree", "multidim", "topoopt"],
    "topology.link_bandwidth": ["25Gbps", "100Gbps", "200Gbps", "400Gbps"],
    "topology.servers": ["8", "16"],
}
# SI values of the scalar numeric axes (written here by hand, not by a parser).
AXIS_SI = {
    "topology.degree": [4.0, 8.0],
    "topology.link_bandwidth": [3.125e9, 12.5e9, 25e9, 50e9],
    "topology.servers": [8.0, 16.0],
}
RESULT_FIELDS = ["iteration_time_s", "compute_time_s", "exposed_comm_time_s", "bubble_time_s", "cost_usd",
                 "memory_per_gpu_bytes", "samples_per_s", "network_bisection_Bps"]
STRATEGY_FIELDS = ["dp", "tp", "pp", "microbatches", "optimizer_rounds"]
# The `units` attribute as toposweep writes it.
UNITS = ("index=1;subspace=1;status=1;iteration_time_s=s;compute_time_s=s;exposed_comm_time_s=s;bubble_time_s=s;"
         "cost_usd=USD;memory_per_gpu_bytes=B;samples_per_s=1/s;network_bisection_Bps=B/s;dp=1;tp=1;pp=1;"
         "microbatches=1;optimizer_rounds=1;axis fields=position in /space/axes/<key>/values")
CONFIG = """[model]
name = bert-large

[topology]
servers = 16

[space.fattree]
topology.kind = fattree
topology.link_bandwidth = 100Gbps, 400Gbps
"""


def points_of_space(subspaces=None, axis_values=None):
    """[(subspace position, {axis: value position})] in index order."""
    subspaces = SUBSPACES if subspaces is None else subspaces
    axis_values = AXIS_VALUES if axis_values is None else axis_values
    out = []
    for s, (name, axes) in enumerate(subspaces.items()):
        keys = sorted(axes)
        sizes = [len(axes[k]) for k in keys]
        total = math.prod(sizes)
        for i in range(total):
            positions, rest = {}, i
            for key, size in reversed(list(zip(keys, sizes))):
                positions[key] = axis_values[key].index(axes[key][rest % size])
                rest //= size
            out.append((s, positions))
    return out


def brute_force_frontier(rows, model=None):
    """Indices of status-0 rows not dominated in (cost_usd, iteration_time_s); with `model`, of
    that model's rows only (rows carry a "model" key)."""
    ok = [r for r in rows if r["status"] == 0 and (model is None or r["model"] == model)]
    front = []
    for p in ok:
        dominated = any(q["cost_usd"] <= p["cost_usd"] and q["iteration_time_s"] <= p["iteration_time_s"]
                        and (q["cost_usd"] < p["cost_usd"] or q["iteration_time_s"] < p["iteration_time_s"])
                        for q in ok)
        if not dominated:
            front.append(p["index"])
    return sorted(front)


def make_rows(seed=7):
    rng = random.Random(seed)
    rows = []
    for index, (subspace, positions) in enumerate(points_of_space()):
        row = {"index": index, "subspace": subspace}
        for key in AXES:
            row[key] = positions.get(key, MISSING)
        row["status"] = 0
        # Small integer grids make exact ties likely.
        row["cost_usd"] = 1000.0 * rng.randint(1, 6)
        row["iteration_time_s"] = 0.01 * rng.randint(1, 6)
        row["compute_time_s"] = row["iteration_time_s"] / 2
        row["exposed_comm_time_s"] = row["iteration_time_s"] / 4
        row["bubble_time_s"] = row["iteration_time_s"] / 4
        row["memory_per_gpu_bytes"] = 1e9 * rng.randint(1, 40)
        row["samples_per_s"] = 1024 / row["iteration_time_s"]
        row["network_bisection_Bps"] = 1e9 * rng.randint(1, 100)
        for field in STRATEGY_FIELDS:
            row[field] = rng.randint(1, 4)
        rows.append(row)
    # Fixed statuses: one infeasible and one failed point per sub-space family where possible.
    for index, status in ((1, 1), (3, 2), (9, 1)):
        rows[index]["status"] = status
        for field in RESULT_FIELDS:
            if field != "cost_usd":
                rows[index][field] = math.nan
    # Two points with equal objectives, cheaper than every other point: both are on the frontier.
    for index in (TIED_A, TIED_B):
        rows[index]["cost_usd"], rows[index]["iteration_time_s"] = 500.0, 0.07
    return rows


def write(path, seed=7, frontier_objectives="cost_usd,iteration_time_s"):
    rows = make_rows(seed)
    _write_file(path, rows, AXES, AXIS_VALUES, AXIS_SI, SUBSPACES, CONFIG, brute_force_frontier(rows),
                frontier_objectives, None)
    return rows


# Two models: sub-space `base` does not sweep model.name, so its points train the base
# configuration's "small"; sub-space `large` names model "large". Every large point costs more and
# is slower than every small point, so a pooled frontier holds small points only.
MODELS_SUBSPACES = {
    "base": {"topology.degree": ["4", "8"], "topology.kind": ["fattree", "topoopt"],
             "topology.link_bandwidth": ["100Gbps", "200Gbps"]},
    "large": {"model.name": ["large"], "topology.degree": ["4", "8"], "topology.kind": ["fattree", "topoopt"],
              "topology.link_bandwidth": ["100Gbps", "200Gbps"]},
}
MODELS_AXES = sorted({key for axes in MODELS_SUBSPACES.values() for key in axes})
MODELS_AXIS_VALUES = {"model.name": ["large"], "topology.degree": ["4", "8"],
                      "topology.kind": ["fattree", "topoopt"], "topology.link_bandwidth": ["100Gbps", "200Gbps"]}
MODELS_AXIS_SI = {"topology.degree": [4.0, 8.0], "topology.link_bandwidth": [12.5e9, 25e9]}
MODELS_CONFIG = """[model]
name = small

[topology]
servers = 16
"""


def make_model_rows(seed=11):
    """Rows of the two-model space; each carries its "model" (for the tests, not the file)."""
    rng = random.Random(seed)
    rows = []
    for index, (subspace, positions) in enumerate(points_of_space(MODELS_SUBSPACES, MODELS_AXIS_VALUES)):
        large = subspace == 1
        row = {"index": index, "subspace": subspace, "model": "large" if large else "small"}
        for key in MODELS_AXES:
            row[key] = positions.get(key, MISSING)
        row["status"] = 0
        # small: cost 1000..6000 US$, time 10..60 ms; large: 11000..16000 US$, 100..600 ms.
        row["cost_usd"] = 1000.0 * rng.randint(1, 6) + (10000.0 if large else 0.0)
        row["iteration_time_s"] = 0.01 * rng.randint(1, 6) * (10 if large else 1)
        row["compute_time_s"] = row["iteration_time_s"] / 2
        row["exposed_comm_time_s"] = row["iteration_time_s"] / 4
        row["bubble_time_s"] = row["iteration_time_s"] / 4
        row["memory_per_gpu_bytes"] = 1e9 * rng.randint(1, 40)
        row["samples_per_s"] = 1024 / row["iteration_time_s"]
        row["network_bisection_Bps"] = 1e9 * rng.randint(1, 100)
        for field in STRATEGY_FIELDS:
            row[field] = rng.randint(1, 4)
        rows.append(row)
    for index in (2, 13):  # one infeasible point per model
        rows[index]["status"] = 1
        for field in RESULT_FIELDS:
            if field != "cost_usd":
                rows[index][field] = math.nan
    return rows


def write_models(path, seed=11):
    """The two-model file, its /frontier the union of the per-model frontiers (group_by model.name)."""
    rows = make_model_rows(seed)
    front = sorted(brute_force_frontier(rows, "small") + brute_force_frontier(rows, "large"))
    _write_file(path, rows, MODELS_AXES, MODELS_AXIS_VALUES, MODELS_AXIS_SI, MODELS_SUBSPACES, MODELS_CONFIG, front,
                "cost_usd,iteration_time_s", "model.name")
    return rows


def _write_file(path, rows, axes, axis_values, axis_si, subspaces, config, frontier, frontier_objectives,
                group_by):
    dtype = np.dtype([("index", "<u8"), ("subspace", "<u4")] + [(k, "<u4") for k in axes] + [("status", "u1")]
                     + [(f, "<f8") for f in RESULT_FIELDS] + [(f, "<u4") for f in STRATEGY_FIELDS])
    table = np.zeros(len(rows), dtype=dtype)
    for i, row in enumerate(rows):
        for name in dtype.names:
            table[name][i] = row[name]
    strings = h5py.string_dtype()
    with h5py.File(path, "w") as f:
        f.attrs["toposweep_version"] = "0.1.0"
        f.attrs["git_revision"] = "fixture"
        f.attrs["config"] = config
        f.attrs["space_size"] = np.uint64(len(rows))
        f.attrs["created_utc"] = "2026-01-01T00:00:00Z"
        points = f.create_dataset("points", data=table, chunks=True)
        points.attrs["units"] = UNITS
        space = f.create_group("space")
        space.attrs["axes"] = ",".join(axes)
        space.create_dataset("subspaces", data=np.array(list(subspaces), dtype=strings))
        for key in axes:
            group = space.create_group(f"axes/{key}")
            group.create_dataset("values", data=np.array(axis_values[key], dtype=strings))
            if key in axis_si:
                group.create_dataset("values_si", data=np.array(axis_si[key]))
        front = f.create_dataset("frontier", data=np.array(frontier, dtype="<u8"))
        front.attrs["objectives"] = frontier_objectives
        if group_by is not None:  # the fixture of the one-model file predates the attribute
            front.attrs["group_by"] = group_by
