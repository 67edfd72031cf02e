#!/usr/bin/env python3
"""Kernel measurements on one GPU, as calibration data for shardsim's
accelerator model (models/accel.c): GEMM efficiency by shape (BF16 and FP8,
forward / dgrad / wgrad shapes of real models), grouped GEMMs of MoE experts,
fused attention (PyTorch SDPA's flash and cuDNN backends), memory-bound
kernels and launch costs.

Not part of the build: run by hand on a machine with a GPU and PyTorch
(python3 bench/gpu/h200_kernels.py OUTDIR); it writes OUTDIR/*.csv, each
with a header saying what, how and on what it was measured.  Timing: CUDA
events around N back-to-back launches after warm-up, the median of 3 such
rounds; operands random normal (zeros run faster: lower power, higher clock).
"""
import csv, math, os, sys, time, platform, subprocess

import torch
import torch.nn.functional as F

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
T0 = time.time()
BUDGET = float(os.environ.get("BUDGET_S", "330"))
dev = torch.device("cuda")
torch.backends.cuda.matmul.allow_tf32 = False


def left():
    return BUDGET - (time.time() - T0)


def timed(fn, iters=None, target_ms=25.0):
    """Median seconds per call of fn over 3 rounds of back-to-back calls."""
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    if iters is None:
        s, e = torch.cuda.Event(True), torch.cuda.Event(True)
        s.record(); fn(); e.record(); torch.cuda.synchronize()
        one = max(s.elapsed_time(e), 1e-3)
        iters = int(min(200, max(3, target_ms / one)))
    res = []
    for _ in range(3):
        s, e = torch.cuda.Event(True), torch.cuda.Event(True)
        s.record()
        for _ in range(iters):
            fn()
        e.record()
        torch.cuda.synchronize()
        res.append(s.elapsed_time(e) / 1e3 / iters)
    res.sort()
    return res[1]


def header(f, what):
    p = torch.cuda.get_device_properties(0)
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,power.limit",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as ex:  # noqa
        smi = "nvidia-smi failed: %s" % ex
    f.write("# %s\n" % what)
    f.write("# measured by shardsim bench/gpu/h200_kernels.py on %s UTC\n" % time.strftime("%Y-%m-%d %H:%M", time.gmtime()))
    f.write("# device: %s, %d SMs, %.1f GiB; nvidia-smi: %s\n" % (p.name, p.multi_processor_count,
            p.total_memory / 2**30, smi))
    f.write("# torch %s, CUDA %s, cuDNN %s, python %s\n" % (torch.__version__, torch.version.cuda,
            torch.backends.cudnn.version(), platform.python_version()))
    f.write("# timing: CUDA events around back-to-back launches after 2 warm-ups, median of 3 rounds; random normal operands\n")


def writer(name, what, cols):
    f = open(os.path.join(OUT, name), "w")
    header(f, what)
    w = csv.writer(f)
    w.writerow(cols)
    return f, w


def randn(*shape, dtype=torch.bfloat16):
    return torch.randn(*shape, device=dev, dtype=torch.float32).to(dtype)


# ---------------- dense GEMMs ----------------
# (model, layer, n_out, k_in): the linear layers of real models at tp 1
LAYERS = [
    ("llama3-8b", "qkv", 6144, 4096), ("llama3-8b", "proj", 4096, 4096),
    ("llama3-8b", "up_gate", 28672, 4096), ("llama3-8b", "down", 4096, 14336),
    ("llama3-70b-tp4", "up_gate", 14336, 8192), ("llama3-70b-tp4", "down", 8192, 7168),
    ("llama3-70b-tp4", "qkv", 2560, 8192), ("gpt3-175b-tp8", "qkv", 4608, 12288),
    ("gpt3-175b-tp8", "fc1", 6144, 12288), ("gpt3-175b-tp8", "fc2", 12288, 6144),
    ("qwen3-30b-expert", "up_gate", 1536, 2048), ("qwen3-30b-expert", "down", 2048, 768),
    ("qwen3-235b-expert", "up_gate", 3072, 4096), ("qwen3-235b-expert", "down", 4096, 1536),
    ("gpt-oss-expert", "up_gate", 5760, 2880), ("gpt-oss-expert", "down", 2880, 2880),
    ("deepseek-v3-expert", "up_gate", 4096, 7168), ("deepseek-v3-expert", "down", 7168, 2048),
    ("gpt3-125m", "fc1", 3072, 768), ("gpt3-125m", "qkv", 2304, 768),
    ("odd", "up", 5000, 3000), ("odd", "down", 3000, 5000),
]
TOKENS = [256, 1024, 4096, 16384]


def gemm_bf16(m, n, k):
    a, b = randn(m, k), randn(k, n)
    return timed(lambda: torch.mm(a, b))


def gemm_fp8(m, n, k):
    a = randn(m, k).to(torch.float8_e4m3fn)
    b = randn(n, k).to(torch.float8_e4m3fn).t()  # column-major (TN), as cuBLASLt's FP8 needs
    one = torch.ones((), device=dev)
    return timed(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))


def dense():
    f, w = writer("gemm.csv", "dense GEMM C[m x n] = A[m x k] B[k x n] (torch.mm, cuBLAS; fp8: torch._scaled_mm e4m3 x e4m3 -> bf16, per-tensor scales); "
                  "pass fwd: m=tokens n=out k=in; dgrad: m=tokens n=in k=out; wgrad: m=out n=in k=tokens",
                  ["model", "layer", "pass", "dtype", "m", "n", "k", "seconds", "tflops"])
    for model, layer, nout, kin in LAYERS:
        for T in TOKENS:
            for ps, (m, n, k) in (("fwd", (T, nout, kin)), ("dgrad", (T, kin, nout)), ("wgrad", (nout, kin, T))):
                for dt, fn in (("bf16", gemm_bf16), ("fp8", gemm_fp8)):
                    if left() < 0:
                        f.close(); return
                    try:
                        t = fn(m, n, k)
                        w.writerow([model, layer, ps, dt, m, n, k, "%.4e" % t, "%.1f" % (2 * m * n * k / t / 1e12)])
                    except Exception as ex:  # noqa
                        w.writerow([model, layer, ps, dt, m, n, k, "error", str(ex)[:80].replace(",", ";")])
        f.flush()
    # square sweep, for the size curve
    for s in (512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384):
        for dt, fn in (("bf16", gemm_bf16), ("fp8", gemm_fp8)):
            if left() < 0:
                break
            t = fn(s, s, s)
            w.writerow(["square", "square", "fwd", dt, s, s, s, "%.4e" % t, "%.1f" % (2 * s**3 / t / 1e12)])
    f.close()


# ---------------- grouped GEMMs (MoE experts) ----------------
EXPERTS = [("qwen3-30b", 2048, 768), ("qwen3-235b", 4096, 1536), ("gpt-oss", 2880, 2880), ("deepseek-v3", 7168, 2048)]


def grouped():
    f, w = writer("grouped_gemm.csv", "MoE expert up (gated: 2 x ffn out) GEMM of E local experts, each with t tokens: "
                  "'grouped' = torch._grouped_mm (one CUTLASS grouped kernel); 'loop' = one torch.mm per expert "
                  "(as a loop of cuBLAS calls, Transformer Engine's GroupedLinear without multi-stream); 'batched' = torch.bmm (equal t)",
                  ["model", "kind", "experts", "tokens_per_expert", "m", "n", "k", "seconds", "tflops"])
    for model, h, ffn in EXPERTS:
        n, k = 2 * ffn, h
        for E in (4, 16, 64):
            for t in (128, 512, 2048):
                if left() < 0:
                    f.close(); return
                if E * t * k * 2 > 2**31:
                    continue
                x, wt = randn(E * t, k), randn(E, k, n)
                flops = 2.0 * E * t * n * k
                offs = torch.arange(1, E + 1, device=dev, dtype=torch.int32) * t
                kinds = []
                if hasattr(torch, "_grouped_mm"):
                    wcm = wt.transpose(-2, -1).contiguous().transpose(-2, -1)  # column-major experts, if required
                    try:
                        torch._grouped_mm(x, wt, offs=offs)
                        kinds.append(("grouped", lambda: torch._grouped_mm(x, wt, offs=offs)))
                    except Exception:  # noqa
                        kinds.append(("grouped", lambda: torch._grouped_mm(x, wcm, offs=offs)))
                kinds.append(("batched", lambda: torch.bmm(x.view(E, t, k), wt)))
                xs = list(x.view(E, t, k).unbind(0)); ws = list(wt.unbind(0))
                kinds.append(("loop", lambda: [torch.mm(a, b) for a, b in zip(xs, ws)]))
                for kind, fn in kinds:
                    try:
                        s = timed(fn)
                        w.writerow([model, kind, E, t, t, n, k, "%.4e" % s, "%.1f" % (flops / s / 1e12)])
                    except Exception as ex:  # noqa
                        w.writerow([model, kind, E, t, t, n, k, "error", str(ex)[:80].replace(",", ";")])
                del x, wt
        f.flush()
    f.close()


# ---------------- attention ----------------
def attention():
    from torch.nn.attention import sdpa_kernel, SDPBackend
    f, w = writer("attention.csv", "fused causal self-attention, bf16, torch SDPA (flash = FlashAttention-2 in PyTorch; cudnn = cuDNN fused attention); "
                  "FLOPs counted as 4*b*h*s*s*d/2 forward, 2.5x that backward (masked half skipped); bwd = (fwd+bwd) - fwd",
                  ["backend", "head_dim", "seq", "batch", "heads", "pass", "seconds", "tflops"])
    for backend, bk in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        for d in (64, 128):
            for s in (1024, 2048, 4096, 8192, 16384, 32768):
                if left() < 0:
                    f.close(); return
                heads = 16 if d == 128 else 32
                b = max(1, 32768 // s)
                try:
                    q, k_, v = (randn(b, heads, s, d).requires_grad_() for _ in range(3))
                    go = randn(b, heads, s, d)
                    with sdpa_kernel([bk]):
                        tf = timed(lambda: F.scaled_dot_product_attention(q, k_, v, is_causal=True))

                        def fb():
                            o = F.scaled_dot_product_attention(q, k_, v, is_causal=True)
                            torch.autograd.grad(o, (q, k_, v), go)
                        tfb = timed(fb)
                    fl = 4.0 * b * heads * s * s * d / 2
                    w.writerow([backend, d, s, b, heads, "fwd", "%.4e" % tf, "%.1f" % (fl / tf / 1e12)])
                    tb = tfb - tf
                    w.writerow([backend, d, s, b, heads, "bwd", "%.4e" % tb, "%.1f" % (2.5 * fl / tb / 1e12)])
                except Exception as ex:  # noqa
                    w.writerow([backend, d, s, b, heads, "error", "", str(ex)[:80].replace(",", ";")])
                f.flush()
    f.close()


# ---------------- memory-bound kernels and launches ----------------
def memory():
    f, w = writer("membound.csv", "memory-bound kernels (eager PyTorch); bytes = minimum HBM bytes read + written by the op as written; "
                  "GB_s = bytes / seconds; launches: wall seconds per launch of a tiny kernel issued from Python (host bound) and per replayed launch in a CUDA graph",
                  ["op", "shape", "bytes", "seconds", "GB_s"])
    T, h = 16384, 4096
    x, y = randn(T, h), randn(T, h)
    big = randn(256 * 2**20 // 2 * 4)  # 2 GiB of bf16
    big2 = torch.empty_like(big)
    wgt = randn(h)
    a, g = randn(T, 14336), randn(T, 14336)
    idx = torch.randint(0, T, (T * 8,), device=dev)
    xe = randn(T, 2048)
    logits = randn(T, 128, dtype=torch.float32)
    vocab = randn(8192, 128256)
    tgt = torch.randint(0, 128256, (8192,), device=dev)
    ops = [
        ("copy", "2GiB bf16", 2 * big.numel() * 2, lambda: big2.copy_(big)),
        ("add", "%dx%d bf16" % (T, h), 3 * T * h * 2, lambda: torch.add(x, y)),
        ("rms_norm", "%dx%d bf16" % (T, h), 2 * T * h * 2, lambda: F.rms_norm(x, (h,), wgt)),
        ("layer_norm", "%dx%d bf16" % (T, h), 2 * T * h * 2, lambda: F.layer_norm(x, (h,), wgt)),
        ("swiglu_eager", "%dx14336 bf16" % T, 3 * T * 14336 * 2, lambda: F.silu(a) * g),
        ("gather_rows", "%dx2048 bf16 x8" % T, 2 * T * 8 * 2048 * 2, lambda: xe.index_select(0, idx)),
        ("fp8_cast", "%dx%d bf16->e4m3" % (T, h), T * h * 3, lambda: x.to(torch.float8_e4m3fn)),
        ("amax", "%dx%d bf16" % (T, h), T * h * 2, lambda: x.abs().amax()),
        ("router_softmax_topk", "%dx128 fp32 k8" % T, T * 128 * 4, lambda: torch.topk(torch.softmax(logits, -1), 8, -1)),
        ("cross_entropy", "8192x128256 bf16", 8192 * 128256 * 2, lambda: F.cross_entropy(vocab, tgt)),
    ]
    for name, shape, nbytes, fn in ops:
        if left() < 0:
            break
        try:
            t = timed(fn)
            w.writerow([name, shape, nbytes, "%.4e" % t, "%.1f" % (nbytes / t / 1e9)])
        except Exception as ex:  # noqa
            w.writerow([name, shape, nbytes, "error", str(ex)[:80].replace(",", ";")])
    del big, big2
    # launches: host issue rate of a tiny kernel, then the same from a CUDA graph
    z = torch.zeros(1024, device=dev)
    torch.cuda.synchronize()
    n = 2000
    t0 = time.perf_counter()
    for _ in range(n):
        z.add_(1.0)
    torch.cuda.synchronize()
    w.writerow(["launch_eager_host", "add_ 1024 fp32 x%d" % n, 0, "%.4e" % ((time.perf_counter() - t0) / n), ""])
    try:
        gph = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            z.add_(1.0)
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(gph):
            for _ in range(100):
                z.add_(1.0)
        t = timed(gph.replay, iters=20)
        w.writerow(["launch_graph", "add_ 1024 fp32 x100 per replay", 0, "%.4e" % (t / 100), ""])
    except Exception as ex:  # noqa
        w.writerow(["launch_graph", "", 0, "error", str(ex)[:80].replace(",", ";")])
    f.close()


def run_parts(namespace, default):
    """Runs the parts named on the command line (else `default`), each on
    its own: one that fails is reported and the next still runs."""
    os.makedirs(OUT, exist_ok=True)
    for part in sys.argv[2:] or default:
        t = time.time()
        try:
            namespace[part]()
        except Exception as ex:  # noqa
            print("part %s failed: %r" % (part, ex))
        print("part %s: %.1f s (total %.1f)" % (part, time.time() - t, time.time() - T0), flush=True)


if __name__ == "__main__":
    run_parts(globals(), ["dense", "grouped", "attention", "memory"])
