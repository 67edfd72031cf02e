#!/usr/bin/env python3
"""Third set of measurements on one GPU (see h200_kernels.py):

- sustained: one large GEMM (8192^3, BF16 then FP8) run back to back for
  tens of seconds, the achieved rate, SM clock and board power read each
  second: what a training step's GEMMs get once the chip sits at its power
  limit, against the few-millisecond rounds of gemm.csv;
- wgrad_out: weight-gradient GEMMs (m = n = 4096, k = tokens) writing BF16
  against FP32 output (Megatron's gradient-accumulation fusion writes the
  FP32 main_grad), for the output store's cost at short k.

python3 bench/gpu/h200_sustained.py OUTDIR [part...]
"""
import os, subprocess, sys, time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h200_kernels import writer, randn, timed, dev, run_parts  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else "."


def smi():
    q = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu", "--format=csv,noheader,nounits"],
                       capture_output=True, text=True, timeout=10).stdout.strip().split(",")
    return [x.strip() for x in q]


def sustained():
    f, w = writer("sustained.csv", "one 8192^3 GEMM launched back to back for SECONDS (BF16 torch.mm, then FP8 torch._scaled_mm e4m3 -> bf16); "
                  "each row one second: achieved TFLOP/s over that second (CUDA events) and nvidia-smi's SM clock, board power and temperature read at its end",
                  ["dtype", "t_s", "tflops", "sm_mhz", "power_w", "temp_c"])
    s = 8192
    a, b = randn(s, s), randn(s, s)
    a8, b8 = randn(s, s).to(torch.float8_e4m3fn), randn(s, s).to(torch.float8_e4m3fn).t()
    one = torch.ones((), device=dev)
    for dt, fn, secs in (("bf16", lambda: torch.mm(a, b), 40),
                         ("fp8", lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16), 25)):
        t0 = time.time()
        while time.time() - t0 < secs:
            e0, e1 = torch.cuda.Event(True), torch.cuda.Event(True)
            n = 0
            e0.record()
            t1 = time.time()
            while time.time() - t1 < 1.0:
                for _ in range(20):
                    fn()
                n += 20
                torch.cuda.synchronize()
            e1.record()
            torch.cuda.synchronize()
            sec = e0.elapsed_time(e1) / 1e3
            w.writerow([dt, "%.1f" % (time.time() - t0), "%.1f" % (2 * s**3 * n / sec / 1e12)] + smi())
            f.flush()
    f.close()


def wgrad_out():
    f, w = writer("wgrad_out.csv", "weight-gradient GEMM dW[4096 x 4096] = dY^T X over k tokens, BF16 inputs, output BF16 (torch.mm) or FP32 "
                  "(torch.mm out_dtype=float32), timed inside a CUDA graph (20 calls per replay)",
                  ["k", "out", "seconds", "tflops"])
    from h200_layers import graph_time
    m = n = 4096
    for k in (256, 512, 1024, 2048, 4096, 8192, 16384):
        x, y = randn(k, m).t(), randn(k, n)
        for out, fn in (("bf16", lambda: torch.mm(x, y)), ("fp32", lambda: torch.mm(x, y, out_dtype=torch.float32))):
            try:
                t = graph_time(fn)
                w.writerow([k, out, "%.4e" % t, "%.1f" % (2 * m * n * k / t / 1e12)])
            except Exception as ex:  # noqa
                w.writerow([k, out, "error", str(ex)[:80].replace(",", ";")])
    f.close()


if __name__ == "__main__":
    run_parts(globals(), ["wgrad_out", "sustained"])
