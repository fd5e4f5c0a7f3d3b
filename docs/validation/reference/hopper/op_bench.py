"""Operator-level and sustained measurements on one Hopper GPU (toposweep's own program).

Complements layer_bench.py (same conventions: bf16, CUDA-event timing, median after warm-up):
  unfused_attention  each kernel of PyTorch's eager (unfused) attention core, forward and
                     backward, at the per-rank shapes of layer_bench.py's `unfused` layers
  kernels            a torch.profiler kernel list of selected whole layers (diagnosis: which
                     attention backend ran, how the time splits over kernels)
  sustained          an 8192^3 GEMM and a whole 175B layer run back to back for tens of seconds
                     with nvidia-smi sampled every 0.5 s (clock, power, temperature)
  te                 Transformer Engine fp8 Linear layers at layer shapes, when TE is installed
  gemm_kernels       the layers' GEMMs (layer_bench.py's shapes) timed by the profiler: kernel time
                     only, without the dispatch and event gaps of CUDA-event timing
  sustained_layers   more whole layers back to back; `tflops` there is the throughput relative to
                     the same layer's burst time (timed as layer_bench.py times it)
OPS_SECTIONS picks sections (default: the first four). Writes $OUT/hopper_ops.json.
"""
import json, math, os, subprocess, threading, time
import torch
import torch.utils.checkpoint
import torch.nn.functional as F

OUT = os.environ.get("OUT", "out")
os.makedirs(OUT, exist_ok=True)
dev = torch.device("cuda")
dt = torch.bfloat16
R = {"env": {}, "unfused_attention": [], "kernels": [], "sustained": {}, "te": {}, "gemm_kernels": []}
# OPS_SECTIONS (comma-separated) picks sections; default: the first run's four
SECTIONS = set(os.environ.get("OPS_SECTIONS", "unfused,kernels,sustained,te").split(","))
T0 = time.time()


def log(*a):
    print(f"[{time.time()-T0:6.1f}s]", *a, flush=True)


def save():
    R["elapsed_s"] = time.time() - T0
    with open(os.path.join(OUT, "hopper_ops.json"), "w") as f:
        json.dump(R, f, indent=1)


# layer_bench.py's timing function, model table and Layer class, taken from its source (it runs
# everything when imported): the layers timed here are the layers it timed, timed the same way.
HERE = os.path.dirname(os.path.abspath(__file__))
_src = open(os.path.join(HERE, "layer_bench.py")).read()
_timed = _src[_src.index("def timed"):_src.index("def save")]
_models = _src[_src.index("MODELS = {"):_src.index("GEMM_CASES")]
_layer = _src[_src.index("class Layer"):_src.index("def layer_case")]


class _NS:
    pass


lb = _NS()
_ns = {"torch": torch, "F": F, "math": math, "dev": dev, "dt": dt, "GQA_NATIVE": [True]}
exec(_timed + _models + _layer, _ns)  # noqa: S102
lb.Layer = _ns["Layer"]
timed = _ns["timed"]


def smi(q="clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active"):
    try:
        return subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader,nounits"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
    except Exception as ex:  # noqa
        return str(ex)


p = torch.cuda.get_device_properties(0)
R["env"] = {"name": p.name, "sms": p.multi_processor_count, "torch": torch.__version__,
            "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
            "smi": smi("name,driver_version,clocks.max.sm,power.limit"), "idle": smi()}
log(R["env"])
save()

# ---- 1. eager attention core, kernel by kernel ----------------------------------------------
# shapes (label, batch x heads per rank, seq, head dim): layer_bench.py's unfused layers
for label, bh, s, d in [] if "unfused" not in SECTIONS else [("gpt3-22b t8 b4", 32, 2048, 128), ("gpt3-22b t8 b1", 8, 2048, 128),
                        ("gpt3-175b t8 b1", 12, 2048, 128)]:
    try:
        q = torch.randn(bh, s, d, device=dev, dtype=dt, requires_grad=True)
        k = torch.randn(bh, s, d, device=dev, dtype=dt, requires_grad=True)
        v = torch.randn(bh, s, d, device=dev, dtype=dt, requires_grad=True)
        sc = torch.randn(bh, s, s, device=dev, dtype=dt, requires_grad=True)
        sc32 = torch.randn(bh, s, s, device=dev, dtype=torch.float32, requires_grad=True)
        mask = torch.ones(s, s, device=dev, dtype=torch.bool).triu(1)
        el = bh * s * s
        ops = {
            "qk_bmm": (lambda: torch.matmul(q, k.transpose(-1, -2)), [q, k]),
            "scale_mul": (lambda: sc * (1.0 / math.sqrt(d)), [sc]),
            "masked_fill": (lambda: sc.masked_fill(mask, float("-inf")), [sc]),
            "to_fp32": (lambda: sc.float(), [sc]),
            "softmax_fp32": (lambda: torch.softmax(sc32, -1), [sc32]),
            "to_bf16": (lambda: sc32.to(dt), [sc32]),
            "dropout": (lambda: F.dropout(sc, 0.1, True), [sc]),
            "pv_bmm": (lambda: torch.matmul(sc, v), [sc, v]),
            "mask_make": (lambda: torch.ones(s, s, device=dev, dtype=torch.bool).triu(1), []),
        }

        def core():
            x = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(d))
            x = x.masked_fill(torch.ones(s, s, device=dev, dtype=torch.bool).triu(1), float("-inf"))
            pr = F.dropout(torch.softmax(x.float(), -1).to(dt), 0.1, True)
            return torch.matmul(pr, v)
        ops["core"] = (core, [q, k, v])
        for name, (fn, ins) in ops.items():
            fwd = timed(fn)
            bwd = None
            if ins:
                out = fn()
                g = torch.randn_like(out)
                bwd = timed(lambda: torch.autograd.grad(out, ins, g, retain_graph=True))
                del out, g
            R["unfused_attention"].append({"case": label, "bh": bh, "seq": s, "d": d, "op": name,
                                           "score_elements": el, "fwd_ms": fwd, "bwd_ms": bwd})
        log(label, [(r["op"], round(r["fwd_ms"], 3), r["bwd_ms"] and round(r["bwd_ms"], 3))
                    for r in R["unfused_attention"] if r["case"] == label])
        del q, k, v, sc, sc32, mask
        torch.cuda.empty_cache()
    except Exception as ex:  # noqa
        log("unfused case failed", label, str(ex)[:300])
        R["unfused_attention"].append({"case": label, "error": str(ex)[:300]})
    save()

# ---- 2. kernel lists of whole layers (layer_bench.py's Layer) ------------------------------
for case in [] if "kernels" not in SECTIONS else [
             ("gpt3-175b", 8, 2048, 1, "flash", "none"), ("gpt3-22b", 8, 2048, 4, "unfused", "none"),
             ("gpt3-22b", 8, 2048, 4, "flash", "none"), ("llama3-405b", 8, 8192, 1, "flash", "full"),
             ("gpt3-175b", 4, 2048, 1, "flash", "none")]:
    try:
        model, tp, seq, mbs, attn, rc = case
        lay = lb.Layer(model, tp, attn, rc)
        x = torch.randn(seq, mbs, lay.h, device=dev, dtype=dt, requires_grad=True)
        g = torch.randn(seq, mbs, lay.h, device=dev, dtype=dt)

        def step():
            lay(x).backward(g)
        both = timed(step, reps=10)
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(3):
                step()
            torch.cuda.synchronize()
        agg = {}
        for ev in prof.events():
            if ev.device_type == torch.autograd.DeviceType.CUDA:
                a = agg.setdefault(ev.name, [0.0, 0])
                a[0] += ev.device_time / 3.0 if hasattr(ev, "device_time") else ev.cuda_time / 3.0
                a[1] += 1
        ks = sorted(({"kernel": k_[:160], "us": v_[0], "calls": v_[1] // 3} for k_, v_ in agg.items()),
                    key=lambda r: -r["us"])
        R["kernels"].append({"case": list(case), "fwd_bwd_ms": both,
                             "kernel_sum_ms": sum(r["us"] for r in ks) / 1e3, "list": ks})
        log("kernels", case, round(both, 3), [(r["kernel"][:50], round(r["us"])) for r in ks[:8]])
        del lay, x, g
        torch.cuda.empty_cache()
    except Exception as ex:  # noqa
        log("kernel case failed", case, str(ex)[:300])
        R["kernels"].append({"case": list(case), "error": str(ex)[:300]})
    save()

# ---- 3. sustained: GEMM and a whole layer back to back, clocks sampled ----------------------
def sustained(label, fn, flop, seconds):
    samples, stop = [], [False]

    def sampler():
        while not stop[0]:
            samples.append((time.time() - T0, smi()))
            time.sleep(0.5)
    th = threading.Thread(target=sampler)
    th.start()
    per_sec, t_start = [], time.time()
    while time.time() - t_start < seconds:
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        n = 0
        t1 = time.time()
        while time.time() - t1 < 1.0:
            fn()
            n += 1
            if n % 8 == 0:
                torch.cuda.synchronize()
        e.record()
        e.synchronize()
        ms = s.elapsed_time(e) / n
        per_sec.append({"t": time.time() - t_start, "ms": ms, "tflops": flop / ms / 1e9})
    stop[0] = True
    th.join()
    R["sustained"][label] = {"per_second": per_sec, "smi": samples,
                             "smi_fields": "clocks.sm,clocks.mem,power.draw,temperature.gpu,throttle"}
    log("sustained", label, [round(r["tflops"]) for r in per_sec])
    save()


try:
    if "sustained" not in SECTIONS:
        raise RuntimeError("section skipped")
    a = torch.randn(8192, 8192, device=dev, dtype=dt)
    b = torch.randn(8192, 8192, device=dev, dtype=dt)
    sustained("gemm_8192", lambda: a @ b, 2 * 8192**3, 40)
    del a, b
    lay = lb.Layer("gpt3-175b", 8, "flash", "none")
    x = torch.randn(2048, 1, lay.h, device=dev, dtype=dt, requires_grad=True)
    g = torch.randn(2048, 1, lay.h, device=dev, dtype=dt)
    h = 12288
    lin = 2 * 2048 * h * (3 * h + h + 8 * h) / 8
    att = 2 * 2 * 2048 * 2048 * 96 * 128 / 8
    sustained("layer_gpt3-175b_t8_flash", lambda: lay(x).backward(g), 3 * (lin + att), 30)
    del lay, x, g
    torch.cuda.empty_cache()
except Exception as ex:  # noqa
    log("sustained failed", str(ex)[:300])
    R["sustained"]["error"] = str(ex)[:300]
save()

# ---- 4. Transformer Engine fp8 Linear, if installed ------------------------------------------
try:
    if "te" not in SECTIONS:
        raise RuntimeError("section skipped")
    import transformer_engine.pytorch as te
    from transformer_engine.common import recipe
    R["te"]["version"] = getattr(te, "__version__", "?")
    rec = recipe.DelayedScaling(fp8_format=recipe.Format.HYBRID)
    rows = []
    for name, tokens, k, n in [("405b qkv t8", 8192, 16384, 2560), ("405b fc1 t8", 8192, 16384, 13312),
                               ("405b fc2 t8", 8192, 6656, 16384), ("175b fc1 t8", 2048, 12288, 6144)]:
        lin = te.Linear(k, n, bias=False, params_dtype=dt).cuda()
        x = torch.randn(tokens, k, device=dev, dtype=dt, requires_grad=True)
        g = torch.randn(tokens, n, device=dev, dtype=dt)
        for fp8 in (False, True):
            def f():
                with te.fp8_autocast(enabled=fp8, fp8_recipe=rec):
                    return lin(x)
            fwd = timed(f)

            def fb():
                f().backward(g)
            both = timed(fb)
            flop = 2 * tokens * k * n
            rows.append({"shape": name, "tokens": tokens, "k": k, "n": n, "fp8": fp8, "fwd_ms": fwd,
                         "bwd_ms": both - fwd, "fwd_tflops": flop / fwd / 1e9,
                         "bwd_tflops": 2 * flop / (both - fwd) / 1e9})
        log("te", rows[-2:])
    R["te"]["linear"] = rows
except Exception as ex:  # noqa
    R["te"]["error"] = str(ex)[:300]
    log("te unavailable", str(ex)[:200])
save()


# ---- 5. the layers' GEMMs timed by the profiler (kernel time only, no dispatch or event gaps) ----
def kernel_ms(fn, reps=5):
    from torch.profiler import profile, ProfilerActivity
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    tot = 0.0
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA and "Memset" not in ev.name:
            tot += ev.device_time if hasattr(ev, "device_time") else ev.cuda_time
    return tot / reps / 1e3


GEMM_SHAPES = [("gpt3-22b", 8, 2048, 6144, 24576, 64), ("gpt3-22b", 8, 8192, 6144, 24576, 64),
               ("gpt3-175b", 8, 2048, 12288, 49152, 96), ("gpt3-175b", 4, 2048, 12288, 49152, 96),
               ("gpt3-175b", 1, 2048, 12288, 49152, 96), ("gpt-530b", 8, 2048, 20480, 81920, 128),
               ("llama3-8b", 1, 8192, 4096, 14336, 32), ("llama3-70b", 8, 8192, 8192, 28672, 64),
               ("llama3-405b", 8, 8192, 16384, 53248, 128), ("llama3-405b", 8, 2048, 16384, 53248, 128)]
for model, tp, tokens, h, ffn, heads in [] if "gemm_kernels" not in SECTIONS else GEMM_SHAPES:
    try:
        gated = model.startswith("llama")
        kvh = 8 if gated else heads
        dd = h // heads
        shapes = {"qkv": (h, (heads // tp) * dd + 2 * max(1, kvh // tp) * dd), "proj": (h // tp, h),
                  "fc1": (h, (2 if gated else 1) * ffn // tp), "fc2": (ffn // tp, h)}
        for op, (k, n) in shapes.items():
            x = torch.randn(tokens, k, device=dev, dtype=dt, requires_grad=True)
            w = (torch.randn(n, k, device=dev, dtype=dt) * 0.02).requires_grad_(True)
            g = torch.randn(tokens, n, device=dev, dtype=dt)
            fwd = kernel_ms(lambda: F.linear(x, w))
            out = F.linear(x, w)
            bwd = kernel_ms(lambda: torch.autograd.grad(out, (x, w), g, retain_graph=True))
            flop = 2 * tokens * k * n
            R["gemm_kernels"].append({"model": model, "tp": tp, "tokens": tokens, "op": op, "k": k, "n": n,
                                      "fwd_kernel_ms": fwd, "bwd_kernel_ms": bwd,
                                      "fwd_tflops": flop / fwd / 1e9, "bwd_tflops": 2 * flop / bwd / 1e9})
            del x, w, g, out
        log("gemm kernels", model, tp, tokens,
            [f'{r["op"]}:{r["fwd_tflops"]:.0f}/{r["bwd_tflops"]:.0f}' for r in R["gemm_kernels"][-4:]])
        torch.cuda.empty_cache()
    except Exception as ex:  # noqa
        log("gemm kernel case failed", model, str(ex)[:200])
    save()

# ---- 6. more whole layers run back to back (sustained), clocks sampled ------------------------
for model, tp, seq, mbs, secs in [] if "sustained_layers" not in SECTIONS else [
        ("llama3-405b", 8, 8192, 1, 25), ("gpt3-22b", 8, 2048, 4, 20), ("llama3-8b", 1, 8192, 1, 20)]:
    try:
        lay = lb.Layer(model, tp, "flash", "none")
        x = torch.randn(seq, mbs, lay.h, device=dev, dtype=dt, requires_grad=True)
        g = torch.randn(seq, mbs, lay.h, device=dev, dtype=dt)
        step = lambda: lay(x).backward(g)  # noqa: E731
        burst = timed(step, reps=10)
        sustained(f"layer_{model}_t{tp}_s{seq}_b{mbs}_flash", step, 1e9 * burst, secs)  # tflops field = burst/ms
        R["sustained"][f"layer_{model}_t{tp}_s{seq}_b{mbs}_flash"]["burst_ms"] = burst
        del lay, x, g
        torch.cuda.empty_cache()
    except Exception as ex:  # noqa
        log("sustained layer failed", model, str(ex)[:200])
save()
log("done")
