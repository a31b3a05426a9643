#!/usr/bin/env python3
"""Atomic stream-K on the program counts that give each program one K range in one tile,
against the resident count (132 on the H100), side by side in one run.

Needs torch and the schedule bundles (GPU machine)::

    PYTHONPATH=python python3 benchmarks/h100/stream_k_programs.py > results/stream_k_programs.txt

The counts listed are 132 and those in 96..132 whose split is aligned
(``q`` divides or is a multiple of the iterations per tile, ``r = 0``);
``auto`` is ``schedule="auto"`` (which launches
``gemm_opt.core.schedules.aligned_stream_k_programs``'s count).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib

CASES = [
    ((512, 512, 8192), ("mid", "narrow", "small")),
    ((16, 4096, 7168), ("narrow", "small")),
    ((128, 2048, 7168), ("narrow", "mid")),
    ((128, 7168, 2048), ("narrow",)),
]


def aligned_counts(tiles: int, ipt: int) -> list[int]:
    """132 and the counts in 96..132 whose stream-K split is aligned
    (:attr:`~gemm_opt.core.schedules.StreamKPartition.aligned`) or whole waves
    (a count whose split has no stream-K tiles runs data-parallel: 112 on
    128x7168x2048 in 64x128x128 tiles)."""
    from gemm_opt.core import schedules as S

    return sorted(
        {132}
        | {
            p
            for p in range(96, 133)
            if tiles % p == 0 or S.stream_k_partition(tiles, ipt, p).aligned
        }
    )


def main() -> int:
    import torch

    import gemm_opt as g
    from gemm_opt.core import schedules as S
    from gemm_opt.kernels import h100_configs as h100

    flush = benchlib.Flusher()
    for (m, n, k), names in CASES:
        a, b = benchlib.operands(m, n, k, torch.bfloat16, 3)
        ref = a.double() @ b.double()
        fns = {
            "torch": lambda a=a, b=b: torch.matmul(a, b),
            "auto": lambda a=a, b=b: g.matmul(a, b, schedule="auto"),
        }
        for name in names:
            cfg = h100.GPU_CONFIGS[name]
            ipt = S.iters_per_tile(k, cfg.block_k)
            tiles = S.tile_count(m, n, cfg.block_m, cfg.block_n)
            total = tiles * ipt
            for p in aligned_counts(tiles, ipt):
                fns[f"{name} P={p} ({total / p:.1f} it)"] = lambda a=a, b=b, cfg=cfg, p=p: g.matmul(
                    a, b, schedule="stream-k", reduction="atomic", config=cfg, num_programs=p
                )
        bad = []
        for name, f in list(fns.items()):
            err = ((f().double() - ref).abs().max() / ref.abs().max()).item()
            if err > 2e-2:
                bad.append(name)
                del fns[name]
        t = benchlib.bench(fns, 100, warmup=3, flush=flush)
        base = t["torch"]["median_ms"]
        print(f"== {m}x{n}x{k} torch {base * 1e3:.1f} us bad={bad}", flush=True)
        for name, v in sorted(t.items(), key=lambda x: x[1]["median_ms"]):
            ms = v["median_ms"]
            print(f"  {name:28s} {ms * 1e3:6.1f} us  vs torch {base / ms:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
