"""Runs the toposweep CLI with --json and returns its object; the validation's only interface to the tool."""
import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INPUTS = os.path.join(SOURCE_DIR, "inputs", "sweeps", "validation")


def binary():
    return os.environ.get("TOPOSWEEP", os.path.join(SOURCE_DIR, "build", "toposweep"))


class CliError(RuntimeError):
    pass


def run(command, sets=None, configs=(), extra=()):
    """One call: `toposweep COMMAND --config C... --set K=V... EXTRA --json` -> dict."""
    argv = [binary(), command]
    for c in configs:
        argv += ["--config", c if os.path.isabs(c) else os.path.join(INPUTS, c)]
    for k, v in (sets or {}).items():
        argv += ["--set", f"{k}={v}"]
    argv += list(extra) + ["--json", "--log-level", "error"]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CliError(f"{' '.join(argv)} -> exit {proc.returncode}: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def run_many(calls, workers=None):
    """calls: list of (command, sets, configs, extra); results in the same order. Errors come back as
    CliError objects so one failing point does not lose the table."""
    workers = workers or int(os.environ.get("VALIDATE_JOBS", "2"))

    def one(call):
        try:
            return run(*call)
        except CliError as e:
            return e

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, calls))


def gbps(x):
    """Gbps -> the CLI's unit string."""
    return f"{x:g}Gbps"
