"""Fits the Hopper devices' per-operator numbers (inputs/devices/h100.json, h200.json) on the measured OPERATOR
tables of docs/validation/reference/hopper/ (README.md there: one H100 and one H200, PyTorch 2.11, bf16), and prints
them. The measured whole layers (`layers`) are not read here: they are the hold-out (exp_hopper.py).

  python3 scripts/validation/fit_hopper.py [--json]

What is fitted, each by least squares on time with the cost model's own formulas (src/workload/layer_cost.cpp):
  * gemm_efficiency: the 48 GEMMs of `gemm` (forward, and backward = dgrad + wgrad), at the datasheet bf16 peak
    with the model's tile quantisation over the SMs (gemm_tiles 256x128 / 128x256 / 128x128, 132 SMs). A scalar:
    the residuals show no trend the model could hold (small-K row-parallel GEMMs at tp 8 are the worst rows).
  * memory_efficiency: the memory-bound operators of `memops`, each timed against the bytes the model counts for
    its kernel (norm 2e / 3e, GeLU 2e / 4e, SwiGLU 3e / 5e per output element; dropout + residual add as the
    model's one residual kernel: 3e + 1 forward, 3e + (3e + 1) backward), e = 2 bytes.
  * flash_attention_efficiency: causal rows of `attention` (h100_attention_fp8.json) at the pre-training
    sequence lengths 2k-8k, forward and backward separately, per backend: `cudnn` (what Transformer Engine runs on
    Hopper: the device files) and `flash` (FlashAttention-2: what PyTorch's SDPA picks by default, so what the
    `layers` table ran; used by exp_hopper.py only). The model counts causal attention as 2 b a s^2 d forward
    FLOPs (x 2.5 backward), the same as the table. Only the H100 was measured; the H200 has the same SMs and
    clocks, so it takes the H100's attention fractions.
"""
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.join(os.path.dirname(os.path.dirname(HERE)), "docs", "validation", "reference", "hopper")

PEAK_BF16 = 989.4e12  # H100 / H200 SXM datasheet, dense
HBM = {"h100": 3.35e12, "h200": 4.8e12}  # datasheets
SMS = 132
TILES = ((256, 128), (128, 256), (128, 128))
E = 2.0  # bf16
SEQ_RANGE = (2048, 8192)


def load(name):
    with open(os.path.join(REF, name)) as f:
        return json.load(f)


def wave(M, N, batch=1.0):
    best = 0.0
    for tm, tn in TILES:
        count = math.ceil(M / tm) * math.ceil(N / tn) * batch
        waves = math.ceil(count / SMS)
        best = max(best, M * N * batch / (tm * tn) / (waves * SMS))
    return best or 1.0


def gemm_units(M, N, K):
    """Seconds of one GEMM at gemm_efficiency 1 (the model's compute term)."""
    return 2.0 * M * N * K / (PEAK_BF16 * wave(M, N))


def lsq_scale(a, t):
    """x minimising sum (t - a x)^2."""
    return sum(ai * ti for ai, ti in zip(a, t)) / sum(ai * ai for ai in a)


def fit_gemm(d):
    a, t, rows = [], [], []
    for r in d["gemm"]:
        T, k, n = r["tokens"], r["k"], r["n"]
        fwd = gemm_units(T, n, k)
        bwd = gemm_units(T, k, n) + gemm_units(k, n, T)  # dgrad + wgrad
        a += [fwd, bwd]
        t += [r["fwd_ms"] * 1e-3, r["bwd_ms"] * 1e-3]
        rows.append((r, fwd, bwd))
    eff = 1.0 / lsq_scale(a, t)
    err = [100.0 * (ai / eff - ti) / ti for ai, ti in zip(a, t)]
    return eff, err


# The model's bytes per element of each measured operator (forward, backward), e = 2.
MEMOP_BYTES = {"layernorm": (2 * E, 3 * E), "rmsnorm": (2 * E, 3 * E), "gelu": (2 * E, 4 * E),
               "silu_mul": (3 * E, 5 * E)}
RESIDUAL_BYTES = (3 * E + 1, 3 * E + 3 * E + 1)  # dropout + add as the model's residual kernel


def fit_memory(d, device):
    b, t = [], []
    by_shape = {}
    for r in d["memops"]:
        elems = r["tokens"] * r["hidden"]
        by_shape.setdefault((r["tokens"], r["hidden"]), {})[r["op"]] = r
        if r["op"] in MEMOP_BYTES:
            fb, bb = MEMOP_BYTES[r["op"]]
            b += [fb * elems, bb * elems]
            t += [r["fwd_ms"] * 1e-3, r["bwd_ms"] * 1e-3]
    for (tokens, hidden), ops in by_shape.items():
        elems = tokens * hidden
        b += [RESIDUAL_BYTES[0] * elems, RESIDUAL_BYTES[1] * elems]
        t += [(ops["dropout"]["fwd_ms"] + ops["add"]["fwd_ms"]) * 1e-3,
              (ops["dropout"]["bwd_ms"] + ops["add"]["bwd_ms"]) * 1e-3]
    bps = 1.0 / lsq_scale(b, t)
    err = [100.0 * (bi / bps - ti) / ti for bi, ti in zip(b, t)]
    return bps, bps / HBM[device], err


def fit_attention(att, backend):
    af, tf, ab, tb = [], [], [], []
    for r in att["attention"]:
        if r["backend"] != backend or not r["causal"] or not SEQ_RANGE[0] <= r["seq"] <= SEQ_RANGE[1]:
            continue
        flops = 2.0 * r["heads"] * r["seq"] ** 2 * r["head_dim"]  # causal forward, batch 1
        af.append(flops / PEAK_BF16)
        tf.append(r["fwd_ms"] * 1e-3)
        ab.append(2.5 * flops / PEAK_BF16)
        tb.append(r["bwd_ms"] * 1e-3)
    return 1.0 / lsq_scale(af, tf), 1.0 / lsq_scale(ab, tb), len(af)


def fit():
    att = load("h100_attention_fp8.json")
    out = {}
    for device in ("h100", "h200"):
        d = load(f"{device}.json")
        g, gerr = fit_gemm(d)
        bps, mem, merr = fit_memory(d, device)
        out[device] = {
            "gemm_efficiency": round(g, 4), "gemm_rows": len(gerr),
            "gemm_max_abs_error_pct": round(max(abs(e) for e in gerr), 1),
            "gemm_mean_abs_error_pct": round(sum(abs(e) for e in gerr) / len(gerr), 1),
            "memory_Bps": bps, "memory_efficiency": round(mem, 4), "memory_rows": len(merr),
            "memory_max_abs_error_pct": round(max(abs(e) for e in merr), 1),
            "memory_mean_abs_error_pct": round(sum(abs(e) for e in merr) / len(merr), 1),
            "peak_bf16_gemm_8192_measured": d["peak"]["bf16_gemm_8192_tflops"] * 1e12,
            "copy_Bps_measured": d["peak"]["copy_tbps_read_plus_write"] * 1e12,
        }
    for backend in ("cudnn", "flash"):
        fwd, bwd, n = fit_attention(att, backend)
        out[f"attention_{backend}"] = {"forward": round(fwd, 3), "backward": round(bwd, 3), "rows": n}
    return out


def main():
    res = fit()
    if "--json" in sys.argv:
        print(json.dumps(res, indent=1))
        return
    for device in ("h100", "h200"):
        r = res[device]
        print(f"{device}: gemm_efficiency {r['gemm_efficiency']} ({r['gemm_rows']} GEMM times, mean |err| "
              f"{r['gemm_mean_abs_error_pct']} %, max {r['gemm_max_abs_error_pct']} %); memory "
              f"{r['memory_Bps'] / 1e12:.3f} TB/s = memory_efficiency {r['memory_efficiency']} ({r['memory_rows']} "
              f"times, mean |err| {r['memory_mean_abs_error_pct']} %, max {r['memory_max_abs_error_pct']} %)")
    for backend in ("cudnn", "flash"):
        r = res[f"attention_{backend}"]
        print(f"attention {backend}: forward {r['forward']}, backward {r['backward']} ({r['rows']} causal rows, "
              f"seq {SEQ_RANGE[0]}-{SEQ_RANGE[1]})")


if __name__ == "__main__":
    main()
