"""Read a sweep results file with h5py and check it against docs/hdf5-schema.md and the synthetic
evaluator's construction. Usage: check_results.py FILE SPACE_SIZE"""
import sys

import h5py
import numpy as np

path, size = sys.argv[1], int(sys.argv[2])
f = h5py.File(path, "r")
for attr in ("toposweep_version", "git_revision", "config", "space_size", "created_utc"):
    assert attr in f.attrs, f"missing root attribute {attr}"
assert int(f.attrs["space_size"]) == size
assert "[space.grid.topology]" in f.attrs["config"], f.attrs["config"]
p = f["/points"][:]
assert len(p) == size, (len(p), size)
names = p.dtype.names
for field in ("index", "subspace", "status", "iteration_time_s", "cost_usd", "topology.degree", "dp"):
    assert field in names, f"missing field {field}"
assert (p["index"] == np.arange(size)).all()
assert "iteration_time_s=s" in f["/points"].attrs["units"]
status = p["status"]
assert set(np.unique(status)) <= {0, 1, 2}
# The synthetic evaluator has infeasible and failing points by construction; NaN times for them.
assert (status == 1).sum() > 0 and (status == 2).sum() > 0
assert np.isnan(p["iteration_time_s"][status != 0]).all()
assert not np.isnan(p["iteration_time_s"][status == 0]).any()
# Axis fields decode through /space.
axes = f["/space"].attrs["axes"].split(",")
assert "topology.degree" in axes
deg_values = [v.decode() if isinstance(v, bytes) else v for v in f["/space/axes/topology.degree/values"][:]]
assert deg_values[:3] == ["1", "2", "3"], deg_values[:3]
grid = p["subspace"] == list(x.decode() if isinstance(x, bytes) else x for x in f["/space/subspaces"][:]).index("grid")
assert (p["topology.kind"][grid] == 0xFFFFFFFF).all()
# /frontier: ascending indices of status-0 points, none dominated (brute force).
fr = f["/frontier"][:]
assert f["/frontier"].attrs["objectives"] == "cost_usd,iteration_time_s"
assert (np.diff(fr) > 0).all() and (status[fr] == 0).all()
ok = p[status == 0]
c, t = ok["cost_usd"], ok["iteration_time_s"]
expected = [int(ok["index"][i]) for i in range(len(ok))
            if not (((c <= c[i]) & (t <= t[i]) & ((c < c[i]) | (t < t[i])))).any()]
assert list(fr) == expected, (list(fr), expected)
fails = f["/failures"][:]
assert len(fails) == int((status != 0).sum())
assert all(len(m) > 0 for m in fails["message"])
print(f"ok: {path}: {len(p)} points, {len(fr)} on the frontier, {len(fails)} infeasible/failed")
