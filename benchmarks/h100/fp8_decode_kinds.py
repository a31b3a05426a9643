#!/usr/bin/env python3
"""FP8 decode shapes under the split kinds beside ``torch._scaled_mm`` (rowwise, bf16 C).

Kernel time in a CUDA graph (``benchlib.graph_us``, warm L2), each of ours first
checked against float64: ``|C - ref| <= 2^-8 |ref| + s S`` with ``S`` the sum of
the scaled products' magnitudes and ``s`` 2^-12 (2^-5 for atomic stream-K, whose
bf16 C receives each partial). A few rows and a long K leave most SMs idle under
data-parallel; split-K and stream-K spread K over them.

    GEMM_OPT_BUNDLE_DIR=B PYTHONPATH=python python3 benchmarks/h100/fp8_decode_kinds.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
import benchlib

import gemm_opt

SHAPES = ((16, 4096, 7168), (64, 7168, 16384), (128, 7168, 16384))
KINDS = (
    ("data-parallel", {}),
    ("split-k", {}),
    ("stream-k", {"reduction": "atomic"}),
    ("stream-k", {"reduction": "linear"}),
)


def main() -> int:
    if not torch.cuda.is_available():
        print("error: no CUDA GPU")
        return 2
    dev, e4m3 = "cuda", torch.float8_e4m3fn
    torch.manual_seed(0)
    bad = 0
    print(torch.cuda.get_device_name())
    for m, n, k in SHAPES:
        a = torch.randn(m, k, device=dev).to(e4m3)
        w = torch.randn(n, k, device=dev).to(e4m3)
        sa = torch.rand(m, 1, device=dev) + 0.5
        sb = torch.rand(1, n, device=dev) + 0.5
        ref = (a.double() * sa.double()) @ (w.double() * sb.double().t()).t()
        mag = (a.double().abs() * sa.double()) @ (w.double().abs() * sb.double().t()).t()

        def torch_call(a=a, w=w, sa=sa, sb=sb):
            return torch._scaled_mm(a, w.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)

        t = benchlib.graph_us(torch, torch_call)
        gbs = (m * k + n * k + 2 * m * n) / 1e3 / t
        line = [f"{m}x{n}x{k} rowwise: torch {t:6.2f} us ({gbs:5.0f} GB/s)"]
        for sched, extra in KINDS:

            def ours(a=a, w=w, sa=sa, sb=sb, sched=sched, extra=extra):
                return gemm_opt.matmul(a, w.t(), scale_a=sa, scale_b=sb, schedule=sched, **extra)

            slack = 2**-5 if extra.get("reduction") == "atomic" else 2**-12
            err = (ours().double() - ref).abs() - 2**-8 * ref.abs() - slack * mag
            ok = bool((err <= 0).all())
            bad += not ok
            us = benchlib.graph_us(torch, ours)
            name = sched + (f"-{extra['reduction']}" if extra else "")
            line.append(f"{name} {us:6.2f} us {t / us:4.2f}x {'ok' if ok else 'FAIL'}")
        print(" | ".join(line), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
