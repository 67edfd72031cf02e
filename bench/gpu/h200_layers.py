#!/usr/bin/env python3
"""Second set of measurements on one GPU (see h200_kernels.py):

- graphgemm: the small GEMMs again, each call captured 20 times in a CUDA
  graph and replayed, so the time is the GPU's (kernel plus the gap between
  kernels), without Python's launch cost (h200_kernels.py's back-to-back
  eager launches are host bound below ~15 us);
- dense / moe: one transformer layer's forward + backward in plain PyTorch
  (dense: Llama 3 8B's layer, cuDNN fused attention; moe: a dropless
  mixture-of-experts MLP as torchtitan writes it: router, top-k, sort by
  expert, gather, torch._grouped_mm up / SwiGLU / down, weighted scatter
  back), timed with CUDA events, and one step profiled with
  torch.profiler (record_shapes) as a Kineto trace, for
  `shardsim validate --kineto`.

python3 bench/gpu/h200_layers.py OUTDIR [part...]
"""
import csv, os, sys, time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h200_kernels import writer, randn, timed, left, LAYERS, dev, run_parts  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else "."


def graph_time(fn, reps=20):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps):
            fn()
    return timed(g.replay, iters=10) / reps


def graphgemm():
    f, w = writer("gemm_graph.csv", "dense GEMM timed inside a CUDA graph (20 calls per replay, 10 replays, median of 3 rounds): "
                  "the GPU's time per GEMM including the gap between kernels; shapes and passes as gemm.csv",
                  ["model", "layer", "pass", "dtype", "m", "n", "k", "seconds", "tflops"])
    one = torch.ones((), device=dev)
    shapes = []
    for model, layer, nout, kin in LAYERS:
        if model == "odd":
            continue
        for T in (256, 1024):
            shapes += [(model, layer, "fwd", T, nout, kin), (model, layer, "dgrad", T, kin, nout),
                       (model, layer, "wgrad", nout, kin, T)]
    shapes += [("square", "square", "fwd", s, s, s) for s in (256, 512, 768, 1024, 1536, 2048, 3072, 4096)]
    for model, layer, ps, m, n, k in shapes:
        if left() < 0:
            break
        a, b = randn(m, k), randn(k, n)
        a8, b8 = randn(m, k).to(torch.float8_e4m3fn), randn(n, k).to(torch.float8_e4m3fn).t()
        for dt, fn in (("bf16", lambda: torch.mm(a, b)),
                       ("fp8", lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))):
            try:
                t = graph_time(fn)
                w.writerow([model, layer, ps, dt, m, n, k, "%.4e" % t, "%.1f" % (2 * m * n * k / t / 1e12)])
            except Exception as ex:  # noqa
                w.writerow([model, layer, ps, dt, m, n, k, "error", str(ex)[:80].replace(",", ";")])
        f.flush()
    f.close()


# ---------------- layers ----------------
class Dense(torch.nn.Module):
    """Llama-style layer: RMSNorm, QKV (GQA), RoPE left out, SDPA, proj, RMSNorm, SwiGLU MLP."""

    def __init__(self, h, heads, kv, ffn):
        super().__init__()
        self.h, self.heads, self.kv, self.d = h, heads, kv, h // heads
        self.n1, self.n2 = torch.nn.RMSNorm(h), torch.nn.RMSNorm(h)
        self.qkv = torch.nn.Linear(h, (heads + 2 * kv) * self.d, bias=False)
        self.proj = torch.nn.Linear(heads * self.d, h, bias=False)
        self.up = torch.nn.Linear(h, 2 * ffn, bias=False)
        self.down = torch.nn.Linear(ffn, h, bias=False)

    def attn(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.n1(x)).split([self.heads * self.d, self.kv * self.d, self.kv * self.d], -1)
        q = q.view(b, s, self.heads, self.d).transpose(1, 2)
        k = k.view(b, s, self.kv, self.d).transpose(1, 2)
        v = v.view(b, s, self.kv, self.d).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return x + self.proj(o.transpose(1, 2).reshape(b, s, -1))

    def forward(self, x):
        x = self.attn(x)
        a, g = self.up(self.n2(x)).chunk(2, -1)
        return x + self.down(F.silu(a) * g)


class MoE(Dense):
    """The attention of Dense, then a dropless top-k MoE MLP over E experts."""

    def __init__(self, h, heads, kv, ffn, experts, topk):
        super().__init__(h, heads, kv, 16)
        self.E, self.k, self.ffn = experts, topk, ffn
        self.router = torch.nn.Linear(h, experts, bias=False)
        self.w1 = torch.nn.Parameter(torch.randn(experts, h, 2 * ffn) * h ** -0.5)
        self.w2 = torch.nn.Parameter(torch.randn(experts, ffn, h) * ffn ** -0.5)

    def forward(self, x):
        x = self.attn(x)
        b, s, h = x.shape
        t = self.n2(x).reshape(-1, h)
        probs = torch.softmax(self.router(t).float(), -1)
        p, idx = torch.topk(probs, self.k, -1)
        p = p / p.sum(-1, keepdim=True)
        flat = idx.flatten()
        order = torch.argsort(flat, stable=True)
        counts = torch.bincount(flat, minlength=self.E)
        # torch._grouped_mm wants each group's rows a multiple of 16: pad each expert's block
        pad = (counts + 15) // 16 * 16
        ends = torch.cumsum(pad, 0)
        starts = ends - pad
        rank = torch.arange(flat.numel(), device=x.device) - (torch.cumsum(counts, 0) - counts)[flat[order]]
        dst = starts[flat[order]] + rank
        rows = int(ends[-1].item())
        src = order // self.k
        xs = t.new_zeros(rows, h).index_copy(0, dst, t[src])
        hh = torch._grouped_mm(xs, self.w1, offs=ends.int())
        a, g = hh.chunk(2, -1)
        y = torch._grouped_mm(F.silu(a) * g, self.w2, offs=ends.int())
        y = y[dst] * p.flatten()[order].unsqueeze(-1).to(y.dtype)
        out = torch.zeros_like(t).index_add(0, src, y)
        return x + out.view(b, s, h)


def step_fn(layers, x):
    def step():
        y = x
        for l in layers:
            y = l(y)
        y.float().pow(2).mean().backward()
    return step


CASES = [
    # name, builder, layers, tokens (batch 1 x seq)
    ("llama3-8b", lambda: Dense(4096, 32, 8, 14336), 4, 4096),
    ("qwen3-30b-a3b", lambda: MoE(2048, 32, 4, 768, 128, 8), 4, 4096),
    ("qwen3-30b-a3b-ep8", lambda: MoE(2048, 32, 4, 768, 16, 8), 4, 4096),
    ("gpt-oss-120b", lambda: MoE(2880, 64, 8, 2880, 128, 4), 2, 4096),
    ("deepseek-v3-ep8", lambda: MoE(7168, 128, 128, 2048, 32, 8), 1, 4096),
]


def layers():
    f, w = writer("layers.csv", "one training step's forward + backward of N stacked layers in plain PyTorch, bf16 weights and activations "
                  "(no optimizer, no communication): Dense = Llama layer (RMSNorm, GQA QKV, SDPA default backend causal, proj, SwiGLU MLP; no RoPE); "
                  "MoE = the same attention then a dropless top-k MLP (router fp32 softmax, top-k, stable sort by expert, gather, "
                  "torch._grouped_mm up, SwiGLU, torch._grouped_mm down, weighted index_add back; each expert's rows padded to 16). "
                  "seconds = CUDA-event time of one step (median of 3 rounds); gpu_busy_s = sum of the profiled step's kernel durations",
                  ["case", "layers", "tokens", "seconds", "gpu_busy_s", "profile"])
    from torch.profiler import profile, ProfilerActivity
    for name, build, n, T in CASES:
        if left() < 0:
            break
        try:
            torch.manual_seed(0)
            ls = [build().to(dev, torch.bfloat16) for _ in range(n)]
            x = randn(1, T, ls[0].h).requires_grad_()
            step = step_fn(ls, x)
            t = timed(step, iters=3)
            prof = "kineto_%s.json" % name
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as pr:
                step()
                torch.cuda.synchronize()
            pr.export_chrome_trace(os.path.join(OUT, prof))
            import json
            with open(os.path.join(OUT, prof)) as pf:
                ev = json.load(pf)["traceEvents"]
            busy = sum(e.get("dur", 0) for e in ev if e.get("cat") == "kernel") / 1e6
            w.writerow([name, n, T, "%.4e" % t, "%.4e" % busy, prof])
            del ls, x
            torch.cuda.empty_cache()
        except Exception as ex:  # noqa
            w.writerow([name, n, T, "error", "", str(ex)[:100].replace(",", ";")])
        f.flush()
    f.close()


if __name__ == "__main__":
    run_parts(globals(), ["graphgemm", "layers"])
