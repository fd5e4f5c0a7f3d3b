"""Fixtures: results files to analyse. `results_file` is parametrized over
  * "schema": a file written with h5py by schema_helpers.py (known values, ties, failures);
  * "sweep":  a file from a real `toposweep sweep` of tests/analysis/small_space.ini, run with the
    binary named by $TOPOSWEEP_BINARY (set by CTest). Skipped, with the reason, when there is no
    binary."""

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "..", "..")))  # the analysis package

import schema_helpers  # noqa: E402

SMALL_SPACE = os.path.join(HERE, "small_space.ini")


def run_sweep(out_path, space=SMALL_SPACE, extra=()):
    binary = os.environ.get("TOPOSWEEP_BINARY", "")
    if not binary or not os.access(binary, os.X_OK):
        pytest.skip(f"no toposweep binary (TOPOSWEEP_BINARY={binary!r}); build target 'toposweep'")
    command = [binary, "sweep", "--config", space, "--out", str(out_path), "--log-level", "warn", *extra]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}: {done.stderr}"
    return str(out_path)


@pytest.fixture(scope="session")
def sweep_file(tmp_path_factory):
    return run_sweep(tmp_path_factory.mktemp("sweep") / "results.h5")


@pytest.fixture(scope="session")
def schema_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("schema") / "results.h5"
    schema_helpers.write(str(path))
    return str(path)


@pytest.fixture(params=["schema", "sweep"])
def results_file(request):
    if request.param == "schema":
        return request.getfixturevalue("schema_path")
    return request.getfixturevalue("sweep_file")
