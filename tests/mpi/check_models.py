"""Check a results file of tests/mpi/models.ini: /frontier is the union of each model's own Pareto
frontier (brute force over the file's rows), grouped by model.name, and every model has frontier
points. With --keep frontier files pass the --keep all file of the same space as REFERENCE, whose
rows the frontier is computed from. Usage: check_models.py FILE [REFERENCE]"""
import configparser
import sys

import h5py
import numpy as np

MISSING = 0xFFFFFFFF
path = sys.argv[1]
reference = sys.argv[2] if len(sys.argv) > 2 else path


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


with h5py.File(reference, "r") as f:
    p = f["/points"][:]
    labels = [text(v) for v in f["/space/axes/model.name/values"][:]]
    config = configparser.ConfigParser(interpolation=None)
    config.read_string(text(f.attrs["config"]))
    base = config["model"]["name"]
models = np.array([base if pos == MISSING else labels[pos] for pos in p["model.name"]])
assert set(models) == {"bert-large", "resnet50", "vgg16", "gpt3-175b"}, set(models)
expected = []
for model in sorted(set(models)):
    ok = p[(models == model) & (p["status"] == 0)]
    c, t = ok["cost_usd"], ok["iteration_time_s"]
    front = [int(ok["index"][i]) for i in range(len(ok))
             if not ((c <= c[i]) & (t <= t[i]) & ((c < c[i]) | (t < t[i]))).any()]
    assert front, f"no frontier point for {model}"
    expected += front
with h5py.File(path, "r") as f:
    got = [int(i) for i in f["/frontier"][:]]
    assert text(f["/frontier"].attrs["group_by"]) == "model.name"
assert got == sorted(expected), (got, sorted(expected))
print(f"ok: {path}: {len(got)} frontier points over 4 models")
