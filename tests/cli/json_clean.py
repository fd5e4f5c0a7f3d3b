"""Comparing the `--json` outputs of runs that must describe the same design: the objects without their run-time
figures (and any further keys named) must be equal. For the CLI tests that compare runs (import it with tests/cli on
sys.path)."""
import json

RUN_TIME = {"wall_s", "elapsed_s", "seconds", "points_per_s", "evaluations_per_s"}


def clean(x, drop=RUN_TIME):
    if isinstance(x, dict):
        return {k: clean(v, drop) for k, v in x.items() if k not in drop}
    if isinstance(x, list):
        return [clean(v, drop) for v in x]
    return x


def load(path, extra=()):
    with open(path) as f:
        return clean(json.load(f), RUN_TIME | set(extra))


def assert_same(a, b):
    """a == b (two cleaned outputs), failing with the top-level keys that differ."""
    assert a == b, sorted(set(a) ^ set(b)) + [k for k in a if k in b and a[k] != b[k]]
