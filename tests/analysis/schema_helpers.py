"""Writes a small results file that follows docs/hdf5-schema.md with h5py, with values the tests
know: three sub-spaces (fattree, multidim, topoopt), infeasible and failed points, and ties in
the objectives. The /frontier it stores is computed here by the O(n^2) definition."""

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
UNITS = ("iteration_time_s=s;compute_time_s=s;exposed_comm_time_s=s;bubble_time_s=s;cost_usd=USD;"
         "memory_per_gpu_bytes=B;samples_per_s=1/s;network_bisection_Bps=B/s")
CONFIG = """[model]
name = bert-large

[topology]
servers = 16

[space.fattree]
topology.kind = fattree
topology.link_bandwidth = 100Gbps, 400Gbps
"""


def points_of_space():
    """[(subspace position, {axis: value position})] in index order."""
    out = []
    for s, (name, axes) in enumerate(SUBSPACES.items()):
        keys = sorted(axes)
        sizes = [len(axes[k]) for k in keys]
        total = math.prod(sizes)
        for i in range(total):
            positions, rest = {}, i
            for key, size in reversed(list(zip(keys, sizes))):
                positions[key] = AXIS_VALUES[key].index(axes[key][rest % size])
                rest //= size
            out.append((s, positions))
    return out


def brute_force_frontier(rows):
    """Indices of status-0 rows not dominated in (cost_usd, iteration_time_s)."""
    ok = [r for r in rows if r["status"] == 0]
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
    dtype = np.dtype([("index", "<u8"), ("subspace", "<u4")] + [(k, "<u4") for k in AXES] + [("status", "u1")]
                     + [(f, "<f8") for f in RESULT_FIELDS] + [(f, "<u4") for f in STRATEGY_FIELDS])
    table = np.zeros(len(rows), dtype=dtype)
    for i, row in enumerate(rows):
        for name in dtype.names:
            table[name][i] = row[name]
    strings = h5py.string_dtype()
    with h5py.File(path, "w") as f:
        f.attrs["toposweep_version"] = "0.1.0"
        f.attrs["git_revision"] = "fixture"
        f.attrs["config"] = CONFIG
        f.attrs["space_size"] = np.uint64(len(rows))
        f.attrs["created_utc"] = "2026-01-01T00:00:00Z"
        points = f.create_dataset("points", data=table, chunks=True)
        points.attrs["units"] = UNITS
        space = f.create_group("space")
        space.attrs["axes"] = ",".join(AXES)
        space.create_dataset("subspaces", data=np.array(list(SUBSPACES), dtype=strings))
        for key in AXES:
            group = space.create_group(f"axes/{key}")
            group.create_dataset("values", data=np.array(AXIS_VALUES[key], dtype=strings))
            if key in AXIS_SI:
                group.create_dataset("values_si", data=np.array(AXIS_SI[key]))
        front = f.create_dataset("frontier", data=np.array(brute_force_frontier(rows), dtype="<u8"))
        front.attrs["objectives"] = frontier_objectives
    return rows
