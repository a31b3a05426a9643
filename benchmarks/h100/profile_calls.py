#!/usr/bin/env python3
"""Run ``gemm_opt.matmul`` (any schedule) and ``torch.matmul`` on a few problems, for a profiler.

Where the sweep (``sweep.py``) finds a problem slower than torch, this puts
both sides of it under Nsight Compute: each problem is warmed up, then each
side runs once inside an NVTX range named after it, so ``ncu --nvtx`` can
tell the kernels apart. Nothing is timed here::

    ncu --nvtx --print-summary per-kernel --csv \\
        --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,\\
    sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size \\
        python3 benchmarks/h100/profile_calls.py --bundles DIR \\
        --problem 512x512x8192 --problem 8x62x72x8:TN:bmm

A problem is ``[B x]MxNxK[:LAYOUT[:FORM]]``: LAYOUT is NN, NT, TN or TT (as in
the sweep: ``T`` a transposed view of row-major storage), FORM ``bmm`` (3-D A
and B) or ``bcast`` (3-D A, 2-D B); a batch count needs a FORM. Needs torch and
the bundles only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYOUTS = ("NN", "NT", "TN", "TT")
FORMS = ("2d", "bmm", "bcast")


def parse_problem(text: str) -> tuple[int, int, int, int, str, str]:
    """``(batch, m, n, k, layout, form)`` of ``[B x]MxNxK[:LAYOUT[:FORM]]``."""
    parts = text.split(":")
    dims = [int(d) for d in parts[0].lower().split("x")]
    layout = parts[1].upper() if len(parts) > 1 else "NN"
    form = parts[2].lower() if len(parts) > 2 else "2d"
    if layout not in LAYOUTS or form not in FORMS or len(dims) not in (3, 4):
        raise ValueError(f"--problem: expected [B x]MxNxK[:NN|NT|TN|TT[:bmm|bcast]], got {text!r}")
    if (len(dims) == 4) != (form != "2d"):
        raise ValueError(f"--problem: a batch count goes with a bmm or bcast form, got {text!r}")
    batch = dims[0] if len(dims) == 4 else 1
    m, n, k = dims[-3:]
    return batch, m, n, k, layout, form


def operands(torch, batch, m, n, k, layout, form, dtype):
    """A and B as the problem lays them: a transposed side is a view of row-major storage."""

    def make(rows, cols, trans, lead):
        shape = (*lead, cols, rows) if trans else (*lead, rows, cols)
        x = torch.randn(shape, device="cuda", dtype=dtype)
        return x.transpose(-1, -2) if trans else x

    lead_a = () if form == "2d" else (batch,)
    lead_b = (batch,) if form == "bmm" else ()
    return make(m, k, layout[0] == "T", lead_a), make(k, n, layout[1] == "T", lead_b)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundles", type=Path, help="bundle folder (holds cuda90/)")
    parser.add_argument(
        "--problem", action="append", required=True, help="[B x]MxNxK[:LAYOUT[:FORM]]"
    )
    parser.add_argument("--schedule", default="auto")
    parser.add_argument("--dtype", choices=("bf16", "fp16"), default="bf16")
    args = parser.parse_args(argv)
    problems = [parse_problem(p) for p in args.problem]
    sys.modules["triton"] = None  # type: ignore[assignment]  # the torch-only runtime
    sys.path.insert(0, str(ROOT / "python"))
    import os

    import torch

    if args.bundles is not None:
        os.environ["GEMM_OPT_BUNDLE_DIR"] = str(args.bundles)
    import gemm_opt

    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    for text, (batch, m, n, k, layout, form) in zip(args.problem, problems, strict=True):
        a, b = operands(torch, batch, m, n, k, layout, form, dtype)
        for _ in range(3):
            gemm_opt.matmul(a, b, schedule=args.schedule)
            torch.matmul(a, b)
        torch.cuda.synchronize()
        for side in ("ours", "torch"):
            torch.cuda.nvtx.range_push(f"{side} {text}")
            if side == "ours":
                gemm_opt.matmul(a, b, schedule=args.schedule)
            else:
                torch.matmul(a, b)
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
        print(f"ran {text}: ours and torch", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
