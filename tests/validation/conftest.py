import os
import sys

import pytest

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SOURCE_DIR, "scripts", "validation"))

import tscli  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def toposweep_binary():
    # A missing binary is a failure, not a skip: CTest sets TOPOSWEEP to the build's binary, and a
    # fast subset that silently skips would pass without checking anything.
    assert os.access(tscli.binary(), os.X_OK), f"toposweep is not built at {tscli.binary()} (set TOPOSWEEP)"
    return tscli.binary()
