#!/usr/bin/env python3
"""Host microseconds per GEMM call on the GPU, ours beside torch's (diagnosis, not a benchmark).

A model whose GEMMs are short is paced by the host: each call's Python (the
operator's dispatch, the plan lookup, the launch) against the GPU's few tens
of microseconds. This times the host side alone: ``--calls`` calls are queued
without a synchronization (the GPU queue does not fill at these counts), the
CPU clock around them divided by the call count, best of ``--rounds``; then the
GPU catches up before the next round. Paths, each beside torch's equivalent:

* ``eager no-grad``: ``gemm_opt.linear`` against ``F.linear``, gradients off
  (the operator through ``torch.library``'s dispatch);
* ``eager grad``: the same with an input that records a gradient (our eager
  autograd path without the dispatcher);
* ``compiled``: a chain of ``--depth`` ``gemm_opt.nn.Linear`` layers under
  ``torch.compile(fullgraph=True)`` against ``torch.nn.Linear``'s, per layer;

* ``fp8 rowwise MxNxK``: ``gemm_opt.matmul`` with FP8 operands and rowwise scales
  against ``torch._scaled_mm`` (needs the fp8 bundle);

then the top entries of a ``cProfile`` of the compiled chain of ours.

    PYTHONPATH=python python3 benchmarks/h100/host_overhead.py --out OUT
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

import gemm_opt
from gemm_opt import nn as gnn

#: The FP8 rows' problems: a small one, a prefill one, a decode one.
FP8_SHAPES = ((512, 512, 8192), (4096, 2112, 7168), (16, 4096, 7168))


def host_us(fn: Callable[[], Any], calls: int, rounds: int) -> float:
    """Best over ``rounds`` of the CPU microseconds per call of ``calls`` unsynchronized calls."""
    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return best


def chain(kind: str, width: int, depth: int, dev: torch.device) -> torch.nn.Module:
    make = gnn.Linear if kind == "gemm_opt" else torch.nn.Linear
    torch.manual_seed(0)
    return torch.nn.Sequential(
        *[make(width, width, bias=False, device=dev, dtype=torch.bfloat16) for _ in range(depth)]
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--tokens", type=int, default=4096)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--calls", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--fp8", action="store_true", help="also FP8 rowwise calls (fp8 bundle)")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("error: no CUDA GPU")
        return 2
    dev = torch.device("cuda")
    bf16 = {"device": dev, "dtype": torch.bfloat16}
    x = torch.randn(args.tokens, args.width, **bf16)
    w = torch.randn(3 * args.width, args.width, **bf16)
    xg = x.clone().requires_grad_()
    rows: dict[str, dict[str, float]] = {}
    with torch.no_grad():
        rows["eager no-grad"] = {
            "torch": host_us(lambda: F.linear(x, w), args.calls, args.rounds),
            "gemm_opt": host_us(lambda: gemm_opt.linear(x, w), args.calls, args.rounds),
        }
    rows["eager grad"] = {
        "torch": host_us(lambda: F.linear(xg, w), args.calls, args.rounds),
        "gemm_opt": host_us(lambda: gemm_opt.linear(xg, w), args.calls, args.rounds),
    }
    if args.fp8:
        e4m3 = torch.float8_e4m3fn
        for m, n, k in FP8_SHAPES:
            a8 = torch.randn(m, k, device=dev).to(e4m3)
            w8 = torch.randn(n, k, device=dev).to(e4m3)
            sa = torch.rand(m, 1, device=dev) + 0.5
            sb = torch.rand(1, n, device=dev) + 0.5
            rows[f"fp8 rowwise {m}x{n}x{k}"] = {
                "torch": host_us(
                    lambda a8=a8, w8=w8, sa=sa, sb=sb: torch._scaled_mm(
                        a8, w8.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16
                    ),
                    args.calls,
                    args.rounds,
                ),
                "gemm_opt": host_us(
                    lambda a8=a8, w8=w8, sa=sa, sb=sb: gemm_opt.matmul(
                        a8, w8.t(), scale_a=sa, scale_b=sb
                    ),
                    args.calls,
                    args.rounds,
                ),
            }
    compiled = {}
    for kind in ("torch", "gemm_opt"):
        model = torch.compile(chain(kind, args.width, args.depth, dev), fullgraph=True)
        with torch.no_grad():
            compiled[kind] = model
            per = host_us(lambda m=model: m(x), max(1, args.calls // args.depth), args.rounds)
        rows.setdefault("compiled no-grad, per layer", {})[kind] = per / args.depth
    for path, r in rows.items():
        r["ours / torch"] = r["gemm_opt"] / r["torch"]
        print(f"{path:28} torch {r['torch']:8.1f} us  gemm_opt {r['gemm_opt']:8.1f} us  "
              f"ratio {r['ours / torch']:.2f}")  # fmt: skip
    prof = cProfile.Profile()
    with torch.no_grad():
        prof.enable()
        for _ in range(200):
            compiled["gemm_opt"](x)
        prof.disable()
    torch.cuda.synchronize()
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(30)
    print(text.getvalue())
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "host_overhead.json").write_text(json.dumps(rows, indent=1))
    (args.out / "host_overhead_profile.txt").write_text(text.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
