"""Checks on toposweep results files for the Slurm end-to-end test (h5py only).

    results_helpers.py check FILE               every point present once, in order, statuses valid
    results_helpers.py equal FILE REFERENCE     /points, /frontier and /space equal (NaN == NaN)

Exit 0 when the check holds, 1 with the differences on stderr otherwise."""

import sys

import h5py
import numpy as np


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def check(path):
    problems = []
    with h5py.File(path, "r") as f:
        points = f["points"][()]
        size = int(f.attrs["space_size"])
        if len(points) != size:
            problems.append(f"{len(points)} rows for a space of {size} points")
        if not np.array_equal(points["index"], np.arange(len(points), dtype=np.uint64)):
            problems.append("indices are not 0..n-1 in order")
        if not set(np.unique(points["status"]).tolist()) <= {0, 1, 2}:
            problems.append(f"unexpected status values {np.unique(points['status'])}")
        evaluated = points["status"] == 0
        if not evaluated.any():
            problems.append("no evaluated point")
        if not np.all(np.isfinite(points["iteration_time_s"][evaluated])):
            problems.append("an evaluated point has no iteration time")
        frontier = f["frontier"][()]
        if len(frontier) == 0 or not np.all(evaluated[frontier.astype(np.int64)]):
            problems.append("/frontier is empty or names a point that was not evaluated")
    counts = {s: int(np.sum(points["status"] == s)) for s in (0, 1, 2)}
    print(f"{path}: {len(points)} points, evaluated {counts[0]}, infeasible {counts[1]}, failed {counts[2]}, "
          f"{len(frontier)} on the frontier")
    return problems


def same_array(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.names is None:
        return np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    return all(same_array(a[name], b[name]) for name in a.dtype.names)


def datasets(group, prefix=""):
    out = {}
    for name, item in group.items():
        if isinstance(item, h5py.Group):
            out.update(datasets(item, f"{prefix}{name}/"))
        else:
            out[prefix + name] = item[()]
    return out


def equal(path, reference):
    problems = []
    with h5py.File(path, "r") as a, h5py.File(reference, "r") as b:
        for name in ("points", "frontier"):
            if not same_array(a[name][()], b[name][()]):
                problems.append(f"/{name} differs")
        if text(a["frontier"].attrs["objectives"]) != text(b["frontier"].attrs["objectives"]):
            problems.append("/frontier objectives differ")
        space_a, space_b = datasets(a["space"]), datasets(b["space"])
        if sorted(space_a) != sorted(space_b):
            problems.append(f"/space holds {sorted(space_a)} vs {sorted(space_b)}")
        else:
            for name in space_a:
                va, vb = np.asarray(space_a[name]), np.asarray(space_b[name])
                if va.dtype.kind == "O" or vb.dtype.kind == "O":
                    same = [text(x) for x in va.ravel()] == [text(x) for x in vb.ravel()]
                else:
                    same = np.array_equal(va, vb, equal_nan=va.dtype.kind == "f")
                if not same:
                    problems.append(f"/space/{name} differs")
        if int(a.attrs["space_size"]) != int(b.attrs["space_size"]):
            problems.append("space_size differs")
    if not problems:
        print(f"{path} equals {reference}")
    return problems


def main(argv):
    if len(argv) == 2 and argv[0] == "check":
        problems = check(argv[1])
    elif len(argv) == 3 and argv[0] == "equal":
        problems = equal(argv[1], argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for p in problems:
        print(f"results_helpers: {argv[1]}: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
