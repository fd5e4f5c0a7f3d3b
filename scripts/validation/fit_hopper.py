"""Fits the Hopper devices' per-operator numbers (inputs/devices/h100.json, h200.json) on the measured OPERATOR
tables of docs/validation/reference/hopper/ (README.md there: one H100 and one H200, PyTorch 2.11, bf16), and prints
them. The measured whole layers (`layers`) are not read here: they are the hold-out (exp_hopper.py).

  python3 scripts/validation/fit_hopper.py [--json]

What is fitted, each by least squares on time with the cost model's own formulas (src/workload/layer_cost.cpp) plus
one constant per kind of timed call (forward; backward through autograd.grad): the overhead of timing one operator
at a time with CUDA events (the GPU waits for the CPU's launch), which a whole layer's stream of kernels hides. The
constants are printed, not used by the model:
  * gemm_efficiency and gemm_tiles: the 48 GEMMs of `gemm` (forward, and backward = dgrad + wgrad), at the
    datasheet bf16 peak with the model's tile quantisation over the 132 SMs, for each candidate tile set (cuBLAS's
    large tiles, or none); the set with the smaller rms error wins. A scalar efficiency: the residuals show no
    trend the model could hold (small-K row-parallel GEMMs at tp 8 are the worst rows).
  * memory_efficiency: the memory-bound operators of `memops`, each timed against the bytes the model counts for
    its kernel (norm 2e / 3e, GeLU 2e / 4e, SwiGLU 3e / 5e per output element; dropout + residual add as the
    model's one residual kernel: 3e + 1 forward, 3e + (3e + 1) backward), e = 2 bytes.
  * flash_attention_efficiency: causal rows of `attention` (h100_attention_fp8.json) at the pre-training
    sequence lengths 2k-8k, forward and backward separately, per backend: `cudnn` (what Transformer Engine runs on
    Hopper: the device files) and `flash` (FlashAttention-2: what PyTorch's SDPA picks by default, so what the
    `layers` table ran; used by exp_hopper.py only). The model counts causal attention as 2 b a s^2 d forward
    FLOPs (x 2.5 backward), the same as the table. Only the H100 was measured; the H200 has the same SMs and
    clocks, so it takes the H100's attention fractions.
  * grouped_gemm_efficiency (the MoE layer's expert GEMMs, block_moe.cpp): the 4 rows of `moe` (expert FFNs as
    batched GEMMs, torch.bmm: experts x tokens_per_expert, SwiGLU), forward (up+gate GEMM, SiLU x up, down GEMM)
    and backward (dgrad + wgrad of both, the activation's backward; one autograd.grad call) at the datasheet bf16
    peak, the activation at the fitted memory bandwidth with the model's bytes (SwiGLU 3e / 5e), each GEMM the
    model's max(FLOPs, bytes, floor), plus the per-call constants of the `gemm` fit (one timed call each). One
    efficiency minimising the squared time residuals (a scan: the max() makes it non-linear). The errors of the
    same rows at gemm_efficiency are printed beside it.
  * fp8_gemm_efficiency (model.datatype = fp8): the mean of fp8_tflops / the datasheet fp8 peak (1978.9 TFLOP/s)
    over the large shapes (m = 8192) of `fp8_gemm` (h100_attention_fp8.json, Transformer Engine's fp8 GEMM). Only
    the H100 has the shape table; the H200 takes it scaled by the ratio of the two devices' measured 8192^3 fp8
    GEMM peaks (`peak.fp8_gemm_8192_tflops` of h100.json / h200.json).
"""
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.join(os.path.dirname(os.path.dirname(HERE)), "docs", "validation", "reference", "hopper")

PEAK_BF16 = 989.4e12  # H100 / H200 SXM datasheet, dense
PEAK_FP8 = 1978.9e12  # H100 / H200 SXM datasheet, dense
FP8_LARGE_M = 8192  # the `fp8_gemm` rows fp8_gemm_efficiency is fitted on
HBM = {"h100": 3.35e12, "h200": 4.8e12}  # datasheets
SMS = 132
# Candidate CTA tile sets for the model's wave quantisation (the device's gemm_tiles): cuBLAS's large tiles, as the
# A100 uses, or none (1 x 1: Hopper's cuBLAS runs stream-K / persistent kernels that spread a partial last wave).
# The one whose GEMM fit has the smaller rms relative residual is the device's.
TILE_SETS = {"large": ((256, 128), (128, 256), (128, 128)), "none": ((1, 1),)}
TILES = TILE_SETS["large"]
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


def lsq_with_offsets(a, group, t):
    """x, c[g] minimising sum (t - a x - sum_g calls[g] c[g])^2 (group: a name, or {name: calls}): a slope shared
    by all rows and one constant per kind of call
    (the per-call overhead of a timed single operator: CUDA events around one call also time the GPU idling
    while the CPU launches it, which a whole layer's queue of kernels hides). Normal equations, solved by
    Gaussian elimination (no numpy needed)."""
    group = [g if isinstance(g, dict) else {g: 1} for g in group]
    groups = sorted({k for g in group for k in g})
    n = 1 + len(groups)
    rows = [[ai] + [float(g.get(gg, 0)) for gg in groups] for ai, g in zip(a, group)]
    m = [[sum(r[i] * r[j] for r in rows) for j in range(n)] + [sum(r[i] * ti for r, ti in zip(rows, t))]
         for i in range(n)]
    for i in range(n):
        p = max(range(i, n), key=lambda k: abs(m[k][i]))
        m[i], m[p] = m[p], m[i]
        for k in range(n):
            if k != i:
                f = m[k][i] / m[i][i]
                m[k] = [x - f * y for x, y in zip(m[k], m[i])]
    sol = [m[i][n] / m[i][i] for i in range(n)]
    return sol[0], dict(zip(groups, sol[1:]))


def fit_gemm(d):
    """Forward (one GEMM) and backward (two, through autograd.grad) times; the slope is the device's
    efficiency, the per-call constants (forward, backward) are measurement overhead the model does not carry."""
    a, group, t = [], [], []
    for r in d["gemm"]:
        T, k, n = r["tokens"], r["k"], r["n"]
        a += [gemm_units(T, n, k), gemm_units(T, k, n) + gemm_units(k, n, T)]  # forward; dgrad + wgrad
        group += ["fwd", "bwd"]
        t += [r["fwd_ms"] * 1e-3, r["bwd_ms"] * 1e-3]
    x, c = lsq_with_offsets(a, group, t)
    err = [100.0 * (ai * x + c[g] - ti) / ti for ai, g, ti in zip(a, group, t)]
    return 1.0 / x, c, err


# The model's bytes per element of each measured operator (forward, backward), e = 2.
MEMOP_BYTES = {"layernorm": (2 * E, 3 * E), "rmsnorm": (2 * E, 3 * E), "gelu": (2 * E, 4 * E),
               "silu_mul": (3 * E, 5 * E)}
RESIDUAL_BYTES = (3 * E + 1, 3 * E + 3 * E + 1)  # dropout + add as the model's residual kernel


def fit_memory(d, device):
    """The same with bytes: one bandwidth, per-call constants for forward and backward (autograd.grad)."""
    b, group, t = [], [], []
    by_shape = {}
    for r in d["memops"]:
        elems = r["tokens"] * r["hidden"]
        by_shape.setdefault((r["tokens"], r["hidden"]), {})[r["op"]] = r
        if r["op"] in MEMOP_BYTES:
            fb, bb = MEMOP_BYTES[r["op"]]
            b += [fb * elems, bb * elems]
            group += ["fwd", "bwd"]
            t += [r["fwd_ms"] * 1e-3, r["bwd_ms"] * 1e-3]
    for (tokens, hidden), ops in by_shape.items():
        elems = tokens * hidden
        b += [RESIDUAL_BYTES[0] * elems, RESIDUAL_BYTES[1] * elems]
        group += [{"fwd": 2}, {"bwd": 2}]  # two timed calls each (dropout, add)
        t += [(ops["dropout"]["fwd_ms"] + ops["add"]["fwd_ms"]) * 1e-3,
              (ops["dropout"]["bwd_ms"] + ops["add"]["bwd_ms"]) * 1e-3]
    x, c = lsq_with_offsets(b, group, t)
    calls = [g if isinstance(g, dict) else {g: 1} for g in group]
    err = [100.0 * (bi * x + sum(n * c[k] for k, n in g.items()) - ti) / ti for bi, g, ti in zip(b, calls, t)]
    return 1.0 / x, (1.0 / x) / HBM[device], c, err


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


def rms(err):
    return math.sqrt(sum(e * e for e in err) / len(err))


KERNEL_FLOOR = 4e-6  # the device files' kernel_floor


def expert_ffn_seconds(r, eff, mem_Bps):
    """The model's forward and backward seconds of one `moe` row (block_moe.cpp's expert_in, expert_activation,
    expert_out on one rank: tp = ep = 1, evenly loaded) with its expert GEMMs at `eff` of the bf16 peak."""
    E_, T, h, f = r["experts"], r["tokens_per_expert"], r["hidden"], r["ffn"]

    def gemm(M, N, K):  # layer_cost.cpp gemm_seconds: bf16 operands and outputs
        compute = 2.0 * M * N * K * E_ / (PEAK_BF16 * eff * wave(M, N, E_))
        return max(compute, E_ * (E * (M * K + K * N) + E * M * N) / mem_Bps, KERNEL_FLOOR)

    act = E_ * T * f  # SwiGLU output elements
    fwd = gemm(T, 2 * f, h) + gemm(T, h, f) + max(3 * E * act / mem_Bps, KERNEL_FLOOR)
    bwd = (gemm(T, h, 2 * f) + gemm(h, 2 * f, T) + gemm(T, f, h) + gemm(f, h, T)
           + max(5 * E * act / mem_Bps, KERNEL_FLOOR))
    return fwd, bwd


def moe_errors(rows, eff, mem_Bps, calls):
    err = []
    for r in rows:
        fwd, bwd = expert_ffn_seconds(r, eff, mem_Bps)
        err += [100.0 * (fwd + calls["fwd"] - r["fwd_ms"] * 1e-3) / (r["fwd_ms"] * 1e-3),
                100.0 * (bwd + calls["bwd"] - r["bwd_ms"] * 1e-3) / (r["bwd_ms"] * 1e-3)]
    return err


def fit_grouped_gemm(d, mem_Bps, calls):
    """The expert GEMMs' efficiency minimising sum (t_model + call - t)^2 over the `moe` rows (forward and
    backward), by a scan in steps of 1e-4."""
    rows = d["moe"]

    def sq(eff):
        return sum((e / 100.0 * t) ** 2 for e, t in zip(moe_errors(rows, eff, mem_Bps, calls),
                                                         [x for r in rows for x in (r["fwd_ms"], r["bwd_ms"])]))
    best = min((k / 10000.0 for k in range(3000, 9501)), key=sq)
    return best, moe_errors(rows, best, mem_Bps, calls)


def fit_gemm_tiles(d):
    """The GEMM fit for each candidate tile set; the best (smallest rms error) first."""
    global TILES
    fits = []
    for name, tiles in TILE_SETS.items():
        TILES = tiles
        g, gc, gerr = fit_gemm(d)
        fits.append((rms(gerr), name, g, gc, gerr))
    TILES = TILE_SETS["large"]
    return sorted(fits)


def fit_fp8_gemm(att):
    """The H100's fp8 GEMM fraction of the datasheet fp8 peak: mean over the large shapes of `fp8_gemm`."""
    rows = [r for r in att["fp8_gemm"] if r["m"] >= FP8_LARGE_M]
    return sum(r["fp8_tflops"] * 1e12 / PEAK_FP8 for r in rows) / len(rows), len(rows)


def fit():
    global TILES
    att = load("h100_attention_fp8.json")
    out = {}
    fp8, fp8_rows = fit_fp8_gemm(att)
    fp8_peak = {device: load(f"{device}.json")["peak"]["fp8_gemm_8192_tflops"] for device in ("h100", "h200")}
    for device in ("h100", "h200"):
        d = load(f"{device}.json")
        fits = fit_gemm_tiles(d)
        _, tiles, g, gc, gerr = fits[0]
        bps, mem, mc, merr = fit_memory(d, device)
        TILES = TILE_SETS[tiles]
        geff, gerr_after = fit_grouped_gemm(d, bps, gc)
        gerr_before = moe_errors(d["moe"], g, bps, gc)
        TILES = TILE_SETS["large"]
        out[device] = {
            "gemm_efficiency": round(g, 4), "gemm_rows": len(gerr), "gemm_tiles": [list(t) for t in TILE_SETS[tiles]],
            "gemm_tile_fits": {name: {"gemm_efficiency": round(ge, 4), "rms_error_pct": round(r, 2)}
                               for r, name, ge, _, _ in fits},
            "gemm_max_abs_error_pct": round(max(abs(e) for e in gerr), 1),
            "gemm_mean_abs_error_pct": round(sum(abs(e) for e in gerr) / len(gerr), 1),
            "gemm_call_overhead_us": {k: round(v * 1e6, 1) for k, v in gc.items()},
            "memory_Bps": bps, "memory_efficiency": round(mem, 4), "memory_rows": len(merr),
            "memory_max_abs_error_pct": round(max(abs(e) for e in merr), 1),
            "memory_mean_abs_error_pct": round(sum(abs(e) for e in merr) / len(merr), 1),
            "memory_call_overhead_us": {k: round(v * 1e6, 1) for k, v in mc.items()},
            "peak_bf16_gemm_8192_measured": d["peak"]["bf16_gemm_8192_tflops"] * 1e12,
            "copy_Bps_measured": d["peak"]["copy_tbps_read_plus_write"] * 1e12,
            "fp8_gemm_efficiency": round(fp8 * fp8_peak[device] / fp8_peak["h100"], 4), "fp8_gemm_rows": fp8_rows,
            "fp8_gemm_8192_measured": fp8_peak[device] * 1e12,
            "grouped_gemm_efficiency": round(geff, 4), "grouped_gemm_rows": len(gerr_after),
            "grouped_gemm_rows_detail": [
                {"model": r["model"], "experts": r["experts"], "tokens_per_expert": r["tokens_per_expert"],
                 "fwd_ms": r["fwd_ms"], "bwd_ms": r["bwd_ms"],
                 "fwd_err_pct_at_gemm_efficiency": round(gerr_before[2 * i], 1),
                 "bwd_err_pct_at_gemm_efficiency": round(gerr_before[2 * i + 1], 1),
                 "fwd_err_pct": round(gerr_after[2 * i], 1), "bwd_err_pct": round(gerr_after[2 * i + 1], 1)}
                for i, r in enumerate(d["moe"])],
            "grouped_gemm_max_abs_error_pct": round(max(abs(e) for e in gerr_after), 1),
            "grouped_gemm_mean_abs_error_pct": round(sum(abs(e) for e in gerr_after) / len(gerr_after), 1),
            "grouped_gemm_max_abs_error_pct_at_gemm_efficiency": round(max(abs(e) for e in gerr_before), 1),
            "grouped_gemm_mean_abs_error_pct_at_gemm_efficiency":
                round(sum(abs(e) for e in gerr_before) / len(gerr_before), 1),
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
        print(f"{device}: gemm_tiles {r['gemm_tiles']} (rms error by tile set: "
              + ", ".join(f"{k} {v['rms_error_pct']} % at {v['gemm_efficiency']}" for k, v in r["gemm_tile_fits"].items())
              + ")")
        print(f"{device}: gemm_efficiency {r['gemm_efficiency']} ({r['gemm_rows']} GEMM times, mean |err| "
              f"{r['gemm_mean_abs_error_pct']} %, max {r['gemm_max_abs_error_pct']} %; per-call overhead "
              f"{r['gemm_call_overhead_us']} us); memory "
              f"{r['memory_Bps'] / 1e12:.3f} TB/s = memory_efficiency {r['memory_efficiency']} ({r['memory_rows']} "
              f"times, mean |err| {r['memory_mean_abs_error_pct']} %, max {r['memory_max_abs_error_pct']} %; per-call "
              f"overhead {r['memory_call_overhead_us']} us)")
        print(f"{device}: fp8_gemm_efficiency {r['fp8_gemm_efficiency']} (H100 `fp8_gemm`, {r['fp8_gemm_rows']} shapes "
              f"with m = {FP8_LARGE_M}, x {device} / h100 measured 8192^3 fp8 peak; 8192^3 measured "
              f"{r['fp8_gemm_8192_measured'] / PEAK_FP8:.3f} of the fp8 peak)")
    for device in ("h100", "h200"):
        r = res[device]
        print(f"{device}: grouped_gemm_efficiency {r['grouped_gemm_efficiency']} ({r['grouped_gemm_rows']} expert FFN "
              f"times of `moe`, mean |err| {r['grouped_gemm_mean_abs_error_pct']} %, max "
              f"{r['grouped_gemm_max_abs_error_pct']} %; at gemm_efficiency {r['gemm_efficiency']}: mean |err| "
              f"{r['grouped_gemm_mean_abs_error_pct_at_gemm_efficiency']} %, max "
              f"{r['grouped_gemm_max_abs_error_pct_at_gemm_efficiency']} %)")
        for x in r["grouped_gemm_rows_detail"]:
            print(f"  {x['model']:12s} {x['experts']:3d} x {x['tokens_per_expert']:5d} tokens: forward "
                  f"{x['fwd_ms']:7.3f} ms {x['fwd_err_pct_at_gemm_efficiency']:+6.1f} % -> {x['fwd_err_pct']:+6.1f} %, "
                  f"backward {x['bwd_ms']:7.3f} ms {x['bwd_err_pct_at_gemm_efficiency']:+6.1f} % -> "
                  f"{x['bwd_err_pct']:+6.1f} %")
    for backend in ("cudnn", "flash"):
        r = res[f"attention_{backend}"]
        print(f"attention {backend}: forward {r['forward']}, backward {r['backward']} ({r['rows']} causal rows, "
              f"seq {SEQ_RANGE[0]}-{SEQ_RANGE[1]})")


if __name__ == "__main__":
    main()
