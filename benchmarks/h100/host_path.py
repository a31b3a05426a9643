#!/usr/bin/env python3
"""Host time per ``gemm_opt.matmul`` call on the local NVIDIA GPU, by stage, next to the
kernels' GPU time and ``torch.matmul``'s.

A decode-sized GEMM's kernel is shorter than the Python that launches it, so
the host path decides what a caller gets. For each shape and schedule this
prints, in microseconds per call (best of 3 rounds of ``--calls`` calls,
synchronized every 200 calls so the launch queue never fills):

* ``eager``: ``gemm_opt.matmul`` as a plain eager call goes: the dispatcher
  skipped, the launch prepared by the first call of the signature
  (:class:`gemm_opt.runtime.gemm.Prepared`) reused;
* ``operator``: ``torch.ops.gemm_opt.matmul``, as traced, grad-requiring or
  profiled calls go (the dispatcher and the full checks);
* ``first call``: the eager call with the plan cache emptied first
  (:func:`gemm_opt.runtime.plan.clear_plans`): the full checks and choices
  of a signature's first call, without the dispatcher;
* ``prepared launch``: the prepared launch alone (C allocated once);
* ``torch.matmul`` (cuBLAS) on the same operands;

then the GPU time per call of each schedule and of ``torch.matmul`` with no
host in the way: 20 calls captured in a CUDA graph, replayed 20 times (warm
L2, median). The host rows are the cost a caller pays when the GPU is idle;
the graph rows are the floor of what the kernels cost.

    PYTHONPATH=python python3 benchmarks/h100/host_path.py [--calls 2000] [--out FILE]

Needs only torch and the bundles (``python -m gemm_opt.kernels.build_bundles
--target cuda:90``). Exit 2 without a GPU.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib

SHAPES = ((512, 512, 8192), (16, 4096, 7168), (128, 7168, 2048), (64, 64, 64))
SCHEDULES = (("data-parallel", None), ("persistent", None), ("stream-k", "atomic"),
             ("stream-k", "linear"), ("stream-k", "tree"))  # fmt: skip


def per_call_us(torch: Any, fn: Any, calls: int, batch: int = 200) -> float:
    """Host microseconds per call of ``fn``: best of 3 rounds."""
    for _ in range(10):
        fn()
    best = float("inf")
    for _ in range(3):
        total = 0.0
        for _ in range(max(calls // batch, 1)):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(batch):
                fn()
            total += time.perf_counter() - t0
        best = min(best, total / (max(calls // batch, 1) * batch))
    return best * 1e6


def one_shape(torch: Any, m: int, n: int, k: int, calls: int, say: Any) -> None:
    """The host rows and the GPU row of one shape."""
    import gemm_opt
    from gemm_opt import torch_ops  # noqa: F401  (registers torch.ops.gemm_opt)
    from gemm_opt.runtime import plan as plans

    dt = torch.bfloat16
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, device="cuda", generator=gen).to(dt)
    b = torch.randn(k, n, device="cuda", generator=gen).to(dt)
    say(f"== {m}x{n}x{k}")
    cublas = per_call_us(torch, lambda: torch.matmul(a, b), calls)
    say(f"{'torch.matmul':>22}  host {cublas:6.1f}")
    gpu = {"torch.matmul": lambda: torch.matmul(a, b)}
    for kind, red in SCHEDULES:
        label = kind + (f"/{red}" if red else "")
        kw = dict(schedule=kind, reduction=red, num_programs=None, num_xcds=1,
                  config=None, out=None, seed=None)  # fmt: skip
        plan = plans.plan("matmul", a, b, **kw)
        c = plans.launch(plan, a, b)  # the plan's first launch makes its prepared launch
        prepared = plan.prepared
        eager = functools.partial(gemm_opt.matmul, a, b, schedule=kind, reduction=red)

        def first_call(eager=eager) -> None:
            plans.clear_plans()
            eager()

        rows = {
            "eager": eager,
            "operator": functools.partial(torch.ops.gemm_opt.matmul, a, b, kind, red),
            "first call": first_call,
            "prepared launch": functools.partial(prepared, a, b, c),
        }
        host = "  ".join(f"{name} {per_call_us(torch, fn, calls):6.1f}"
                         for name, fn in rows.items())  # fmt: skip
        say(f"{label:>22}  {host}")
        gpu[label] = eager
    say("  GPU (CUDA graph): " + ", ".join(
        f"{name} {benchlib.graph_us(torch, fn):.1f}" for name, fn in gpu.items()))  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--out", type=Path, help="also write the report here")
    args = p.parse_args(argv)
    torch = benchlib.cuda_torch("host_path")
    if torch is None:
        return 2
    say = benchlib.Report()
    say(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, bf16, us per call")
    for m, n, k in SHAPES:
        one_shape(torch, m, n, k, args.calls, say)
    say.write(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
