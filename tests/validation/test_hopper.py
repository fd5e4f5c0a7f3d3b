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

# Reached at commit time (docs/validation.md section 7b), with a little room: all 16 rows of each GPU, and the 11
# fused-attention rows. The 5 unfused rows per GPU ran PyTorch's stock attention (scale, mask, fp32 softmax,
# dropout as separate kernels), several times the traffic of the Megatron kernels the model counts.
BOUNDS = {  # subset: (max |error| %, mean |error| %)
    "h100": (39.0, 13.0), "h200": (37.0, 13.0),
    "h100_flash": (10.5, 6.0), "h200_flash": (12.0, 7.0),
}


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return exp_hopper.run(str(tmp_path_factory.mktemp("hopper")))


def test_every_measured_layer_is_reproduced(rows):
    assert len(rows) == 32
    s = exp_hopper.summary(rows)
    assert s["h100"]["rows"] == s["h200"]["rows"] == 16
    assert s["h100_flash"]["rows"] == s["h200_flash"]["rows"] == 11
    for subset, (max_pct, mean_pct) in BOUNDS.items():
        assert s[subset]["max_abs_pct"] <= max_pct, (subset, s[subset], rows)
        assert s[subset]["mean_abs_pct"] <= mean_pct, (subset, s[subset])
    # The fused-attention layers are predicted slower than measured, never much faster: the per-call overhead of
    # the operator tables is fitted out, the in-layer cache reuse is not.
    assert all(r["error_pct"] > -5 for r in rows if r["attention"] == "flash"), rows


def test_grouped_gemm_fit_reproduces_the_expert_ffns():
    """The expert FFNs of `moe` at the fitted grouped_gemm_efficiency: what the fit reached at commit time
    (H100 mean 3.2 %, max 11.3 %; H200 4.7 %, 14.3 %), with a little room, and better than at gemm_efficiency."""
    fit = fit_hopper.fit()
    for gpu, (max_pct, mean_pct) in {"h100": (12.0, 3.5), "h200": (15.0, 5.0)}.items():
        r = fit[gpu]
        assert r["grouped_gemm_rows"] == 8
        assert r["grouped_gemm_max_abs_error_pct"] <= max_pct, r
        assert r["grouped_gemm_mean_abs_error_pct"] <= mean_pct, r
        assert r["grouped_gemm_mean_abs_error_pct"] < r["grouped_gemm_mean_abs_error_pct_at_gemm_efficiency"]


def test_device_files_hold_the_fit():
    """The numbers in inputs/devices/h100.json and h200.json are what fit_hopper.py prints."""
    fit = fit_hopper.fit()
    for gpu in ("h100", "h200"):
        with open(os.path.join(tscli.SOURCE_DIR, "inputs", "devices", f"{gpu}.json")) as f:
            d = json.load(f)
        assert d["gemm_efficiency"] == fit[gpu]["gemm_efficiency"]
        assert d["gemm_tiles"] == fit[gpu]["gemm_tiles"]
        assert d["memory_efficiency"] == fit[gpu]["memory_efficiency"]
        assert d["fp8_gemm_efficiency"] == fit[gpu]["fp8_gemm_efficiency"]
        assert d["grouped_gemm_efficiency"] == fit[gpu]["grouped_gemm_efficiency"]
        assert d["flash_attention_efficiency"] == {"forward": fit["attention_cudnn"]["forward"],
                                                   "backward": fit["attention_cudnn"]["backward"]}
        assert d["fused_attention_default"] is True
