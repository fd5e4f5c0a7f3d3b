"""Invariants that tie a sweep's rows to the designs they name (docs/sweep.md, "What a row is"):

  * union = concatenation: the union of sub-spaces swept under mpirun gives, row for row, the
    status and bit-identical values of each sub-space swept alone on one rank;
  * replay: a row rebuilt from the results file alone (root `config` + `/space`, decoded by
    analysis.replay, not by toposweep) and run through `toposweep simulate` (or `optimize` for a
    point that runs an optimizer) gives the same iteration time, bit for bit;
  * names: the strategy a row reports it simulated (dp, tp, pp, microbatches) is the one its axes
    and the base configuration name, and a replayed topoopt point uses the strides it names.

Spaces: the README's quickstart, a union mixing every generator with explicit axes over the same
keys, and the smallest union that showed the sub-space bug.
"""

import math
import os
import random
import subprocess
import sys

import h5py
import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, ROOT)

from analysis import replay  # noqa: E402

SPACES = {
    "quickstart": os.path.join(ROOT, "inputs", "sweeps", "quickstart.ini"),
    "mixed": os.path.join(HERE, "mixed_space.ini"),
    "minimal": os.path.join(HERE, "minimal_space.ini"),
    "context_parallel": os.path.join(HERE, "cp_space.ini"),
    "expert_parallel": os.path.join(HERE, "ep_space.ini"),
    "eager_softmax": os.path.join(HERE, "softmax_space.ini"),
    "rail_tiers": os.path.join(HERE, "rail_space.ini"),
    "recompute_modules": os.path.join(HERE, "recompute_space.ini"),
    "sliding_window": os.path.join(HERE, "window_space.ini"),
}
REPLAYS_PER_SUBSPACE = {"quickstart": 6, "mixed": 4, "minimal": 10, "context_parallel": 8, "expert_parallel": 8,
                         "eager_softmax": 8, "rail_tiers": 8, "recompute_modules": 8, "sliding_window": 8}


def result_fields(path):
    """Every field of /points that is a result, not a coordinate: status and the fields the file's
    `units` attribute names besides index and subspace (axis fields are not named there)."""
    with h5py.File(path, "r") as f:
        units = f["/points"].attrs["units"]
    names = [pair.split("=", 1)[0] for pair in str(units).split(";")]
    fields = [n for n in names if n not in ("index", "subspace", "axis fields")]
    assert "status" in fields and "iteration_time_s" in fields, units
    return fields


def binary():
    path = os.environ.get("TOPOSWEEP", "")
    if not path or not os.access(path, os.X_OK):
        pytest.skip(f"no toposweep binary (TOPOSWEEP={path!r})")
    return path


def sweep(config_path, out, ranks):
    command = [binary(), "sweep", "--config", str(config_path), "--out", str(out), "--log-level", "error"]
    if ranks > 1:
        command = [os.environ.get("MPIRUN", "mpirun"), "-n", str(ranks), *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{' '.join(command)}: exit {done.returncode}\n{done.stderr}"
    with h5py.File(out, "r") as f:
        return f["/points"][()]


def subspace_names(path):
    names, seen = [], set()
    for line in open(path):
        t = line.strip()
        if t.startswith("[space.") and t.endswith("]"):
            name = t[len("[space."):-1].split(".")[0]
            if name not in seen:
                seen.add(name)
                names.append(name)
    return sorted(names)


def only_subspace(path, keep, out):
    """The space file with every [space.*] section but `keep`'s dropped."""
    lines, drop = [], False
    for line in open(path):
        t = line.strip()
        if t.startswith("["):
            drop = t.startswith("[space.") and not t.startswith(f"[space.{keep}]") \
                and not t.startswith(f"[space.{keep}.")
        if not drop:
            lines.append(line)
    out.write_text("".join(lines))
    return out


@pytest.fixture(scope="module", params=sorted(SPACES))
def swept(request, tmp_path_factory):
    name = request.param
    tmp = tmp_path_factory.mktemp(name)
    union = tmp / "union.h5"
    rows = sweep(SPACES[name], union, ranks=2)
    return name, str(union), rows, tmp


def test_union_equals_its_subspaces_swept_alone(swept):
    name, union, rows, tmp = swept
    at = 0
    for sub in subspace_names(SPACES[name]):
        alone = sweep(only_subspace(SPACES[name], sub, tmp / f"{sub}.ini"), tmp / f"{sub}.h5", ranks=1)
        part = rows[at:at + len(alone)]
        assert len(part) == len(alone), sub
        for field in result_fields(union):
            a, b = part[field], alone[field]
            same = np.array_equal(a, b, equal_nan=True) if a.dtype.kind == "f" else np.array_equal(a, b)
            assert same, f"{name}/{sub}: field {field} differs from the sub-space swept alone at rows " \
                         f"{np.nonzero(~((a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind == 'f' else a == b))[0][:5] + at}"
        at += len(alone)
    assert at == len(rows)


def server_gpus(config):
    """GPUs of the point's servers: server.gpus, or the sum of a per-server run list (8*4,4*4)."""
    text = config["server.gpus"]
    if "*" not in text:
        return int(config["topology.servers"]) * int(text)
    return sum(int(v) * int(n) for v, n in (item.strip().rsplit("*", 1) for item in text.split(",")))


def named_strategy(config):
    gpus = server_gpus(config)
    tp, pp = int(config.get("strategy.tp", 1)), int(config.get("strategy.pp", 1))
    cp, ep = int(config.get("strategy.cp", 1)), int(config.get("strategy.ep", 1))
    etp = int(config.get("strategy.etp", 0)) or tp  # 0: the experts split over the tp ranks
    dp = int(config.get("strategy.dp", 0)) or gpus // (tp * pp * cp)
    return dp, tp, pp, cp, ep, etp, int(config.get("strategy.microbatches", 1))


def test_rows_report_the_strategy_their_axes_name(swept):
    _, path, rows, _ = swept
    checked = 0
    for row in rows:
        if row["status"] != 0:
            continue
        config = replay.point_config(path, int(row["index"]))
        if config.get("point.optimize", "none") != "none" or config.get("topology.kind") == "multidim":
            continue  # an optimizer chooses the strategy; multidim NPUs are not servers x gpus
        assert (int(row["dp"]), int(row["tp"]), int(row["pp"]), int(row["cp"]), int(row["ep"]), int(row["etp"]),
                int(row["microbatches"])) == named_strategy(config), f"row {row['index']}"
        checked += 1
    assert checked > 0


def test_sampled_rows_replay_to_the_same_time(swept):
    name, path, rows, _ = swept
    rng = random.Random(14)
    by_subspace = {}
    for row in rows:
        by_subspace.setdefault(int(row["subspace"]), []).append(row)
    replayed = 0
    for sub_rows in by_subspace.values():
        for row in rng.sample(sub_rows, min(REPLAYS_PER_SUBSPACE[name], len(sub_rows))):
            index = int(row["index"])
            status, answer, err = replay.replay(path, index, binary())
            if row["status"] == 1:
                # Infeasible: impossible designs are bad input to a command, memory misfits are
                # feasible = false.
                assert status == 2 or (answer is not None and answer.get("feasible") is False), \
                    f"row {index}: infeasible in the sweep, replay exit {status}: {err}"
                continue
            assert status == 0 and answer is not None, f"row {index}: replay exit {status}: {err}"
            assert row["status"] == 0, f"row {index} failed in the sweep but replays"
            assert answer["iteration_time_s"] == float(row["iteration_time_s"]), \
                f"row {index}: replay {answer['iteration_time_s']!r} vs sweep {float(row['iteration_time_s'])!r}"
            config = replay.point_config(path, index)
            if config.get("topology.kind") == "topoopt" and config.get("topology.strides") and \
                    config.get("point.optimize", "none") == "none":
                named = [int(s) for s in config["topology.strides"].split(",")]
                assert sorted(answer["topology"]["strides"]) == sorted(named), f"row {index}"
            replayed += 1
    print(f"{name}: {replayed} rows replayed")
    assert replayed >= len(by_subspace)
