"""Issue 32's Hopper devices on held-out measurements (docs/validation.md, "Hopper"): the 32 measured H100 / H200
layers (docs/validation/reference/hopper/, `layers`) through `toposweep simulate --json`, with devices fitted on the
operator tables of the same files only (scripts/validation/fit_hopper.py). The bounds are what the model reaches
today (not the issue's goal of 8 % / 4 %); a change that moves them must say why."""
import json
import os

import pytest

import exp_hopper
import fit_hopper
import tscli

# Reached at commit time: see docs/validation.md section 7b for the rows.
MAX_ABS_PCT = {"h100": MAX_H100, "h200": MAX_H200}
MEAN_ABS_PCT = {"h100": MEAN_H100, "h200": MEAN_H200}


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return exp_hopper.run(str(tmp_path_factory.mktemp("hopper")))


def test_every_measured_layer_is_reproduced(rows):
    assert len(rows) == 32
    s = exp_hopper.summary(rows)
    for gpu in ("h100", "h200"):
        assert s[gpu]["rows"] == 16
        assert s[gpu]["max_abs_pct"] <= MAX_ABS_PCT[gpu], [r for r in rows if r["gpu"] == gpu]
        assert s[gpu]["mean_abs_pct"] <= MEAN_ABS_PCT[gpu], s


def test_device_files_hold_the_fit():
    """The numbers in inputs/devices/h100.json and h200.json are what fit_hopper.py prints."""
    fit = fit_hopper.fit()
    for gpu in ("h100", "h200"):
        with open(os.path.join(tscli.SOURCE_DIR, "inputs", "devices", f"{gpu}.json")) as f:
            d = json.load(f)
        assert d["gemm_efficiency"] == fit[gpu]["gemm_efficiency"]
        assert d["gemm_tiles"] == fit[gpu]["gemm_tiles"]
        assert d["memory_efficiency"] == fit[gpu]["memory_efficiency"]
        assert d["flash_attention_efficiency"] == {"forward": fit["attention_cudnn"]["forward"],
                                                   "backward": fit["attention_cudnn"]["backward"]}
        assert d["fused_attention_default"] is True
